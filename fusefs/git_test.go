package fusefs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testenv"
	"github.com/mnemofs/mnemofs/store"
)

// TestGitInTheTree: a git repository inside semantic/ — init, add, commit,
// checkout of an older revision, gc. git's own tree (.git/) is no memory:
// nothing of it in search, views, meta/index.json, meta/stats.json or the
// trash. The checkout is a save: the memory's history grows by one.
func TestGitInTheTree(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "git")
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	tf := mountAt(t, t.TempDir(), store.Options{Now: func() time.Time { return time.Unix(0, now.Add(int64(time.Millisecond))) }, ScratchAge: -1})
	repo := tf.path("semantic/proj")
	must(t, os.MkdirAll(repo, 0o755))
	git := func(args ...string) {
		t.Helper()
		c := inDir(repo, "git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false",
			"-c", "init.defaultBranch=main"}, args...)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	notes := filepath.Join(repo, "notes.md")
	git("init", "-q")
	must(t, os.WriteFile(notes, []byte("first commit text\n"), 0o644))
	git("add", "notes.md")
	git("commit", "-q", "-m", "first commit")
	now.Add(int64(time.Hour))
	must(t, os.WriteFile(notes, []byte("second commit text\n"), 0o644))
	git("commit", "-q", "-am", "second commit")
	versions := func() int {
		ents, _ := os.ReadDir(tf.path("history/semantic/proj/notes.md"))
		return len(ents)
	}
	before := versions()
	now.Add(int64(time.Hour))
	git("checkout", "-q", "HEAD~1", "--", "notes.md")
	if got := read(t, notes); got != "first commit text\n" {
		t.Fatalf("after checkout: %q", got)
	}
	if got := versions(); got != before+1 {
		t.Errorf("git checkout: history %d versions, want %d", got, before+1)
	}
	if b := read(t, tf.path("history/semantic/proj/notes.md/v"+itoa(before+1)+".md")); b != "second commit text\n" {
		t.Errorf("the replaced bytes are not the last version: %q", b)
	}
	git("gc", "-q", "--prune=now")

	leak := func(where, text string) {
		if strings.Contains(text, ".git") {
			t.Errorf("%s shows git's own files:\n%s", where, text)
		}
	}
	for _, q := range []string{"commit", "HEAD", "refs", "master", "main", "objects"} {
		ents, _ := os.ReadDir(tf.path("search/" + q))
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		leak("search/"+q, strings.Join(n, " ")+read(t, tf.path("search/"+q+"/.results")))
		leak("context/"+q, read(t, tf.path("context/"+q)))
	}
	for _, f := range []string{"meta/index.json", "meta/stats.json"} {
		leak(f, read(t, tf.path(f)))
	}
	for _, v := range []string{"by-type", "by-date", "recent", "archive/trash"} {
		leak(v, names(t, tf.path(v)))
	}
	if st := read(t, tf.path("meta/stats.json")); !strings.Contains(st, `"memories": 1,`) {
		t.Errorf("meta/stats.json does not count the one memory:\n%s", st)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
