package fusefs

// Model-based test: random sequences of file system operations are applied
// to a directory on the mount and to one on the local disk (the model),
// and after every step the two must agree — the errno of the call, the
// bytes it read, and then the whole tree: names, types, sizes, link
// counts, permission bits, contents, symlink targets and which names are
// hard links of one another. rapid shrinks a failing sequence to a short
// one.
//
//	go test -run TestModel ./fusefs/ -rapid.checks=1000 -rapid.seed=N
//
// Only the test's own directory (under working/) is compared: removals
// move memories to archive/trash, and the generated trees at the root
// (meta/, by-*/, search/, ...) are not part of the model.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/mnemofs/mnemofs/store"
)

// modelPaths are the names operations use: few enough that operations
// meet each other (a rename over a file just written, a mkdir where a file
// was), nested enough for cross-directory moves.
var modelPaths = []string{"a", "a", "b", "b", "c", "d", "d", "e", "d/a", "d/b", "d/e", "e/a", "d/e/a"}

// modelKinds are the operations, those that make names more often than
// the others so that most calls find something to work on.
var modelKinds = []string{"create", "create", "create", "write", "write", "append", "append", "truncate",
	"rename", "rename", "unlink", "mkdir", "mkdir", "rmdir", "link", "symlink", "read", "stat", "readdir", "chmod",
	"open", "open", "fdwrite", "fdread", "fdtruncate", "fdstat", "close"}

// modelSlots is how many descriptors a sequence holds open across steps:
// they keep unlinked and renamed files alive.
const modelSlots = 2

// modelTargets are symlink targets: relative ones that resolve inside the
// test directory from either depth, a dangling one and a directory.
var modelTargets = []string{"a", "d/a", "../a", "nope", "d", "e/a"}

type modelOp struct {
	kind   string
	path   string
	path2  string // rename/link destination
	target string // symlink target
	flags  int    // open or rename flags
	off    int64  // write offset or truncate size
	n      int    // bytes to write
	seed   byte   // content: seed, seed+1, ...
	mode   uint32 // chmod
	slot   int    // held descriptor
}

func (o modelOp) String() string {
	switch o.kind {
	case "create":
		return fmt.Sprintf("create %s flags=%#x write %d bytes (seed %d)", o.path, o.flags, o.n, o.seed)
	case "write":
		return fmt.Sprintf("pwrite %s %d bytes at %d (seed %d)", o.path, o.n, o.off, o.seed)
	case "append":
		return fmt.Sprintf("append %s %d bytes (seed %d)", o.path, o.n, o.seed)
	case "truncate":
		return fmt.Sprintf("truncate %s %d", o.path, o.off)
	case "rename":
		return fmt.Sprintf("rename %s %s flags=%d", o.path, o.path2, o.flags)
	case "link":
		return fmt.Sprintf("link %s %s", o.path, o.path2)
	case "symlink":
		return fmt.Sprintf("symlink %q %s", o.target, o.path)
	case "chmod":
		return fmt.Sprintf("chmod %s %o", o.path, o.mode)
	case "open":
		return fmt.Sprintf("fd%d = open %s O_RDWR", o.slot, o.path)
	case "fdwrite":
		return fmt.Sprintf("pwrite fd%d %d bytes at %d (seed %d)", o.slot, o.n, o.off, o.seed)
	case "fdtruncate":
		return fmt.Sprintf("ftruncate fd%d %d", o.slot, o.off)
	case "fdread", "fdstat", "close":
		return fmt.Sprintf("%s fd%d", o.kind, o.slot)
	}
	return o.kind + " " + o.path
}

func (o modelOp) data() []byte {
	b := make([]byte, o.n)
	for i := range b {
		b[i] = o.seed + byte(i) + byte(i>>8)
	}
	return b
}

// sizes are mostly small, sometimes across a chunk (32 KiB) boundary.
var modelSize = rapid.OneOf(rapid.IntRange(0, 100), rapid.IntRange(0, 3*32<<10))

