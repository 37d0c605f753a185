package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/internal/testenv"
	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// The documentation runs. Every sh block that follows a
// "<!-- walkthrough -->" line in README.md or a page of docs/ is part of
// that page's walkthrough: the blocks of a page run top to bottom, as
// written, in one bash -euo pipefail, against a real mount of a fresh
// store at ~/memory (HOME is the test's), with MNEMOFS_DATA its data
// directory, ./mnemofs and mnemofs on PATH the binary under test.

// docPage is how a page's walkthrough runs.
type docPage struct {
	path   string
	tools  []string // programs it runs beyond the shell's own
	mount  bool     // a store mounted at ~/memory before it runs
	etcd   bool     // ETCD set to the endpoints of a test etcd server
	inRepo bool     // run in the repository's root, not a scratch directory
	blocks int      // how many walkthrough blocks it has, at least
	want   []string // what its output must hold
}

var docPages = []docPage{
	{path: "README.md", tools: []string{"getfattr", "sed", "grep"}, mount: true, blocks: 2,
		want: []string{"Alice is vegetarian and likes ramen.", "01-alice.md", "user.mnemofs.lineage", "/episodic/trip.md", "trip.md"}},
	{path: "docs/memories.md", tools: []string{"getfattr", "setfattr"}, mount: true, blocks: 3,
		want: []string{"user.mnemofs.type=\"semantic\"", "front matter", "turns.jsonl", "notes.md", "kept.txt"}},
	{path: "docs/views-and-search.md", mount: true, blocks: 2,
		want: []string{"02-kayak.md", "turns.jsonl#L2", "Read-only file system", "Relevant memories"}},
	{path: "docs/policy.md", mount: true, blocks: 3,
		want: []string{"versioned", "v1.md", "second draft", "[redacted:email]", "would "}},
	{path: "docs/team.md", etcd: true, blocks: 1,
		want: []string{"written on host a"}},
	{path: "docs/operations.md", mount: true, blocks: 2,
		want: []string{"- badger: v", "backed up", "consistent", "mounted at", "a restored memory", "<!DOCTYPE html"}},
	{path: "docs/design.md", inRepo: true, blocks: 1,
		want: []string{"github.com/mnemofs/mnemofs/store", "PrefixInode"}},
}

// walkthrough returns the walkthrough blocks of the page at path.
func walkthrough(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	check(t, err)
	var blocks []string
	parts := strings.Split(string(b), "<!-- walkthrough -->\n```sh\n")
	for _, p := range parts[1:] {
		block, _, ok := strings.Cut(p, "\n```")
		if !ok {
			t.Fatalf("%s: a walkthrough block is not closed", path)
		}
		blocks = append(blocks, block)
	}
	return blocks
}

// runPage runs one page's walkthrough.
func runPage(t *testing.T, pg docPage) {
	testenv.Tools(t, append([]string{"bash"}, pg.tools...)...)
	blocks := walkthrough(t, pg.path)
	if len(blocks) < pg.blocks {
		t.Fatalf("%s has %d walkthrough blocks, want %d", pg.path, len(blocks), pg.blocks)
	}
	script := strings.Join(blocks, "\n") + "\n"
	home, data, work, bin := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	check(t, os.Symlink(mnemofsBin, filepath.Join(work, "mnemofs")))
	check(t, os.Symlink(mnemofsBin, filepath.Join(bin, "mnemofs")))
	env := append(os.Environ(), "HOME="+home, "MNEMOFS_DATA="+data, "PATH="+bin+":"+os.Getenv("PATH"))
	if pg.inRepo {
		// Go's caches stay where they are, not under the new HOME.
		out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE", "GOPATH").Output()
		check(t, err)
		v := strings.Split(strings.TrimSpace(string(out)), "\n")
		env = append(env, "GOMODCACHE="+v[0], "GOCACHE="+v[1], "GOPATH="+v[2], "GOFLAGS=-mod=readonly", "GOPROXY=off")
	}
	if pg.etcd {
		eps := testetcd.Shared(t)
		var hosts []string
		for _, e := range eps {
			hosts = append(hosts, strings.TrimPrefix(e, "http://"))
		}
		env = append(env, "ETCD="+strings.Join(hosts, ","), "MNEMOFS_TEST_PREFIX="+strings.ReplaceAll(t.Name(), "/", "-"))
	}
	// A walkthrough that failed half way may leave its own mounts under
	// HOME (mount --background): stop them.
	t.Cleanup(func() {
		b, _ := os.ReadFile("/proc/self/mounts")
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 2 && strings.HasPrefix(f[1], home+"/") && f[1] != filepath.Join(home, "memory") {
				exec.Command(mnemofsBin, "unmount", f[1]).Run()
				if isMounted(f[1]) {
					lazyUnmount(f[1])
				}
			}
		}
	})
	var m *mountProc
	if pg.mount {
		mnt := filepath.Join(home, "memory")
		check(t, os.Mkdir(mnt, 0o755))
		m = startMount(t, data, mnt)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = work
	if pg.inRepo {
		cmd.Dir = filepath.Join("..", "..")
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walkthrough of %s failed: %v\n%s\n--- script:\n%s", pg.path, err, out, script)
	}
	t.Logf("the walkthrough of %s:\n%s", pg.path, out)
	for _, want := range pg.want {
		if !strings.Contains(string(out), want) {
			t.Errorf("the walkthrough of %s printed no %q:\n%s", pg.path, want, out)
		}
	}
	if m != nil {
		m.stop(t, syscall.SIGTERM)
	}
	if pg.path == "README.md" && strings.Contains(string(out), "\n 2 ") {
		t.Errorf("'search zermatt k:1' printed a second result:\n%s", out)
	}
}

