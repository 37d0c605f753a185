package store

import (
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
