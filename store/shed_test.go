package store

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

// TestShedInodes: shedding the inode cache keeps the inode of a file open
// for writing (its size not yet committed lives there) and loses nothing
// of the others, which are read again from the KV.
func TestShedInodes(t *testing.T) {
	s := newStore(t, Options{})
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	var inos []uint64
	for n := range 20 {
		inos = append(inos, writeFile(t, s, w.Ino, fmt.Sprintf("f%d", n), []byte(fmt.Sprintf("content %d", n))))
	}
	open := inos[3]
	must(t, s.Open(open, false))
	_, err = s.WriteAt(open, []byte("and more, not yet committed"), 9)
	must(t, err)
	if n := s.ShedInodes(1000); n != 0 {
		t.Errorf("shed %d inodes with room for 1000", n)
	}
	if n := s.ShedInodes(0); n < 19 {
		t.Errorf("shed %d inodes, want at least the 19 closed files", n)
	}
	s.icMu.RLock()
	_, kept := s.inodes[open]
	s.icMu.RUnlock()
	if !kept {
		t.Fatal("the inode of the file open for writing was shed")
	}
	if a, err := s.Attr(open); err != nil || a.Size != 9+27 {
		t.Fatalf("the open file's size after the shed: %d %v, want 36", a.Size, err)
	}
	must(t, s.Release(open))
	for n, ino := range inos {
		want := []byte(fmt.Sprintf("content %d", n))
		if ino == open {
			want = []byte("content 3and more, not yet committed")
		}
		if got := readAll(t, s, ino); !bytes.Equal(got, want) {
			t.Errorf("f%d after the shed: %q, want %q", n, got, want)
		}
	}
	must(t, s.Rename(w.Ino, "f5", w.Ino, "g5", 0))
	s.ShedInodes(0)
	if _, err := s.Lookup(w.Ino, "g5"); err != nil {
		t.Errorf("a rename after a shed: %v", err)
	}
	fsckClean(t, s)
}

// TestShedListings: past its bound the directory cache is emptied, and
// every lookup, listing and change after that is as before it.
func TestShedListings(t *testing.T) {
	s := newStore(t, Options{})
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	for n := range 30 {
		writeFile(t, s, w.Ino, fmt.Sprintf("f%02d", n), []byte("x"))
	}
	if _, err := s.ReadDir(w.Ino); err != nil {
		t.Fatal(err)
	}
	if n := s.ShedListings(1000); n != 0 {
		t.Errorf("shed %d entries with room for 1000", n)
	}
	if n := s.ShedListings(10); n < 30 {
		t.Errorf("shed %d entries, want at least working/'s 30", n)
	}
	s.dcMu.RLock()
	left := len(s.dc)
	s.dcMu.RUnlock()
	if left != 0 {
		t.Fatalf("%d listings left after the shed", left)
	}
	must(t, s.Rename(w.Ino, "f05", w.Ino, "g05", 0))
	writeFile(t, s, w.Ino, "new", []byte("y"))
	s.ShedListings(0)
	ents, err := s.ReadDir(w.Ino)
	must(t, err)
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name] = true
	}
	if len(ents) != 31 || !names["g05"] || names["f05"] || !names["new"] {
		t.Fatalf("working/ after sheds: %d entries, g05 %v, f05 %v, new %v", len(ents), names["g05"], names["f05"], names["new"])
	}
	if _, err := s.Lookup(w.Ino, "f05"); err == nil {
		t.Fatal("the renamed name is still found after a shed")
	}
}

// TestMemoriesPaged: a walk over the memories reads the records a page
// at a time and sheds the inode cache between pages; it still visits
// every memory once, in inode order, with its record, and leaves the
// cache bounded.
func TestMemoriesPaged(t *testing.T) {
	defer func(p, k int) { memPage, walkKeep = p, k }(memPage, walkKeep)
	memPage, walkKeep = 16, 40
	s := newStore(t, Options{})
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	want := map[uint64]string{}
	for n := range 300 {
		body := fmt.Sprintf("---\ntags: [t%d]\n---\nmemory %d\n", n%7, n)
		want[writeFile(t, s, w.Ino, fmt.Sprintf("m%03d.md", n), []byte(body))] = fmt.Sprintf("t%d", n%7)
	}
	s.ShedInodes(0)
	var last uint64
	seen := 0
	must(t, s.Memories(func(in Info) error {
		tag, ok := want[in.Ino]
		if !ok {
			return nil // not one of these (the store's own files)
		}
		if in.Ino <= last {
			t.Errorf("inode %d after %d: not in inode order", in.Ino, last)
		}
		last = in.Ino
		if len(in.Tags) != 1 || in.Tags[0] != tag {
			t.Errorf("%s: tags %v, want [%s]", in.Path, in.Tags, tag)
		}
		seen++
		return nil
	}))
	if seen != len(want) {
		t.Errorf("the walk saw %d of the %d memories", seen, len(want))
	}
	s.icMu.RLock()
	n := len(s.inodes)
	s.icMu.RUnlock()
	if n > walkKeep+memPage {
		t.Errorf("%d inodes cached after the walk, want at most %d", n, walkKeep+memPage)
	}
}