var genModelOp = rapid.Custom(func(t *rapid.T) modelOp {
	o := modelOp{
		kind: rapid.SampledFrom(modelKinds).Draw(t, "kind"),
		path: rapid.SampledFrom(modelPaths).Draw(t, "path"),
	}
	switch o.kind {
	case "create":
		o.flags = rapid.SampledFrom([]int{0, unix.O_EXCL, unix.O_TRUNC}).Draw(t, "flags")
		o.n, o.seed = modelSize.Draw(t, "n"), rapid.Byte().Draw(t, "seed")
	case "write":
		o.off = int64(modelSize.Draw(t, "off"))
		o.n, o.seed = modelSize.Draw(t, "n"), rapid.Byte().Draw(t, "seed")
	case "append":
		o.n, o.seed = modelSize.Draw(t, "n"), rapid.Byte().Draw(t, "seed")
	case "truncate":
		o.off = int64(modelSize.Draw(t, "size"))
	case "rename":
		o.path2 = rapid.SampledFrom(modelPaths).Draw(t, "to")
		o.flags = rapid.SampledFrom([]int{0, 0, unix.RENAME_NOREPLACE, unix.RENAME_EXCHANGE}).Draw(t, "flags")
	case "link":
		o.path2 = rapid.SampledFrom(modelPaths).Draw(t, "to")
	case "symlink":
		o.target = rapid.SampledFrom(modelTargets).Draw(t, "target")
	case "chmod":
		o.mode = rapid.SampledFrom([]uint32{0o600, 0o644, 0o755, 0o4711, 0o1777}).Draw(t, "mode")
	case "readdir":
		o.path = rapid.SampledFrom(append([]string{"."}, modelPaths...)).Draw(t, "path")
	case "open", "fdread", "fdstat", "close":
		o.slot = rapid.IntRange(0, modelSlots-1).Draw(t, "slot")
	case "fdwrite":
		o.slot = rapid.IntRange(0, modelSlots-1).Draw(t, "slot")
		o.off = int64(modelSize.Draw(t, "off"))
		o.n, o.seed = modelSize.Draw(t, "n"), rapid.Byte().Draw(t, "seed")
	case "fdtruncate":
		o.slot = rapid.IntRange(0, modelSlots-1).Draw(t, "slot")
		o.off = int64(modelSize.Draw(t, "size"))
	}
	return o
})

func TestModelAgainstLocalDisk(t *testing.T) {
	t.Parallel()
	// Every removal deletes (as a disk does) rather than moving the
	// memory to archive/trash: a file removed while open must report
	// nlink 0 through its descriptor, which a trashed one (deliberately)
	// does not. The trash has its own tests.
	data := t.TempDir()
	opts := store.Options{ScratchAge: time.Hour}
	tf := mountAt(t, data, opts)
	mroot, nroot := tf.path("working/model"), t.TempDir()
	must(t, os.Mkdir(mroot, 0o755))
	run, ops := 0, 0
	defer func() { t.Logf("%d sequences, %d operations", run, ops) }()
	rapid.Check(t, func(rt *rapid.T) {
		run++
		mdir, ndir := filepath.Join(mroot, strconv.Itoa(run)), filepath.Join(nroot, strconv.Itoa(run))
		if err := os.Mkdir(mdir, 0o755); err != nil {
			rt.Fatal(err)
		}
		if err := os.Mkdir(ndir, 0o755); err != nil {
			rt.Fatal(err)
		}
		ms, ns := newModelSide(mdir), newModelSide(ndir)
		rt.Cleanup(ms.closeAll) // before the unmount, which waits for open files
		rt.Cleanup(ns.closeAll)
		steps := rapid.IntRange(1, 50).Draw(rt, "steps")
		for i := range steps {
			o := genModelOp.Draw(rt, "op")
			ops++
			gotM, errM := ms.apply(o)
			gotN, errN := ns.apply(o)
			if em, en := errnoOf(errM), errnoOf(errN); em != en {
				rt.Fatalf("step %d: %v: mnemofs gives %s, the local disk %s (%v / %v)", i, o, errName(em), errName(en), errM, errN)
			}
			if gotM != gotN {
				if len(gotM) > 200 || len(gotN) > 200 {
					rt.Fatalf("step %d: %v: mnemofs read %d bytes, the local disk %d; first difference at %d", i, o, len(gotM), len(gotN), firstDiff(gotM, gotN))
				}
				rt.Fatalf("step %d: %v: mnemofs gives %q, the local disk %q", i, o, gotM, gotN)
			}
			compareModel(rt, i, o, mdir, ndir)
		}
	})
	if t.Failed() {
		return
	}
	// Every sequence's final tree survives a remount, and the store
	// agrees with itself.
	tf.unmount()
	tf = mountAt(t, data, opts)
	m, err := modelTree(tf.path("working/model"))
	must(t, err)
	n, err := modelTree(nroot)
	must(t, err)
	if diffs := modelDiffs(m, n); len(diffs) > 0 {
		t.Fatalf("after a remount the trees differ:\n  %s", strings.Join(diffs[:min(len(diffs), 20)], "\n  "))
	}
	r, err := tf.st.Fsck(false)
	must(t, err)
	if !r.Clean {
		t.Fatalf("fsck: %v", r.Problems)
	}
}
