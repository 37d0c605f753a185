package fusefs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// writeMemories writes a small store the way an agent would.
func writeMemories(t *testing.T, tf *testFS) {
	t.Helper()
	files := map[string]string{
		"semantic/alice/food.md":    "---\nuser: alice\ntags: [food]\ncreated: 2024-05-01\n---\nAlice is vegetarian and loves ramen noodles.\n",
		"semantic/bob/food.md":      "---\nuser: bob\ntags: [food]\ncreated: 2024-05-02\n---\nBob eats steak and ramen every Friday.\n",
		"episodic/s1/turn1.md":      "---\nuser: alice\ncreated: 2024-06-10\n---\nWe talked about hiking in the Alps.\n",
		"episodic/s1/turn2.md":      "---\nuser: alice\ncreated: 2024-06-10\ntype: chat\n---\nShe plans a trip to Zermatt next summer.\n",
		"working/plan.md":           "---\nuser: alice\n---\nTODO: book the train to Zermatt.\n",
		"semantic/zh/note.md":       "---\nuser: carol\n---\n我喜欢吃拉面和寿司。\n",
		"semantic/paths/a-b.md":     "---\nuser: dave\n---\nThe path a/b/c is configured in settings.\n",
		"episodic/log/events.jsonl": "{\"e\": \"login\"}\n{\"e\": \"bought a kayak\"}\n{\"e\": \"logout\"}\n",
	}
	for p, c := range files {
		must(t, os.MkdirAll(filepath.Dir(tf.path(p)), 0o755))
		must(t, os.WriteFile(tf.path(p), []byte(c), 0o644))
	}
}

func lsNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	must(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestViewsMirrorTheTree(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	writeMemories(t, tf)
	if got := strings.Join(lsNames(t, tf.path("by-user")), " "); got != "alice bob carol dave" {
		t.Fatalf("by-user lists %q", got)
	}
	if got := strings.Join(lsNames(t, tf.path("by-user/alice")), " "); got != "episodic semantic working" {
		t.Fatalf("by-user/alice lists %q", got)
	}
	if fi, err := os.Stat(tf.path("by-user/alice/search")); err != nil || !fi.IsDir() {
		t.Fatalf("by-user/alice/search by name: %v", err)
	}
	// find over a view sees exactly alice's memories, at their real paths.
	out, err := exec.Command("find", tf.path("by-user/alice"), "-path", "*/search", "-prune", "-o", "-type", "f", "-print").Output()
	must(t, err)
	var found []string
	for _, l := range strings.Fields(string(out)) {
		found = append(found, strings.TrimPrefix(l, tf.path("by-user/alice")+"/"))
	}
	sort.Strings(found)
	if got := strings.Join(found, " "); got != "episodic/s1/turn1.md episodic/s1/turn2.md semantic/alice/food.md working/plan.md" {
		t.Fatalf("find lists %q", got)
	}
	// Same inode and bytes as the real file; grep -r works on the view.
	if ino(t, tf.path("by-user/alice/semantic/alice/food.md")) != ino(t, tf.path("semantic/alice/food.md")) {
		t.Fatal("view file has another inode")
	}
	out, err = exec.Command("grep", "-rl", "ramen", tf.path("by-user/bob")).Output()
	must(t, err)
	if strings.TrimSpace(string(out)) != tf.path("by-user/bob/semantic/bob/food.md") {
		t.Fatalf("grep -rl: %q", out)
	}
	if got := strings.Join(lsNames(t, tf.path("by-tag/food/semantic")), " "); got != "alice bob" {
		t.Fatalf("by-tag lists %q", got)
	}
	// A file at the root is in no tree: it gives by-type/ no type.
	must(t, os.WriteFile(tf.path("top.md"), []byte("at the root\n"), 0o644))
	if got := strings.Join(lsNames(t, tf.path("by-type")), " "); got != "chat episodic semantic working" {
		t.Fatalf("by-type lists %q", got)
	}
	if got := read(t, tf.path("by-date/2024/05/01/semantic/alice/food.md")); !strings.Contains(got, "vegetarian") {
		t.Fatalf("by-date file %q", got)
	}
	if len(lsNames(t, tf.path("recent/semantic"))) == 0 {
		t.Fatal("recent/ is empty")
	}
	// Writing through a view writes the memory.
	must(t, os.WriteFile(tf.path("by-user/alice/working/plan.md"), []byte("---\nuser: alice\n---\nDone.\n"), 0o644))
	if got := read(t, tf.path("working/plan.md")); !strings.Contains(got, "Done.") {
		t.Fatalf("write through view: %q", got)
	}
	// Names cannot be made, moved or removed in views.
	wantErrno(t, os.WriteFile(tf.path("by-user/alice/working/new.md"), nil, 0o644), syscall.EROFS)
	wantErrno(t, os.Mkdir(tf.path("by-user/alice/working/d"), 0o755), syscall.EROFS)
	wantErrno(t, os.Remove(tf.path("by-user/alice/working/plan.md")), syscall.EROFS)
	wantErrno(t, os.Rename(tf.path("by-user/alice/working/plan.md"), tf.path("by-user/alice/working/x.md")), syscall.EROFS)
	wantErrno(t, os.Rename(tf.path("working/plan.md"), tf.path("by-user/alice/working/x.md")), syscall.EROFS)
	wantErrno(t, syscall.Rmdir(tf.path("by-user/alice/working")), syscall.EROFS)
	// Memories in the archive stay out of views.
	must(t, os.MkdirAll(tf.path("archive/old"), 0o755))
	must(t, os.Rename(tf.path("semantic/bob/food.md"), tf.path("archive/old/food.md")))
	if _, err := os.Stat(tf.path("by-user/bob")); !os.IsNotExist(err) {
		t.Fatalf("archived memory still in by-user: %v", err)
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	writeMemories(t, tf)
	names := lsNames(t, tf.path("search/ramen"))
	if len(names) != 3 || names[0] != ".results" || !strings.HasPrefix(names[1], "01-food.md") {
		t.Fatalf("search/ramen lists %q", names)
	}
	if got := read(t, tf.path("search/ramen/"+names[1])); !strings.Contains(got, "ramen") {
		t.Fatalf("result content %q", got)
	}
	res := read(t, tf.path("search/ramen/.results"))
	if !strings.Contains(res, "01\t") || !strings.Contains(res, "/semantic/") || !strings.Contains(res, "ramen") {
		t.Fatalf(".results:\n%s", res)
	}
	// Filters and scope.
	if got := lsNames(t, tf.path("search/ramen user:bob")); len(got) != 2 || !strings.Contains(read(t, tf.path("search/ramen user:bob/"+got[1])), "Bob") {
		t.Fatalf("filtered %q", got)
	}
	if got := lsNames(t, tf.path("by-user/alice/search/ramen")); len(got) != 2 || !strings.Contains(read(t, tf.path("by-user/alice/search/ramen/"+got[1])), "Alice") {
		t.Fatalf("scoped %q", got)
	}
	if got := lsNames(t, tf.path("search/zermatt k:1")); len(got) != 2 {
		t.Fatalf("k:1 gave %q", got)
	}
	if got := lsNames(t, tf.path("search/zermatt path:working")); len(got) != 2 || got[1] != "01-plan.md" {
		t.Fatalf("path filter %q", got)
	}
	if got := lsNames(t, tf.path("search/hiking after:2024-06-01 before:2024-07-01")); len(got) < 2 || got[1] != "01-turn1.md" {
		t.Fatalf("date filter %q", got)
	}
	// Chinese, percent-encoded slash, hostile names.
	if got := lsNames(t, tf.path("search/拉面")); len(got) != 2 || got[1] != "01-note.md" {
		t.Fatalf("chinese %q", got)
	}
	if got := lsNames(t, tf.path("search/a%2Fb%2Fc configured")); len(got) < 2 || got[1] != "01-a-b.md" {
		t.Fatalf("%%2F query %q", got)
	}
	if got := lsNames(t, tf.path("search/..%2F..%2Fetc%2Fpasswd")); len(got) != 1 {
		t.Fatalf("hostile query %q", got)
	}
	wantErrno(t, os.WriteFile(tf.path("search/ramen/x"), nil, 0o644), syscall.EROFS)
	wantErrno(t, os.Remove(tf.path("search/ramen/"+names[1])), syscall.EROFS)
	_, err := os.Stat(tf.path("search/bad k:zero"))
	wantErrno(t, err, syscall.EINVAL)
	// JSONL lines are searched one by one.
	if res := read(t, tf.path("search/kayak/.results")); !strings.Contains(res, "events.jsonl:2") || !strings.Contains(res, "bought a kayak") {
		t.Fatalf("jsonl results:\n%s", res)
	}
	// Appended lines are found at once, with their line numbers.
	f, err := os.OpenFile(tf.path("episodic/log/events.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString("{\"e\": \"sold the canoe\"}\n")
	must(t, err)
	must(t, f.Close())
	if res := read(t, tf.path("search/canoe/.results")); !strings.Contains(res, "events.jsonl:4") {
		t.Fatalf("appended line:\n%s", res)
	}
	if res := read(t, tf.path("search/kayak/.results")); !strings.Contains(res, "events.jsonl:2") {
		t.Fatalf("old line lost after append:\n%s", res)
	}
	// A file written and closed is found at once; a removed one is gone.
	must(t, os.WriteFile(tf.path("working/fresh.md"), []byte("platypus sighting"), 0o644))
	if got := lsNames(t, tf.path("search/platypus")); len(got) != 2 || got[1] != "01-fresh.md" {
		t.Fatalf("fresh file: %q", got)
	}
	must(t, os.WriteFile(tf.path("working/fresh.md"), []byte("nothing here"), 0o644))
	if got := lsNames(t, tf.path("search/platypus")); len(got) != 1 {
		t.Fatalf("stale hit after rewrite: %q", got)
	}
}

func TestContext(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	writeMemories(t, tf)
	c := read(t, tf.path("context/zermatt trip"))
	if !strings.Contains(c, "## Relevant memories") || !strings.Contains(c, "/episodic/s1/turn2.md") || !strings.Contains(c, "/working/plan.md") {
		t.Fatalf("context:\n%s", c)
	}
	// The working note matches the query: it is under Relevant memories,
	// and no empty Working memory heading follows.
	if strings.HasSuffix(strings.TrimSpace(c), "## Working memory (newest first)") {
		t.Fatalf("an empty Working memory heading:\n%s", c)
	}
	w := read(t, tf.path("context/alps hiking"))
	if !strings.Contains(w, "## Working memory (newest first)\n\n### /working/plan.md") {
		t.Fatalf("a working note that does not match is not under Working memory:\n%s", w)
	}
	small := read(t, tf.path("context/zermatt budget:40"))
	if len(small) > 40*4+64 {
		t.Fatalf("budget:40 gave %d bytes", len(small))
	}
	wantErrno(t, os.WriteFile(tf.path("context/x"), []byte("y"), 0o644), syscall.EROFS)
}

// TestCachedViewEntriesFollowChanges: view entries are cached like the
// tree's, and a memory that leaves a view leaves it at once: its cached
// entry and the emptied view directories are dropped before the write
// returns.
func TestCachedViewEntriesFollowChanges(t *testing.T) {
	// Not parallel: once, with the package's other tests beside it on a
	// loaded CI run, the entry was still there after the write returned
	// (round unknown); not yet explained, so it runs alone as it always did.
	tf := testMount(t)
	p := tf.path("semantic/tagged.md")
	must(t, os.WriteFile(p, []byte("---\ntags: [fleeting]\n---\ntext\n"), 0o644))
	for i := 0; i < 200; i++ {
		v := tf.path("by-tag/fleeting/semantic/tagged.md")
		if _, err := os.Lstat(v); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		must(t, os.WriteFile(p, []byte("---\ntags: [other]\n---\ntext\n"), 0o644))
		_, err := os.Lstat(v)
		wantErrno(t, err, syscall.ENOENT)
		_, err = os.Lstat(tf.path("by-tag/fleeting"))
		wantErrno(t, err, syscall.ENOENT)
		must(t, os.WriteFile(p, []byte("---\ntags: [fleeting]\n---\ntext\n"), 0o644))
	}
}

// TestTypeFollowsTheTree: a memory whose type is its tree's (no type key)
// moved to another tree, alone or with its directory, is listed under
// its new type in by-type/ and found by type: with it, not the old one.
func TestTypeFollowsTheTree(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	must(t, os.MkdirAll(tf.path("working/d"), 0o755))
	must(t, os.MkdirAll(tf.path("semantic"), 0o755))
	must(t, os.WriteFile(tf.path("working/tm.md"), []byte("typemove test\n"), 0o644))
	must(t, os.WriteFile(tf.path("working/d/f.md"), []byte("typemove in a directory\n"), 0o644))
	if _, err := os.Stat(tf.path("by-type/working/working/tm.md")); err != nil {
		t.Fatalf("before the move: %v", err)
	}
	must(t, os.Rename(tf.path("working/tm.md"), tf.path("semantic/tm.md")))
	must(t, os.Rename(tf.path("working/d"), tf.path("semantic/d")))
	for _, p := range []string{"by-type/semantic/semantic/tm.md", "by-type/semantic/semantic/d/f.md"} {
		if _, err := os.Stat(tf.path(p)); err != nil {
			t.Errorf("after the move: %s: %v", p, err)
		}
	}
	if ents, err := os.ReadDir(tf.path("by-type/working")); err == nil && len(ents) > 0 && !(len(ents) == 1 && ents[0].Name() == "search") {
		t.Errorf("by-type/working still lists %v", ents)
	}
	if names := lsNames(t, tf.path("search/typemove type:working")); len(names) > 1 {
		t.Errorf("search/typemove type:working lists %q", names)
	}
}

// TestByDateLogDays: a log whose lines name several days is listed under
// each of those days in by-date/, and under no day between or around
// them that only another memory has.
func TestByDateLogDays(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	must(t, os.MkdirAll(tf.path("working/r"), 0o755))
	must(t, os.WriteFile(tf.path("working/r/x.jsonl"), []byte(`{"created":"2021-01-01","text":"a"}`+"\n"+`{"created":"2021-01-05","text":"b"}`+"\n"), 0o644))
	must(t, os.WriteFile(tf.path("working/r/y.md"), []byte("---\ncreated: 2021-07-07\n---\nz\n"), 0o644))
	must(t, os.WriteFile(tf.path("working/r/w.md"), []byte("---\ncreated: 2021-01-03\n---\nw\n"), 0o644))
	for day, want := range map[string]string{"2021/01/01": "x.jsonl", "2021/01/05": "x.jsonl", "2021/07/07": "y.md", "2021/01/03": "w.md"} {
		var got []string
		for _, n := range lsNames(t, tf.path("by-date/"+day+"/working/r")) {
			if n != "search" {
				got = append(got, n)
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("by-date/%s/working/r lists %q, want %q", day, got, want)
		}
	}
	// A year and a month hold search/ too, over their days' memories.
	for dir, want := range map[string]string{"by-date/2021/search/z": "01-y.md", "by-date/2021/07/search/z": "01-y.md", "by-date/2021/01/search/z": ""} {
		var got []string
		for _, n := range lsNames(t, tf.path(dir)) {
			if n != ".results" {
				got = append(got, n)
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s lists %q, want %q", dir, got, want)
		}
	}
	if names := lsNames(t, tf.path("by-date/2021")); slices.Contains(names, "search") {
		t.Errorf("by-date/2021 lists %q: search/ opens by name, unlisted", names)
	}
}

// TestSearchAfterALinkIsRemoved: a search asked again after one of a
// memory's hard links is removed names it by the link that is left.
func TestSearchAfterALinkIsRemoved(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	must(t, os.MkdirAll(tf.path("semantic"), 0o755))
	must(t, os.MkdirAll(tf.path("working"), 0o755))
	must(t, os.WriteFile(tf.path("semantic/hl-a.md"), []byte("hlword unique\n"), 0o644))
	must(t, os.Link(tf.path("semantic/hl-a.md"), tf.path("working/hl-b.md")))
	if res := read(t, tf.path("search/hlword/.results")); !strings.Contains(res, "/semantic/hl-a.md") {
		t.Fatalf("before: %q", res)
	}
	must(t, os.Remove(tf.path("semantic/hl-a.md")))
	if res := read(t, tf.path("search/hlword/.results")); strings.Contains(res, "hl-a.md") || !strings.Contains(res, "/working/hl-b.md") {
		t.Errorf("after removing the first link: %q", res)
	}
}
