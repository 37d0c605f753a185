package store

import (
	"errors"
	"path"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMoveOverAnOpenMemoryTrashesIt: a memory renamed onto the name of
// another that is still open (a reader, an editor, a lingering session)
// replaces it, and the replaced one goes to the trash, as when it is
// closed. It used to be lost: the check for a save asked for a quiet
// memory and, failing, let the plain rename drop it.
func TestMoveOverAnOpenMemoryTrashesIt(t *testing.T) {
	t.Parallel()
	clock := time.Now()
	s := newStore(t, Options{Now: func() time.Time { return clock }, ScratchAge: -1})
	a := writeFile(t, s, RootIno, "a.md", []byte("memory a\n"))
	b := writeFile(t, s, RootIno, "b.md", []byte("memory b\n"))
	clock = clock.Add(time.Hour) // a is no fresh file: moving it is no save
	must(t, s.Open(b, false))    // b is open while a takes its name
	must(t, s.Rename(RootIno, "a.md", RootIno, "b.md", 0))
	must(t, s.Release(b))
	if i, err := s.Lookup(RootIno, "b.md"); err != nil || i.Ino != a {
		t.Fatalf("b.md is inode %d (%v), want a's %d", i.Ino, err, a)
	}
	tdir, err := s.Resolve(TrashDir)
	if err != nil {
		t.Fatalf("no trash: %v", err)
	}
	i, err := s.Lookup(tdir, "b.md")
	if err != nil || i.Ino != b {
		t.Fatalf("the replaced memory is not in the trash: %v", err)
	}
	buf := make([]byte, 64)
	n, err := s.ReadAt(b, buf, 0)
	must(t, err)
	if string(buf[:n]) != "memory b\n" {
		t.Errorf("the trashed memory holds %q", buf[:n])
	}
}

// TestTrashPathBlocked: a file where a directory of the trash would be
// (written there by hand, or by another user) does not turn a removal
// into a deletion: the memory goes to the trash below a directory of its
// own. When the trash cannot take it at all, the removal fails and the
// memory stays.
func TestTrashPathBlocked(t *testing.T) {
	t.Parallel()
	clock := time.Now()
	s := newStore(t, Options{Now: func() time.Time { return clock }, ScratchAge: time.Second})
	sem, err := s.mkdirAllLocked("semantic")
	must(t, err)
	a := writeFile(t, s, sem, "a.md", []byte("memory a\n"))
	b := writeFile(t, s, sem, "b.md", []byte("memory b\n"))
	trash, err := s.mkdirAllLocked(TrashDir)
	must(t, err)
	writeFile(t, s, trash, "semantic", []byte("in the way\n"))
	clock = clock.Add(time.Hour)
	p, err := s.Remove(sem, "a.md")
	if err != nil || !strings.HasPrefix(p, TrashDir+"/") || !strings.HasSuffix(p, "/semantic/a.md") {
		t.Fatalf("removing a.md: %q, %v; want it in the trash", p, err)
	}
	if i, err := s.Resolve(p); err != nil || i != a {
		t.Errorf("%s is %d (%v), want a.md's inode %d", p, i, err, a)
	}
	// The trash itself a file: nothing can go there, and nothing is lost.
	arch, err := s.Resolve(path.Dir(TrashDir))
	must(t, err)
	must(t, s.Rename(arch, path.Base(TrashDir), arch, "old-trash", 0))
	writeFile(t, s, arch, path.Base(TrashDir), []byte("a file\n"))
	clock = clock.Add(time.Hour)
	if _, err := s.Remove(sem, "b.md"); !errors.Is(err, syscall.EIO) {
		t.Errorf("removing b.md with no trash to go to: %v, want EIO", err)
	}
	if i, err := s.Lookup(sem, "b.md"); err != nil || i.Ino != b {
		t.Errorf("b.md is gone (%v)", err)
	}
}
