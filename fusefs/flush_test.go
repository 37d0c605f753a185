package fusefs

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/mnemofs/mnemofs/store"
)

// A FLUSH from a process that neither opened the file to write nor wrote
// through it (a child closing the descriptor it inherited, at its exec
// and at its exit) commits nothing: the writer's half-written content
// stays its own until its close, which commits it.
func TestForkedChildFlushCommitsNothing(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("zebra-notes.md")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("the first half of a note about a quagga\n"); err != nil {
		t.Fatal(err)
	}
	i, err := tf.st.Lookup(store.RootIno, "zebra-notes.md")
	if err != nil {
		t.Fatal(err)
	}
	committed := func() string {
		r, err := tf.st.Record(i.Ino)
		if err != nil {
			t.Fatal(err)
		}
		return r.SHA256
	}
	before := committed()
	child := exec.Command("true")
	child.ExtraFiles = []*os.File{f} // its fd 3, closed when it exits
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	if got := committed(); got != before {
		t.Fatalf("the child's close committed the parent's half-written file: sha256 %s, was %s", got, before)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := committed(), fmt.Sprintf("%x", sha256.Sum256([]byte("the first half of a note about a quagga\n"))); got != want {
		t.Fatalf("after the writer's close: sha256 %s, want %s", got, want)
	}
}