// TestMemoryInos: the keys-only listing gives every memory Memories
// gives, in inode order, across its pages; on a store open for a user,
// only that user's.
func TestMemoryInos(t *testing.T) {
	defer func(p int) { memPage = p }(memPage)
	memPage = 16 // pages of 256 keys
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	must(t, err)
	defer kv.Close()
	s, err := Open(kv, Options{})
	must(t, err)
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	alice := map[uint64]bool{}
	for n := range 600 {
		user := []string{"alice", "bob"}[n%2]
		ino := writeFile(t, s, w.Ino, fmt.Sprintf("m%03d.md", n), []byte(fmt.Sprintf("---\nuser: %s\n---\nmemory %d\n", user, n)))
		if user == "alice" {
			alice[ino] = true
		}
	}
	list := func(s *Store) (inos []uint64) {
		t.Helper()
		must(t, s.MemoryInos(func(ino uint64) error {
			if len(inos) > 0 && ino <= inos[len(inos)-1] {
				t.Errorf("inode %d after %d: not in inode order", ino, inos[len(inos)-1])
			}
			inos = append(inos, ino)
			return nil
		}))
		return inos
	}
	got := map[uint64]bool{}
	for _, ino := range list(s) {
		got[ino] = true
	}
	n := 0
	must(t, s.Memories(func(in Info) error {
		n++
		if !got[in.Ino] {
			t.Errorf("%s (inode %d) is a memory MemoryInos did not give", in.Path, in.Ino)
		}
		return nil
	}))
	if n < 600 {
		t.Fatalf("Memories gave %d, want at least the 600 written", n)
	}
	must(t, s.Close())

	// Alice's store lists every memory too; a scan of them (the build's)
	// reports bob's gone, as Info does, and reads hers.
	s, err = Open(kv, Options{User: "alice"})
	must(t, err)
	defer s.Close()
	inos := list(s)
	for ino := range got {
		if !slices.Contains(inos, ino) {
			t.Errorf("alice's store does not list inode %d", ino)
		}
	}
	hers := 0
	s.ScanMemories(inos, 1<<20, func(m *Scanned) bool {
		_, ierr := s.Info(m.Ino)
		switch {
		case alice[m.Ino]:
			hers++
			if !m.Own || m.Err != nil || ierr != nil {
				t.Errorf("alice's memory %d: own %v, err %v, Info's err %v", m.Ino, m.Own, m.Err, ierr)
			}
		case errors.Is(ierr, syscall.ENOENT) && !errors.Is(m.Err, syscall.ENOENT):
			t.Errorf("inode %d: Info says ENOENT, the scan %v (own %v)", m.Ino, m.Err, m.Own)
		}
		return true
	})
	if hers != len(alice) {
		t.Errorf("the scan read %d of alice's memories, want %d", hers, len(alice))
	}
}

// TestAfterPass: after a pass over every memory the inode, content and
// record caches are empty, and every file still reads and lists as before.
func TestAfterPass(t *testing.T) {
	s := newStore(t, Options{})
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	var inos []uint64
	for n := range 50 {
		inos = append(inos, writeFile(t, s, w.Ino, fmt.Sprintf("m%02d.md", n), []byte(fmt.Sprintf("---\ntags: [x]\n---\nnote %d\n", n))))
	}
	must(t, s.Memories(func(in Info) error {
		readAll(t, s, in.Ino) // a pass: every record, inode and content read
		readAll(t, s, in.Ino) // twice: the content cache admits a file at its second read
		return nil
	}))
	c := s.CacheStats()
	if c["records"].Entries == 0 || s.HotOn() && c["content"].Entries == 0 {
		t.Fatalf("the pass filled no cache: %+v", c)
	}
	s.AfterPass()
	c = s.CacheStats()
	s.icMu.RLock()
	cached := len(s.inodes)
	s.icMu.RUnlock()
	if c["records"].Entries != 0 || c["content"].Entries != 0 || cached > 1 {
		t.Fatalf("after the pass: %d inodes cached, caches %+v", cached, c)
	}
	for n, ino := range inos {
		if got, want := string(readAll(t, s, ino)), fmt.Sprintf("---\ntags: [x]\n---\nnote %d\n", n); got != want {
			t.Errorf("m%02d.md: %q, want %q", n, got, want)
		}
		if in, err := s.Info(ino); err != nil || len(in.Tags) != 1 {
			t.Errorf("m%02d.md: info %+v %v", n, in, err)
		}
	}
}
