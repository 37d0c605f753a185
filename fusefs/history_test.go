package fusefs

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/store"
)

func listNames(t *testing.T, p string) string {
	t.Helper()
	ents, err := os.ReadDir(p)
	must(t, err)
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return strings.Join(n, " ")
}

// TestHistory: history/<path>/ shows a versioned file's old versions,
// oldest first; copying one back restores it (as a new version); appends
// to an episodic log and changes in working/ make none; nothing in
// history/ can be changed; versions follow a rename.
func TestHistory(t *testing.T) {
	t.Parallel()
	tf := mountAt(t, t.TempDir(), store.Options{ScratchAge: -1})
	a := tf.path("semantic/a.md")
	for _, v := range []string{"first\n", "second\n", "third\n"} {
		must(t, os.WriteFile(a, []byte(v), 0o644))
	}
	h := tf.path("history/semantic/a.md")
	if got := listNames(t, h); got != "v1.md v2.md" {
		t.Fatalf("history of a file written three times: %q, want v1.md v2.md", got)
	}
	if read(t, h+"/v1.md") != "first\n" || read(t, h+"/v2.md") != "second\n" {
		t.Fatalf("versions hold %q, %q", read(t, h+"/v1.md"), read(t, h+"/v2.md"))
	}
	if !strings.Contains(listNames(t, tf.path("history/semantic")), "a.md") {
		t.Error("history/semantic does not list a.md")
	}

	// Restore: copy v1 back; the replaced content becomes v3.
	must(t, os.WriteFile(a, []byte(read(t, h+"/v1.md")), 0o644))
	if read(t, a) != "first\n" || listNames(t, h) != "v1.md v2.md v3.md" || read(t, h+"/v3.md") != "third\n" {
		t.Fatalf("after restoring v1: %q, history %q", read(t, a), listNames(t, h))
	}

	// The shell's > (its truncate may be committed on its own) keeps the
	// old content too.
	sh := tf.path("semantic/sh.md")
	for _, v := range []string{"ramen", "vegetarian"} {
		if out, err := exec.Command("sh", "-c", "printf '%s\\n' "+v+" > "+sh).CombinedOutput(); err != nil {
			t.Fatalf("sh: %v %s", err, out)
		}
	}
	if got := read(t, tf.path("history/semantic/sh.md/v1.md")); got != "ramen\n" {
		t.Fatalf("history after two shell writes: v1 %q", got)
	}

	// Read-only.
	wantErrno(t, os.WriteFile(h+"/v9.md", []byte("x"), 0o644), syscall.EROFS)
	wantErrno(t, os.Remove(h+"/v1.md"), syscall.EROFS)
	wantErrno(t, os.WriteFile(h+"/v1.md", []byte("x"), 0o644), syscall.EROFS)

	// Appends to an episodic log are not versions; working/ keeps none.
	l := tf.path("episodic/log.jsonl")
	for i := 0; i < 3; i++ {
		f, err := os.OpenFile(l, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		must(t, err)
		_, err = f.WriteString("{\"n\": 1}\n")
		must(t, err)
		must(t, f.Close())
	}
	if got := listNames(t, tf.path("history/episodic/log.jsonl")); got != "" {
		t.Fatalf("appends made versions: %q", got)
	}
	w := tf.path("working/plan.md")
	must(t, os.WriteFile(w, []byte("a"), 0o644))
	must(t, os.WriteFile(w, []byte("b"), 0o644))
	if got := listNames(t, tf.path("history/working/plan.md")); got != "" {
		t.Fatalf("working/ kept versions: %q", got)
	}

	// A rename keeps the history with the file.
	must(t, os.Rename(a, tf.path("semantic/b.md")))
	if got := listNames(t, tf.path("history/semantic/b.md")); got != "v1.md v2.md v3.md" {
		t.Fatalf("history after a rename: %q", got)
	}
	if _, err := os.Stat(h); !os.IsNotExist(err) {
		t.Fatalf("history of the old name: %v", err)
	}
}
