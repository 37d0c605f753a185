package fusefs

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// walkFiles lists the regular files a walk of dir meets, relative to it.
func walkFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	}))
	sort.Strings(out)
	return out
}

// walkTree writes memories that every generated tree shows: users, tags,
// dates, a version, a log, and one removed to the trash.
func walkTree(t *testing.T, tf *testFS) {
	t.Helper()
	for p, c := range map[string]string{
		"semantic/alice.md":         "---\nuser: alice\ntags: [food]\ncreated: 2026-06-12\n---\nAlice likes ramen.\n",
		"episodic/trip.md":          "---\nuser: bob\ntags: [travel]\n---\nBob's trip to Zermatt.\n",
		"episodic/s1/turns.jsonl":   "{\"user\": \"alice\", \"text\": \"book the train\"}\n",
		"working/todo.md":           "pack boots\n",
		"MEMORY.md":                 "- [Alice](semantic/alice.md): food\n",
		"notes/gone.md":             "forgotten words\n",
		"semantic/projects/beta.md": "---\ntags: [work]\n---\nBeta ships in May.\n",
	} {
		must(t, os.MkdirAll(filepath.Dir(tf.path(p)), 0o755))
		must(t, os.WriteFile(tf.path(p), []byte(c), 0o644))
	}
	must(t, os.WriteFile(tf.path("semantic/alice.md"), []byte("---\nuser: alice\ntags: [food]\ncreated: 2026-06-12\n---\nAlice likes ramen and udon.\n"), 0o644))
	must(t, os.Remove(tf.path("notes/gone.md")))
}

// TestWalkMeetsEachMemoryOnce: a walk of the root (what grep -r, find, du,
// tar and rsync do) meets every memory once, the guide, and nothing from
// the trash or the generated trees; each of those still opens by its path.
func TestWalkMeetsEachMemoryOnce(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	walkTree(t, tf)
	want := []string{"MEMORY.md", views.GuideName, "episodic/s1/turns.jsonl", "episodic/trip.md", "semantic/alice.md", "semantic/projects/beta.md", "working/todo.md"}
	if got := walkFiles(t, tf.dir); !slices.Equal(got, want) {
		t.Fatalf("a walk of the root meets\n%q\nwant\n%q", got, want)
	}
	if names := lsNames(t, tf.path("archive")); slices.Contains(names, "trash") {
		t.Fatalf("archive/ lists %q: the trash is forgotten memories, reached by name only", names)
	}
	out, err := exec.Command("grep", "-rl", "forgotten", tf.dir).CombinedOutput()
	if err == nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("grep -rl of the root finds the trash: %q (%v)", out, err)
	}
	// By path, each generated tree answers.
	for p, want := range map[string]string{
		"archive/trash/notes/gone.md":            "forgotten words\n",
		"history/semantic/alice.md/v1.md":        "---\nuser: alice\ntags: [food]\ncreated: 2026-06-12\n---\nAlice likes ramen.\n",
		"by-user/alice/semantic/alice.md":        "",
		"by-tag/travel/episodic/trip.md":         "",
		"by-type/working/working/todo.md":        "",
		"by-date/2026/06/12/semantic/alice.md":   "",
		"recent/working/todo.md":                 "",
		"search/zermatt/01-trip.md":              "",
		"search/zermatt/.results":                "",
		"by-user/alice/search/ramen/01-alice.md": "",
		"context/zermatt":                        "",
		"meta/index.json":                        "",
		"meta/policy.yaml":                       "",
	} {
		b, err := os.ReadFile(tf.path(p))
		if err != nil {
			t.Errorf("%s by path: %v", p, err)
			continue
		}
		if want != "" && string(b) != want {
			t.Errorf("%s holds %q, want %q", p, b, want)
		}
	}
	// Not even in a view: a walk of by-user/alice meets her memories once.
	if got := walkFiles(t, tf.path("by-user/alice")); !slices.Equal(got, []string{"episodic/s1/turns.jsonl", "semantic/alice.md"}) {
		t.Errorf("a walk of by-user/alice meets %q", got)
	}
	// The root's own files at a glance: the guide, read-only.
	if b, err := os.ReadFile(tf.path(views.GuideName)); err != nil || !strings.Contains(string(b), "search/") {
		t.Errorf("%s: %v %q", views.GuideName, err, b)
	}
	wantErrno(t, os.WriteFile(tf.path(views.GuideName), []byte("x"), 0o644), syscall.EROFS)
	wantErrno(t, os.Remove(tf.path(views.GuideName)), syscall.EROFS)
	wantErrno(t, os.Rename(tf.path("MEMORY.md"), tf.path(views.GuideName)), syscall.EEXIST)
}

// TestListGenerated: --list-generated lists the generated trees at the
// root, search/ in the views and the trash in archive/, as before.
func TestListGenerated(t *testing.T) {
	t.Parallel()
	tf := mountWith(t, t.TempDir(), store.Options{ScratchAge: -1}, Config{ListGenerated: true})
	walkTree(t, tf)
	if got := strings.Join(lsNames(t, tf.dir), " "); got != "MEMORY.md "+views.GuideName+" archive by-date by-tag by-type by-user context episodic history meta notes recent search semantic working" {
		t.Fatalf("root lists %q", got)
	}
	if names := lsNames(t, tf.path("archive")); !slices.Contains(names, "trash") {
		t.Errorf("archive/ lists %q, without the trash", names)
	}
	if names := lsNames(t, tf.path("by-user/alice")); !slices.Contains(names, "search") {
		t.Errorf("by-user/alice lists %q, without search", names)
	}
}

// TestSearchDirsSayWhatTheyDo: search/ and context/ list their help, and
// mkdir of a query makes it (the kernel would answer EEXIST to a mkdir of
// a name its lookup finds).
func TestSearchDirsSayWhatTheyDo(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	walkTree(t, tf)
	for _, d := range []string{"search", "context", "by-user/alice/search"} {
		if got := strings.Join(lsNames(t, tf.path(d)), " "); got != views.HelpName {
			t.Errorf("%s lists %q, want %s", d, got, views.HelpName)
		}
		if b, err := os.ReadFile(tf.path(d + "/" + views.HelpName)); err != nil || !strings.Contains(string(b), ".results") {
			t.Errorf("%s/%s: %v %q", d, views.HelpName, err, b)
		}
	}
	// From another process, as an agent's shell makes it.
	if out, err := exec.Command("mkdir", tf.path("search/bob trip")).CombinedOutput(); err != nil {
		t.Fatalf("mkdir search/bob trip: %v %s", err, out)
	}
	if got := strings.Join(lsNames(t, tf.path("search/bob trip")), " "); got != ".results 01-trip.md" {
		t.Errorf("search/bob trip lists %q after its mkdir", got)
	}
	must(t, os.Mkdir(tf.path("search/ramen k:1"), 0o755))
	if out, err := exec.Command("mkdir", "-p", tf.path("search/ramen")).CombinedOutput(); err != nil {
		t.Errorf("mkdir -p search/ramen: %v %s", err, out)
	}
	wantErrno(t, os.Mkdir(tf.path("search/a user:"), 0o755), syscall.EINVAL)
}
