package fusefs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"

	"github.com/mnemofs/mnemofs/store"
)

// liveNodes counts the real nodes the kernel holds (FS.live).
func (tf *testFS) liveNodes() int {
	n := 0
	tf.srv.notify.fsys.live.Range(func(_, v any) bool {
		//lint:ignore SA1019 the test asks whether the kernel still holds the node
		if v.(*fs.Inode).Forgotten() {
			return true
		}
		n++
		return true
	})
	return n
}

// TestPruneBoundsNodes: a walk over many more files than MaxNodes leaves
// the kernel holding about MaxNodes of them (it was told to forget the
// rest, and did: FORGET reached go-fuse); every file still reads right
// afterwards, and an open file keeps working through its handle while its
// node is among the oldest.
func TestPruneBoundsNodes(t *testing.T) {
	t.Parallel()
	for _, byEntry := range []bool{false, true} {
		t.Run(fmt.Sprintf("byEntry=%v", byEntry), func(t *testing.T) {
			t.Parallel()
			testPrune(t, byEntry)
		})
	}
}

func testPrune(t *testing.T, byEntry bool) {
	const max, files = 64, 800
	tf := mountWith(t, t.TempDir(), store.Options{ScratchAge: -1}, Config{MaxNodes: max, pruneByEntry: byEntry})
	t.Logf("nodes dropped by %s", tf.srv.prune.how)
	dir := tf.path("semantic/many")
	must(t, os.MkdirAll(dir, 0o755))
	body := func(i int) []byte { return []byte(fmt.Sprintf("memory %d\n", i)) }
	must(t, os.WriteFile(filepath.Join(dir, "held.md"), []byte("held\n"), 0o644))
	held, err := os.OpenFile(filepath.Join(dir, "held.md"), os.O_RDWR|os.O_APPEND, 0)
	must(t, err)
	defer held.Close()
	for i := range files {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%04d.md", i)), body(i), 0o644))
	}
	// A second walk, as find does: lookups of names the kernel dropped.
	for i := range files {
		_, err := os.Stat(filepath.Join(dir, fmt.Sprintf("m%04d.md", i)))
		must(t, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for tf.liveNodes() > max+8 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := tf.liveNodes(); n > max+8 {
		t.Fatalf("the kernel holds %d nodes after walking %d files, bound %d (%d pruned)", n, files, max, tf.srv.prune.Pruned())
	}
	if p := tf.srv.prune.Pruned(); p < files-max {
		t.Fatalf("%d nodes pruned, want at least %d", p, files-max)
	}
	// The open file was the oldest node: its handle still writes, and
	// what it wrote is there by its name.
	if _, err := held.WriteString("more\n"); err != nil {
		t.Fatalf("write through a handle whose name was pruned: %v", err)
	}
	must(t, held.Close())
	if b, err := os.ReadFile(filepath.Join(dir, "held.md")); err != nil || string(b) != "held\nmore\n" {
		t.Fatalf("held.md = %q, %v", b, err)
	}
	for i := range files {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("m%04d.md", i)))
		if err != nil || !bytes.Equal(b, body(i)) {
			t.Fatalf("m%04d.md after pruning = %q, %v", i, b, err)
		}
	}
	ents, err := os.ReadDir(dir)
	must(t, err)
	if len(ents) != files+1 {
		t.Fatalf("%d entries listed, want %d", len(ents), files+1)
	}
}
