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
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// modelSide is one of the two trees: its directory and the descriptors
// the sequence holds (-1: none).
type modelSide struct {
	dir string
	fds [modelSlots]int
}

func newModelSide(dir string) *modelSide {
	s := &modelSide{dir: dir}
	for i := range s.fds {
		s.fds[i] = -1
	}
	return s
}

func (s *modelSide) closeAll() {
	for i, fd := range s.fds {
		if fd >= 0 {
			unix.Close(fd)
			s.fds[i] = -1
		}
	}
}

func statString(st *unix.Stat_t) string {
	size := st.Size
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		size = 0 // directory sizes are the file system's own
	}
	return fmt.Sprintf("mode %o size %d nlink %d", st.Mode, size, st.Nlink)
}

// apply runs o on side s and returns what it read (read, stat, readdir
// and their descriptor forms) and its error.
func (s *modelSide) apply(o modelOp) (string, error) {
	p := func(rel string) string { return filepath.Join(s.dir, rel) }
	fd := s.fds[o.slot]
	switch o.kind {
	case "open":
		if fd >= 0 {
			unix.Close(fd)
			s.fds[o.slot] = -1
		}
		fd, err := unix.Open(p(o.path), unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err == nil {
			s.fds[o.slot] = fd
		}
		return "", err
	case "close":
		s.fds[o.slot] = -1
		if fd < 0 {
			return "", unix.EBADF
		}
		return "", unix.Close(fd)
	case "fdwrite":
		if fd < 0 {
			return "", unix.EBADF
		}
		_, err := unix.Pwrite(fd, o.data(), o.off)
		return "", err
	case "fdtruncate":
		if fd < 0 {
			return "", unix.EBADF
		}
		return "", unix.Ftruncate(fd, o.off)
	case "fdread":
		if fd < 0 {
			return "", unix.EBADF
		}
		b := make([]byte, 4*32<<10)
		n, err := unix.Pread(fd, b, 0)
		if err != nil {
			return "", err
		}
		return string(b[:n]), nil
	case "fdstat":
		if fd < 0 {
			return "", unix.EBADF
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return "", err
		}
		return statString(&st), nil
	}
	switch o.kind {
	case "create", "write", "append":
		flags := unix.O_WRONLY | unix.O_CLOEXEC
		switch o.kind {
		case "create":
			flags |= unix.O_CREAT | o.flags
		case "append":
			flags |= unix.O_APPEND
		}
		fd, err := unix.Open(p(o.path), flags, 0o644)
		if err != nil {
			return "", err
		}
		if o.kind == "write" {
			_, err = unix.Pwrite(fd, o.data(), o.off)
		} else {
			_, err = unix.Write(fd, o.data())
		}
		return "", errors.Join(err, unix.Close(fd))
	case "truncate":
		return "", unix.Truncate(p(o.path), o.off)
	case "rename":
		return "", unix.Renameat2(unix.AT_FDCWD, p(o.path), unix.AT_FDCWD, p(o.path2), uint(o.flags))
	case "unlink":
		return "", unix.Unlink(p(o.path))
	case "mkdir":
		return "", unix.Mkdir(p(o.path), 0o755)
	case "rmdir":
		return "", unix.Rmdir(p(o.path))
	case "link":
		return "", unix.Link(p(o.path), p(o.path2))
	case "symlink":
		return "", unix.Symlink(o.target, p(o.path))
	case "chmod":
		return "", unix.Chmod(p(o.path), o.mode)
	case "read":
		b, err := os.ReadFile(p(o.path))
		return string(b), err
	case "stat":
		var st unix.Stat_t
		if err := unix.Stat(p(o.path), &st); err != nil {
			return "", err
		}
		return statString(&st), nil
	case "readdir":
		ents, err := os.ReadDir(p(o.path))
		var names []string
		for _, e := range ents {
			names = append(names, e.Name()+":"+e.Type().String())
		}
		return fmt.Sprint(names), err
	}
	panic("unknown op " + o.kind)
}

// modelEntry is what is compared of one name.
type modelEntry struct {
	mode  uint32
	size  int64
	nlink uint64
	data  string // content or symlink target
	group int    // hard links of one inode share a group
}

func (e modelEntry) String() string {
	return fmt.Sprintf("mode %o size %d nlink %d group %d %d bytes", e.mode, e.size, e.nlink, e.group, len(e.data))
}

// modelTree snapshots dir. Hard-link groups are numbered by the first path
// (in walk order) of each inode, so that the two trees can be compared.
func modelTree(dir string) (map[string]modelEntry, error) {
	out := map[string]modelEntry{}
	groups := map[uint64]int{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return fmt.Errorf("%s listed but lstat fails: %w", rel, err)
		}
		e := modelEntry{mode: st.Mode, nlink: st.Nlink}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("read %s: %w", rel, err)
			}
			e.size, e.data = st.Size, string(b)
		case unix.S_IFLNK:
			t, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("readlink %s: %w", rel, err)
			}
			e.size, e.data = st.Size, t
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			g, ok := groups[st.Ino]
			if !ok {
				g = len(groups) + 1
				groups[st.Ino] = g
			}
			e.group = g
		}
		out[rel] = e
		return nil
	})
	return out, err
}

func TestModelAgainstLocalDisk(t *testing.T) {
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

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func compareModel(rt *rapid.T, step int, o modelOp, mdir, ndir string) {
	m, err := modelTree(mdir)
	if err != nil {
		rt.Fatalf("step %d: %v: walking the mount: %v", step, o, err)
	}
	n, err := modelTree(ndir)
	if err != nil {
		rt.Fatalf("step %d: %v: walking the local disk: %v", step, o, err)
	}
	if diffs := modelDiffs(m, n); len(diffs) > 0 {
		rt.Fatalf("step %d: after %v the trees differ:\n  %s", step, o, strings.Join(diffs, "\n  "))
	}
}

// modelDiffs describes every difference between the mount's tree m and
// the local disk's n.
func modelDiffs(m, n map[string]modelEntry) []string {
	var diffs []string
	names := map[string]bool{}
	for k := range m {
		names[k] = true
	}
	for k := range n {
		names[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		me, mok := m[k]
		ne, nok := n[k]
		switch {
		case !mok:
			diffs = append(diffs, fmt.Sprintf("%s: missing on the mount (local disk: %v)", k, ne))
		case !nok:
			diffs = append(diffs, fmt.Sprintf("%s: only on the mount (%v)", k, me))
		case me.data != ne.data && me.mode == ne.mode:
			diffs = append(diffs, fmt.Sprintf("%s: content differs: mount %v, local disk %v, first difference at %d", k, me, ne, firstDiff(me.data, ne.data)))
		case me != ne:
			diffs = append(diffs, fmt.Sprintf("%s: mount %v, local disk %v", k, me, ne))
		}
	}
	return diffs
}