// TestReadmeWalkthrough runs the README's walkthrough.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	runPage(t, docPages[0])
}

// TestDocsWalkthroughs runs the walkthrough of every page of docs/ that
// this project writes (the others are their owners'), and checks that
// every page of docs/ has one.
func TestDocsWalkthroughs(t *testing.T) {
	t.Parallel()
	for _, pg := range docPages[1:] {
		t.Run(strings.TrimSuffix(filepath.Base(pg.path), ".md"), func(t *testing.T) {
			t.Parallel()
			runPage(t, pg)
		})
	}
}

// TestDocsAreCovered: every page of docs/ is run by TestDocsWalkthroughs,
// or is one of the pages other parts of the project own, listed here.
func TestDocsAreCovered(t *testing.T) {
	t.Parallel()
	others := map[string]bool{"docs/mcp.md": true, "docs/agents.md": true, "docs/posix.md": true, "docs/consistency.md": true}
	run := map[string]bool{}
	for _, pg := range docPages {
		run[pg.path] = true
	}
	pages, err := filepath.Glob("../../docs/*.md")
	check(t, err)
	for _, p := range pages {
		rel := "docs/" + filepath.Base(p)
		if !run[rel] && !others[rel] {
			t.Errorf("%s has no walkthrough that a test runs", rel)
		}
	}
}

// TestCIRunsTheReadmeCommand: .ci/run runs the README's test command, as
// written (the second line of the README's first sh block).
func TestCIRunsTheReadmeCommand(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	check(t, err)
	m := regexp.MustCompile("(?s)```sh\n([^\n]*)\n([^\n]*)\n```").FindSubmatch(b)
	if m == nil {
		t.Fatal("the README does not open with a block of its two commands")
	}
	ci, err := os.ReadFile("../../.ci/run")
	check(t, err)
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(string(m[2])) + `$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command %q", m[2])
	}
}

// TestNoSpecCitations: no file of the repository cites a spec by section
// (a document users cannot read); the rules are written out, or a page of
// docs/ is named.
func TestNoSpecCitations(t *testing.T) {
	t.Parallel()
	needle := "SPEC " + "\u00a7"
	err := filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "out") {
			return filepath.SkipDir
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".yaml", ".yml", ".sh", ".py", ".service":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), needle) {
			t.Errorf("%s cites %q", p, needle)
		}
		return nil
	})
	check(t, err)
}

// TestBenchmarksPage: BENCHMARKS.md has a section for every benchmark
// script, headed by its name, stays under 600 lines, and names no commit
// (its history is git's).
func TestBenchmarksPage(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../BENCHMARKS.md")
	check(t, err)
	if n := strings.Count(string(b), "\n"); n >= 600 {
		t.Errorf("BENCHMARKS.md has %d lines, want under 600", n)
	}
	scripts, err := filepath.Glob("../../scripts/bench-*.sh")
	check(t, err)
	for _, s := range scripts {
		name := "scripts/" + filepath.Base(s)
		if !regexp.MustCompile("(?m)^## .*`" + regexp.QuoteMeta(name) + "`").Match(b) {
			t.Errorf("BENCHMARKS.md has no section headed by %s", name)
		}
	}
	if h := regexp.MustCompile(`\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b`).FindAll(b, -1); len(h) > 0 {
		for _, x := range h {
			if len(x) >= 7 {
				t.Errorf("BENCHMARKS.md names what looks like a commit: %s", x)
			}
		}
	}
}
