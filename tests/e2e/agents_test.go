package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testenv"
)

// guidePaths are the paths the guide names for an agent to open: the
// backquoted ones that start at a top-level name (and those inside an
// `ls "..."` or `cat "..."`), placeholders and all.
func guidePaths(guide string) []string {
	tops := map[string]bool{"semantic": true, "episodic": true, "working": true, "archive": true, "history": true,
		"by-user": true, "by-tag": true, "by-type": true, "by-date": true, "recent": true, "search": true, "context": true, "meta": true}
	seen := map[string]bool{}
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(guide, -1) {
		s := m[1]
		if q := regexp.MustCompile(`^(?:ls|cat) "([^"]+)"$`).FindStringSubmatch(s); q != nil {
			s = q[1]
		} else if strings.Contains(s, " ") {
			continue
		}
		top, _, _ := strings.Cut(s, "/")
		if tops[top] && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// resolve turns a path with placeholders (<user>, <YYYY>, …) into one
// that exists, taking at each placeholder the first name listed there;
// <path> is a memory with old versions (have).
func resolve(t *testing.T, mnt, p, have string) string {
	t.Helper()
	p = strings.ReplaceAll(p, "<path>", have)
	parts := strings.Split(strings.TrimSuffix(p, "/"), "/")
	cur := ""
	for _, c := range parts {
		if strings.Contains(c, "<") {
			ents, err := os.ReadDir(filepath.Join(mnt, cur))
			if err != nil || len(ents) == 0 {
				t.Errorf("%s: nothing listed at %s to take for %s (%v)", p, cur, c, err)
				return p
			}
			c = ents[0].Name()
		}
		cur = filepath.Join(cur, c)
	}
	return cur
}

// TestGuideNamesPathsThatWork: the guide is in a plain listing of the
// root, written for the mount (its user, read-only, the policy's
// durations), and every path it names opens (after a maintenance pass
// has made the archive's folders).
func TestGuideNamesPathsThatWork(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	ls, err := exec.Command("ls", mnt).Output()
	check(t, err)
	if !strings.Contains(string(ls), "MNEMOFS.md") {
		t.Fatalf("ls of the root: %q, without the guide", ls)
	}
	for rel, text := range map[string]string{
		"semantic/alice.md":                "---\nuser: alice\ntags: [food]\n---\nAlice likes ramen.\n",
		"episodic/sessions/s1/turns.jsonl": "{\"user\": \"alice\", \"speaker\": \"alice\", \"text\": \"book the Zermatt train\"}\n",
		"working/todo.md":                  "pack boots\n",
		"working/gone.md":                  "an old plan\n",
	} {
		check(t, os.MkdirAll(filepath.Dir(p(rel)), 0o755))
		check(t, os.WriteFile(p(rel), []byte(text), 0o644))
	}
	check(t, os.WriteFile(p("semantic/alice.md"), []byte("---\nuser: alice\ntags: [food]\n---\nAlice likes ramen and udon.\n"), 0o644))
	time.Sleep(3100 * time.Millisecond) // older than a scratch file
	check(t, os.Remove(p("working/gone.md")))
	// Long enough for the working memory and the session to be archived,
	// not for the trash to be purged.
	mustRun(t, "maintain", "--data", data, "--now", time.Now().Add(29*24*time.Hour).UTC().Format(time.RFC3339))
	b, err := os.ReadFile(p("MNEMOFS.md"))
	check(t, err)
	guide := string(b)
	paths := guidePaths(guide)
	if len(paths) < 15 {
		t.Fatalf("the guide names only %d paths: %q\n%s", len(paths), paths, guide)
	}
	for _, gp := range paths {
		if strings.Contains(gp, "<YYYY-MM>") {
			continue // archive/sessions/: below
		}
		rp := resolve(t, mnt, gp, "semantic/alice.md")
		if _, err := os.Stat(p(rp)); err != nil {
			t.Errorf("the guide names %s (%s): %v", gp, rp, err)
		}
	}
	t.Logf("the guide (%d lines) names %d paths, each opened", strings.Count(guide, "\n"), len(paths))
	// Sessions leave the active tree later: once they have, their path too.
	mustRun(t, "maintain", "--data", data, "--now", time.Now().Add(200*24*time.Hour).UTC().Format(time.RFC3339))
	for _, gp := range paths {
		if strings.Contains(gp, "<YYYY-MM>") {
			if _, err := os.Stat(p(resolve(t, mnt, gp, ""))); err != nil {
				t.Errorf("the guide names %s: %v", gp, err)
			}
		}
	}
	// Written for the policy: another working_idle shows.
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	check(t, os.WriteFile(pol, []byte("lifecycle:\n  working_idle: 90m\nother:\n  update: in-place\n"), 0o644))
	mustRun(t, "policy", "--data", data, "set", pol)
	b, _ = os.ReadFile(p("MNEMOFS.md"))
	if !strings.Contains(string(b), "untouched for 1h30m") || !strings.Contains(string(b), "folders of your own: no versions") {
		t.Errorf("the guide after a policy change:\n%s", b)
	}
	m.stop(t, os.Interrupt)

	// For a user's mount, and a read-only one.
	startMount(t, data, mnt, "--user", "alice")
	b, _ = os.ReadFile(p("MNEMOFS.md"))
	if !strings.Contains(string(b), "This mount is alice's") {
		t.Errorf("the guide of alice's mount:\n%s", b)
	}
	if r := mustRun(t, "agent-hint", mnt); !strings.Contains(r.stdout, mnt+"/MNEMOFS.md") || !strings.Contains(r.stdout, mnt+"/search/<words>/.results") {
		t.Errorf("agent-hint %s:\n%s", mnt, r.stdout)
	}
	mustRun(t, "unmount", mnt)
	startMount(t, data, mnt, "--read-only")
	b, _ = os.ReadFile(p("MNEMOFS.md"))
	if !strings.Contains(string(b), "read-only") || strings.Contains(string(b), "## Writing") {
		t.Errorf("the guide of a read-only mount:\n%s", b)
	}
}

// TestClaudeCodeMemoryFolder: mnemofs as Claude Code's auto-memory folder
// (~/.claude/projects/<project>/memory/): MEMORY.md, the index it loads
// at every start, and topic files with its front matter, written at the
// root of the mount and edited as Claude Code does (in place, and by an
// atomic replace); grep finds each once, MEMORY.md keeps its versions,
// an unchanged rewrite adds none, search ranks the topic file, and a
// forgotten one leaves grep and search.
func TestClaudeCodeMemoryFolder(t *testing.T) {
	t.Parallel()
	home, data := t.TempDir(), t.TempDir()
	mnt := filepath.Join(home, ".claude/projects/-home-me-shop/memory")
	check(t, os.MkdirAll(mnt, 0o700))
	startMount(t, data, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	write := func(rel, text string) { t.Helper(); check(t, os.WriteFile(p(rel), []byte(text), 0o644)) }
	replace := func(rel, text string) { // write a temp file, rename it over
		t.Helper()
		tmp := p(rel + ".tmp." + fmt.Sprint(time.Now().UnixNano()))
		check(t, os.WriteFile(tmp, []byte(text), 0o644))
		check(t, os.Rename(tmp, p(rel)))
	}
	index := "# Memory index\n\n- [Testing](testing.md) — how this user wants tests\n"
	write("MEMORY.md", index)
	write("testing.md", "---\nname: testing\ndescription: how the user wants tests written\ntype: feedback\n---\nNever mock the database in integration tests: a mocked migration hid a broken schema.\n")
	index += "- [Deploys](deploys.md) — the release checklist\n"
	write("MEMORY.md", index)
	replace("deploys.md", "---\nname: deploys\ndescription: release steps\ntype: project\n---\nReleases go out on Thursdays after the staging smoke test.\n")
	index += "- [Editor](editor.md) — editor settings\n"
	replace("MEMORY.md", index)
	write("editor.md", "---\nname: editor\ntype: user\n---\nThe user prefers tabs over spaces.\n")

	ents, err := os.ReadDir(p("history/MEMORY.md"))
	if err != nil || len(ents) != 2 || ents[0].Name() != "v1.md" {
		t.Fatalf("history/MEMORY.md after three writes: %v %v", ents, err)
	}
	if v, _ := getxattr(p("MEMORY.md"), "user.mnemofs.version"); v != "3" {
		t.Errorf("MEMORY.md is at version %q, want 3", v)
	}
	replace("MEMORY.md", index) // the same index again
	write("MEMORY.md", index)
	if ents, _ := os.ReadDir(p("history/MEMORY.md")); len(ents) != 2 {
		t.Errorf("rewriting MEMORY.md unchanged added versions: %v", ents)
	}
	out, err := exec.Command("grep", "-rn", "mock", mnt).Output()
	if err != nil || strings.Count(string(out), "\n") != 1 || !strings.Contains(string(out), p("testing.md")+":6:") {
		t.Errorf("grep -rn mock over the memory folder: %v\n%s", err, out)
	}
	if _, err := os.Stat(p("by-type/feedback/testing.md")); err != nil {
		t.Errorf("the topic file's type (front matter) in by-type/: %v", err)
	}
	res, err := os.ReadFile(p("search/mocked database tests/.results"))
	if first, _, _ := strings.Cut(strings.SplitN(string(res)+"\n01\t", "\n01\t", 2)[1], "\n"); err != nil || !strings.Contains(first, "/testing.md") {
		t.Errorf("search/mocked database tests/.results: %v\n%s", err, res)
	}
	time.Sleep(3100 * time.Millisecond) // older than a scratch file
	check(t, os.Remove(p("deploys.md")))
	if out, _ := exec.Command("grep", "-rl", "Thursdays", mnt).Output(); len(out) != 0 {
		t.Errorf("grep -rl finds a forgotten memory: %s", out)
	}
	if b, err := os.ReadFile(p("archive/trash/deploys.md")); err != nil || !strings.Contains(string(b), "Thursdays") {
		t.Errorf("archive/trash/deploys.md: %v", err)
	}
	for _, q := range []string{"thursdays staging", "thursdays staging archived:true"} {
		if ents, _ := os.ReadDir(p("search/" + q)); len(ents) != 1 { // .results alone
			t.Errorf("search/%s finds a forgotten memory: %v", q, ents)
		}
	}
	if ents, _ := os.ReadDir(p("search/thursdays staging archived:true path:archive%2Ftrash")); len(ents) != 2 {
		t.Errorf("a search within the trash: %v", ents)
	}
}

// TestCodexMemoriesFolder: mnemofs as Codex's ~/.codex/memories/: its
// files (MEMORY.md, memory_summary.md, raw_memories.md,
// rollout_summaries/), the git repository it keeps there, and its
// consolidation rewriting files whole, often unchanged.
func TestCodexMemoriesFolder(t *testing.T) {
	t.Parallel()
	home, data := t.TempDir(), t.TempDir()
	mnt := filepath.Join(home, ".codex/memories")
	check(t, os.MkdirAll(mnt, 0o700))
	startMount(t, data, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	check(t, os.MkdirAll(p("rollout_summaries"), 0o755))
	files := map[string]string{
		"MEMORY.md":                            "# Handbook\n\n- The repo uses pnpm, not npm.\n",
		"memory_summary.md":                    "v1\n- pnpm; tests with vitest\n",
		"raw_memories.md":                      "## 2026-05-01\n- asked to switch npm scripts to pnpm\n",
		"rollout_summaries/2026-05-01-pnpm.md": "Switched the build to pnpm workspaces.\n",
	}
	for rel, text := range files {
		check(t, os.WriteFile(p(rel), []byte(text), 0o644))
	}
	if _, err := exec.LookPath("git"); err == nil || testenv.Required() { // else the rest holds without it
		git := func(args ...string) {
			t.Helper()
			cmd := exec.Command("git", append([]string{"-c", "user.name=codex", "-c", "user.email=codex@example.com"}, args...)...)
			cmd.Dir = mnt
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		git("init", "-q")
		git("add", "-A")
		git("commit", "-q", "-m", "Initialize Codex git baseline")
		// git's own files are no memories (ignored by default).
		var idx struct{ Memories []map[string]any }
		b, err := os.ReadFile(p("meta/index.json"))
		check(t, err)
		check(t, json.Unmarshal(b, &idx))
		if len(idx.Memories) != len(files) {
			t.Errorf("meta/index.json lists %d memories, want %d", len(idx.Memories), len(files))
		}
		for _, e := range idx.Memories {
			if strings.Contains(fmt.Sprint(e["path"]), ".git/") {
				t.Errorf("meta/index.json lists %v", e["path"])
			}
		}
	}
	// Consolidation: raw_memories.md rebuilt whole, the same; then changed.
	for range 3 {
		check(t, os.WriteFile(p("raw_memories.md"), []byte(files["raw_memories.md"]), 0o644))
	}
	check(t, os.WriteFile(p("raw_memories.md"), []byte(files["raw_memories.md"]+"## 2026-05-02\n- vitest over jest\n"), 0o644))
	ents, _ := os.ReadDir(p("history/raw_memories.md"))
	if len(ents) != 1 {
		t.Errorf("raw_memories.md rebuilt unchanged thrice, then changed: %d versions, want 1", len(ents))
	}
	names := strings.Split(strings.TrimSpace(runOut(t, mnt, "grep", "-rl", "--exclude-dir=.git", "pnpm", ".")), "\n")
	sort.Strings(names)
	if got := strings.Join(names, " "); got != "./MEMORY.md ./memory_summary.md ./raw_memories.md ./rollout_summaries/2026-05-01-pnpm.md" {
		t.Errorf("grep -rl pnpm: %s", got)
	}
	if res, err := os.ReadFile(p("context/pnpm or npm")); err != nil || !strings.Contains(string(res), "pnpm") {
		t.Errorf("context/pnpm or npm: %v\n%s", err, res)
	}
}

// runOut runs a command in dir and returns its output (grep's status 1,
// nothing found, is no error).
func runOut(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

// TestSearchPrefersTabs: 'mnemofs search "prefers tabs"' ranks the note
// that says so above alice.md, whose tag "preferences" shares one stem
// with the query (it used to rank first), in a memory of notes where
// "prefer" is common and tabs are rare.
func TestSearchPrefersTabs(t *testing.T) {
	t.Parallel()
	src, data, mnt := t.TempDir(), t.TempDir(), t.TempDir()
	files := map[string]string{
		"semantic/alice.md":  "---\nuser: alice\ntags: [food, preferences]\nimportance: 0.8\n---\nAlice is vegetarian and likes ramen and udon.\n",
		"episodic/trip.md":   "---\nuser: alice\ntags: [travel]\ncreated: 2026-06-12\n---\nAlice's trip to Zermatt: hiking in June, budget 2000 CHF, train from Zurich.\n",
		"semantic/editor.md": "The user prefers tabs over spaces.\n",
	}
	people := []string{"Bob", "Carol", "Dan", "Erin", "Frank", "Grace"}
	things := []string{"coffee", "tea", "trains", "window seats", "dark mode", "short meetings", "email", "vim", "late flights", "cats"}
	for i := range 300 {
		text := fmt.Sprintf("%s mentioned %s on day %d of the sprint.\n", people[i%len(people)], things[i%len(things)], i)
		if i%5 == 0 {
			text = fmt.Sprintf("%s prefers %s.\n", people[i%len(people)], things[i%len(things)])
		}
		if i%50 == 7 {
			text = fmt.Sprintf("%s keeps too many browser tabs open.\n", people[i%len(people)])
		}
		files[fmt.Sprintf("episodic/notes/%c%c-%s.md", 'a'+i/26%26, 'a'+i%26, strings.ToLower(people[i%len(people)]))] = text
	}
	for rel, text := range files {
		check(t, os.MkdirAll(filepath.Dir(filepath.Join(src, rel)), 0o755))
		check(t, os.WriteFile(filepath.Join(src, rel), []byte(text), 0o644))
	}
	mustRun(t, "import", "--data", data, src)
	startMount(t, data, mnt)
	var rs []struct {
		Path  string  `json:"path"`
		Score float64 `json:"score"`
	}
	r := mustRun(t, "search", "--data", data, "--json", "prefers tabs")
	check(t, json.Unmarshal([]byte(r.stdout), &rs))
	if len(rs) == 0 || rs[0].Path != "/semantic/editor.md" {
		t.Fatalf("mnemofs search 'prefers tabs': %+v", rs)
	}
	for _, x := range rs {
		if x.Path == "/semantic/alice.md" && x.Score >= rs[0].Score {
			t.Errorf("alice.md %.2f, the note %.2f", x.Score, rs[0].Score)
		}
	}
	ents, err := os.ReadDir(filepath.Join(mnt, "search/prefers tabs"))
	check(t, err)
	if len(ents) < 2 || ents[1].Name() != "01-editor.md" {
		t.Errorf("ls search/prefers tabs/: %v", ents)
	}
}
