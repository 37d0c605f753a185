package e2e

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Canaries: words that appear only in memories alice must never see, and
// phrases of those memories (a query echoes its words, never a phrase).
var (
	bobCanaries = []string{"zanzibarbob", "quokkabob", "ownedbybob", "loggedbybob"}
	bobPhrases  = []string{"secret is zanzibarbob", "the quokkabob project", "notes ownedbybob", `"e":"loggedbybob"`}
)

// TestUserIsolation writes memories for alice, bob and nobody, then mounts
// the store for alice and tries every way to reach bob's: the tree, each
// view, search (also scoped and through the CLI), context/, meta/*,
// xattrs, creating or renaming over his names, removing them, export.
func TestUserIsolation(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := func(rel string) string { return filepath.Join(mnt, rel) }

	// As the administrator (no --user): memories naming their users.
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(p("semantic/people"), 0o755))
	check(t, os.WriteFile(p("semantic/people/bob.md"), []byte("---\nuser: bob\ntags: [secret]\n---\nbob's secret is zanzibarbob\n"), 0o644))
	check(t, os.WriteFile(p("semantic/people/pet.md"), []byte("---\nentities: [user:bob, project:zoo]\n---\nthe quokkabob project\n"), 0o644))
	check(t, os.WriteFile(p("semantic/people/alice.md"), []byte("---\nuser: alice\n---\nalice likes tea, not zanzibar\n"), 0o644))
	check(t, os.WriteFile(p("semantic/shared.md"), []byte("office hours are nine to five\n"), 0o644))
	m.stop(t, syscall.SIGTERM)

	// As bob: files with no front matter belong to whoever wrote them.
	m = startMount(t, data, mnt, "--user", "bob")
	check(t, os.WriteFile(p("episodic/bob-notes.md"), []byte("notes ownedbybob\n"), 0o644))
	check(t, os.WriteFile(p("episodic/events.jsonl"), []byte(`{"e":"loggedbybob"}`+"\n"), 0o644))
	if _, err := os.Stat(p("semantic/people/alice.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bob sees alice's memory: %v", err)
	}
	m.stop(t, syscall.SIGTERM)

	m = startMount(t, data, mnt, "--user", "alice")
	hidden := []string{"semantic/people/bob.md", "semantic/people/pet.md", "episodic/bob-notes.md", "episodic/events.jsonl"}
	for _, h := range hidden {
		if _, err := os.Lstat(p(h)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("alice: lstat %s: %v, want ENOENT", h, err)
		}
		if _, err := os.ReadFile(p(h)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("alice: read %s: %v, want ENOENT", h, err)
		}
		if _, err := getxattr(p(h), "user.mnemofs.sha256"); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("alice: getxattr %s: %v, want ENOENT", h, err)
		}
	}
	// Alice's own and the shared memory are there.
	for _, v := range []string{"semantic/people/alice.md", "semantic/shared.md"} {
		if _, err := os.ReadFile(p(v)); err != nil {
			t.Errorf("alice cannot read %s: %v", v, err)
		}
	}

	// No file anywhere under the mount holds a canary: grep over the tree,
	// every view, meta/*, and the searches and context for each canary.
	paths := []string{mnt}
	for _, c := range bobCanaries {
		paths = append(paths, p("search/"+c), p("by-user/alice/search/"+c), p("by-user/bob"),
			p("search/"+url.PathEscape(c+" user:bob")), p("context/"+c))
	}
	grepArgs := []string{"-r", "-l", "-s", "-F"}
	for _, ph := range bobPhrases {
		grepArgs = append(grepArgs, "-e", ph)
	}
	out, _ := exec.Command("grep", append(grepArgs, paths...)...).CombinedOutput()
	if strings.TrimSpace(string(out)) != "" {
		t.Errorf("alice's mount shows bob's memories in:\n%s", out)
	}
	for _, c := range bobCanaries {
		for _, dir := range []string{"search/" + c, "by-user/alice/search/" + c} {
			ents, err := os.ReadDir(p(dir))
			check(t, err)
			if len(ents) != 1 || ents[0].Name() != ".results" {
				t.Errorf("alice: %s lists %v, want only .results", dir, ents)
			}
		}
	}
	// Nor their names, in listings or the index.
	var names []string
	filepath.WalkDir(mnt, func(path string, d fs.DirEntry, err error) error {
		if err == nil {
			names = append(names, strings.TrimPrefix(path, mnt))
		}
		return nil
	})
	idx, err := os.ReadFile(p("meta/index.json"))
	check(t, err)
	all := strings.Join(names, "\n") + string(idx)
	for _, n := range []string{"bob.md", "pet.md", "bob-notes.md", "events.jsonl"} {
		if strings.Contains(all, n) {
			t.Errorf("alice's mount names bob's %s (tree or meta/index.json)", n)
		}
	}
	if ents, err := os.ReadDir(p("by-user")); err == nil {
		for _, e := range ents {
			if e.Name() == "bob" {
				t.Errorf("by-user/bob is listed for alice")
			}
		}
	}

	// Bob's names can be neither reused, replaced, renamed nor removed.
	if err := os.WriteFile(p("semantic/people/bob.md"), []byte("overwritten"), 0o644); !errors.Is(err, syscall.EACCES) {
		t.Errorf("alice writing over bob's name: %v, want EACCES", err)
	}
	check(t, os.WriteFile(p("semantic/mine.md"), []byte("alice's own note\n"), 0o644))
	if err := os.Rename(p("semantic/mine.md"), p("semantic/people/bob.md")); !errors.Is(err, syscall.EACCES) {
		t.Errorf("alice renaming onto bob's name: %v, want EACCES", err)
	}
	if err := os.Remove(p("semantic/people/bob.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("alice removing bob's memory: %v, want ENOENT", err)
	}
	if err := os.Rename(p("semantic/people/bob.md"), p("semantic/stolen.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("alice renaming bob's memory: %v, want ENOENT", err)
	}
	if err := os.Link(p("semantic/people/bob.md"), p("semantic/stolen.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("alice linking bob's memory: %v, want ENOENT", err)
	}

	// The CLI goes through alice's mount: search and export see her view.
	for _, c := range bobCanaries {
		r := mustRun(t, "search", "--data", data, "--json", c)
		if strings.Contains(r.stdout, "bob") {
			t.Errorf("mnemofs search %s through alice's mount: %s", c, r.stdout)
		}
	}
	// Another user's search through alice's mount is refused, not
	// answered with nothing.
	if r := runMnemofs(t, "search", "--data", data, "--user", "bob", "zanzibarbob"); r.code == 0 || !strings.Contains(r.stderr, "held for user alice") {
		t.Errorf("mnemofs search --user bob through alice's mount: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
	exp := t.TempDir()
	mustRun(t, "export", "--data", data, filepath.Join(exp, "out"))
	out, _ = exec.Command("grep", append(grepArgs, exp)...).CombinedOutput()
	if strings.TrimSpace(string(out)) != "" {
		t.Errorf("export through alice's mount holds bob's words:\n%s", out)
	}
	sum, err := getxattr(p("semantic/mine.md"), "user.mnemofs.users")
	if err != nil || !strings.Contains(string(sum), "alice") {
		t.Errorf("alice's new file: user.mnemofs.users %q (%v), want alice", sum, err)
	}
	m.stop(t, syscall.SIGTERM)

	// Back as bob: alice's new file is hers alone, bob's are all there.
	m = startMount(t, data, mnt, "--user", "bob")
	if _, err := os.Stat(p("semantic/mine.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bob sees alice's new file: %v", err)
	}
	for _, h := range hidden {
		if _, err := os.ReadFile(p(h)); err != nil {
			t.Errorf("bob cannot read his %s: %v", h, err)
		}
	}
	m.stop(t, syscall.SIGTERM)
}

// TestAllowOtherEnforcesModes: with --allow-other another uid gets POSIX
// permission checks (default_permissions).
func TestAllowOtherEnforcesModes(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	data, base := t.TempDir(), t.TempDir()
	mnt := filepath.Join(base, "mnt")
	check(t, os.Mkdir(mnt, 0o755))
	for _, d := range []string{base, filepath.Dir(base)} {
		check(t, os.Chmod(d, 0o755)) // let the other user reach the mount
	}
	m := startMount(t, data, mnt, "--allow-other", "--user", "alice")
	check(t, os.WriteFile(filepath.Join(mnt, "semantic/private.md"), []byte("private"), 0o600))
	check(t, os.WriteFile(filepath.Join(mnt, "semantic/public.md"), []byte("public"), 0o644))
	as := func(args ...string) error {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return cmd.Run()
	}
	if err := as("cat", filepath.Join(mnt, "semantic/public.md")); err != nil {
		t.Errorf("nobody cannot read a 0644 file: %v", err)
	}
	if err := as("cat", filepath.Join(mnt, "semantic/private.md")); err == nil {
		t.Errorf("nobody read a 0600 file of root's")
	}
	if err := as("touch", filepath.Join(mnt, "semantic/new.md")); err == nil {
		t.Errorf("nobody created a file in root's 0755 directory")
	}
	m.stop(t, syscall.SIGTERM)
}
