package store

import (
	"bytes"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

// openBulk opens (or reopens) a store on an on-disk Badger opened for
// bulk loads, as the import command does; close closes both.
func openBulk(t *testing.T, dir string) (s *Store, close func()) {
	t.Helper()
	kv, err := backend.OpenBadger(dir, backend.Options{Bulk: true})
	must(t, err)
	s, err = Open(kv, Options{ScratchAge: -1})
	must(t, err)
	return s, func() { s.Close(); kv.Close() }
}

// loadTree adds to b, in load mode: new directories (one 0700, one deep),
// files in them and in an existing directory, a permission change of an
// existing directory and a symbolic link. It returns the files' contents.
func loadTree(t *testing.T, b *Bulk) map[string][]byte {
	t.Helper()
	want := map[string][]byte{}
	must(t, b.AddDir("/episodic/imp/new", 0o700, Owner{Uid: 7, Gid: 8}))
	must(t, b.AddDir("/episodic/imp/old", 0o750, Owner{}))
	for i := range 300 {
		p := fmt.Sprintf("/episodic/imp/new/d%d/f%03d.md", i%7, i)
		if i%3 == 0 {
			p = fmt.Sprintf("/episodic/imp/old/g%03d.md", i)
		}
		data := []byte(fmt.Sprintf("---\nuser: u%d\n---\nnote %d\n", i%4, i))
		if i%50 == 0 {
			data = append(data, bytes.Repeat([]byte{byte(i)}, 2*ChunkSize+5)...)
		}
		must(t, b.AddFile(p, data, 0o640, Owner{Uid: 7, Gid: 8}, int64(i)*1e9))
		want[p] = data
	}
	must(t, b.AddSymlink("/episodic/imp/new/link", "d0/f000.md", Owner{}))
	return want
}

// TestBulkLoad: files, directories and a link added in load mode are
// invisible until Finish, then all there, with their content, metadata,
// owners, permission bits and link counts; a name that exists already
// ends the load and is overwritten, the rest going through batches.
func TestBulkLoad(t *testing.T) {
	t.Parallel()
	s, done := openBulk(t, t.TempDir())
	defer done()
	_, err := s.mkdirAllLocked("/episodic/imp/old")
	must(t, err)
	imp, err := s.Resolve("/episodic/imp")
	must(t, err)
	before, _ := s.Attr(imp)

	b := s.NewBulk()
	must(t, b.StartLoad())
	want := loadTree(t, b)
	if b.ld == nil || !s.loading.Load() {
		t.Fatal("the load ended early")
	}
	if _, err := s.Resolve("/episodic/imp/new"); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("a name of the load is visible before its end: %v", err)
	}
	must(t, b.Finish())
	if s.loading.Load() {
		t.Fatal("still loading after Finish")
	}
	for p, data := range want {
		ino, err := s.Resolve(p)
		must(t, err)
		if got := readAll(t, s, ino); !bytes.Equal(got, data) {
			t.Fatalf("%s: %d bytes, want %d", p, len(got), len(data))
		}
		a, _ := s.Attr(ino)
		if a.Mode != syscall.S_IFREG|0o640 || a.Uid != 7 || a.Gid != 8 || a.Nlink() != 1 {
			t.Fatalf("%s: %+v", p, a)
		}
	}
	ino, _ := s.Resolve("/episodic/imp/new/d4/f004.md")
	if in, err := s.Info(ino); err != nil || len(in.Users) != 1 || in.Users[0] != "u0" {
		t.Fatalf("metadata: %+v %v", in, err)
	}
	newDir, _ := s.Resolve("/episodic/imp/new")
	if a, _ := s.Attr(newDir); a.Mode != syscall.S_IFDIR|0o700 || a.Uid != 7 || a.Nlink() != 2+7 {
		t.Fatalf("new: mode %o uid %d nlink %d", a.Mode, a.Uid, a.Nlink())
	}
	oldDir, _ := s.Resolve("/episodic/imp/old")
	if a, _ := s.Attr(oldDir); a.Mode != syscall.S_IFDIR|0o750 {
		t.Fatalf("old: mode %o", a.Mode)
	}
	if a, _ := s.Attr(imp); a.Nlink() != before.Nlink()+1 || a.Mtime <= before.Mtime {
		t.Fatalf("imp: nlink %d (was %d), mtime %d (was %d)", a.Nlink(), before.Nlink(), a.Mtime, before.Mtime)
	}
	link, err := s.Resolve("/episodic/imp/new/link")
	must(t, err)
	if target, _ := s.Readlink(link); target != "d0/f000.md" {
		t.Fatalf("link to %q", target)
	}
	fsckClean(t, s)

	// Again, with an existing name in the middle: the load ends there.
	b = s.NewBulk()
	must(t, b.StartLoad())
	must(t, b.AddFile("/episodic/imp/more/a.md", []byte("a"), 0o644, Owner{}, 1))
	must(t, b.AddFile("/episodic/imp/old/g000.md", []byte("over"), 0o644, Owner{}, 1))
	if b.ld != nil {
		t.Fatal("an existing name did not end the load")
	}
	must(t, b.AddFile("/episodic/imp/more/b.md", []byte("b"), 0o644, Owner{}, 1))
	must(t, b.Finish())
	for p, data := range map[string]string{"more/a.md": "a", "old/g000.md": "over", "more/b.md": "b"} {
		ino, err := s.Resolve("/episodic/imp/" + p)
		must(t, err)
		if got := readAll(t, s, ino); string(got) != data {
			t.Fatalf("%s: %q", p, got)
		}
	}
	fsckClean(t, s)
}

// TestBulkLoadUndo: a load that did not end (a crash after its inodes,
// with some of its names written and a directory's count raised) is
// undone at the next start: none of its names or inodes stay, counts are
// as before, fsck finds nothing, and the same files load again.
func TestBulkLoadUndo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, done := openBulk(t, dir)
	_, err := s.mkdirAllLocked("/episodic/imp/old")
	must(t, err)
	imp, _ := s.Resolve("/episodic/imp")
	before, _ := s.Attr(imp)

	b := s.NewBulk()
	must(t, b.StartLoad())
	loadTree(t, b)
	// The end of a load, cut short: the inodes are durable, half the
	// names written, one directory's count raised.
	ld := b.ld
	must(t, ld.load.Flush())
	must(t, s.writeNames(ld.ents[:len(ld.ents)/2]))
	s.mu.Lock()
	i, err := s.editable(imp)
	must(t, err)
	i.Subdirs++
	must(t, s.update(nil, i))
	s.unlock()
	done()

	s, done = openBulk(t, dir)
	defer done()
	for _, p := range []string{"/episodic/imp/new", "/episodic/imp/old/g000.md"} {
		if _, err := s.Resolve(p); !errors.Is(err, syscall.ENOENT) {
			t.Fatalf("%s after the undo: %v", p, err)
		}
	}
	if a, _ := s.Attr(imp); a.Nlink() != before.Nlink() {
		t.Fatalf("imp: nlink %d, was %d", a.Nlink(), before.Nlink())
	}
	for _, e := range ld.ents {
		if _, err := s.Attr(e.ino); err == nil {
			t.Fatalf("inode %d (%s) stayed", e.ino, e.name)
		}
	}
	fsckClean(t, s)
	b = s.NewBulk()
	must(t, b.StartLoad())
	want := loadTree(t, b)
	must(t, b.Finish())
	for p, data := range want {
		ino, err := s.Resolve(p)
		must(t, err)
		if got := readAll(t, s, ino); !bytes.Equal(got, data) {
			t.Fatalf("%s: %d bytes, want %d", p, len(got), len(data))
		}
	}
	fsckClean(t, s)
}

// TestBulkLoadUndoContentAhead: a load killed with its content's and
// metadata's tables ahead of its inodes' (the families are separate runs
// of tables): content and metadata whose inode no table holds go too.
func TestBulkLoadUndoContentAhead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, done := openBulk(t, dir)
	b := s.NewBulk()
	must(t, b.StartLoad())
	loadTree(t, b)
	ld := b.ld
	must(t, ld.load.Flush())
	// The inodes of every other file never reached a table.
	must(t, s.kv.Update(func(tx backend.Txn) error {
		for n, e := range ld.ents {
			if n%2 == 0 {
				if err := tx.Delete(backend.InodeKey(e.ino)); err != nil {
					return err
				}
			}
		}
		return nil
	}))
	done()

	s, done = openBulk(t, dir)
	defer done()
	must(t, s.kv.View(func(tx backend.Txn) error {
		for _, e := range ld.ents {
			for _, k := range [][]byte{backend.ChunkKey(e.ino, 0), backend.MetaKey(e.ino), backend.InodeKey(e.ino)} {
				if _, err := tx.Get(k); !errors.Is(err, backend.ErrNotFound) {
					t.Errorf("key %q of loaded inode %d after the undo: %v", k, e.ino, err)
				}
			}
		}
		return nil
	}))
	fsckClean(t, s)
}

// TestBulkLoadRefused: a KV that takes no load (not opened for bulk
// loads) leaves the Bulk on batches, and what they write stays at the
// next start (a load's record, written before the refusal, must not
// undo it).
func TestBulkLoadRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := func() (*Store, func()) {
		kv, err := backend.OpenBadger(dir, backend.Options{})
		must(t, err)
		s, err := Open(kv, Options{ScratchAge: -1})
		must(t, err)
		return s, func() { s.Close(); kv.Close() }
	}
	s, done := open()
	b := s.NewBulk()
	if err := b.StartLoad(); !errors.Is(err, backend.ErrNoLoad) {
		t.Fatalf("StartLoad: %v", err)
	}
	// The same after a refusal that came once the numbers were leased.
	s.mu.Lock()
	must(t, s.leaseInos(loadInos))
	s.unlock()
	kv := s.kv.(backend.Loader)
	if _, err := kv.NewLoad(); !errors.Is(err, backend.ErrNoLoad) {
		t.Fatalf("NewLoad: %v", err)
	}
	s.idNext = s.idEnd // as StartLoad does then, but the record stays
	want := loadTree(t, b)
	must(t, b.Finish())
	done()
	s, done = open()
	defer done()
	for p := range want {
		if _, err := s.Resolve(p); err != nil {
			t.Fatalf("%s after a restart: %v", p, err)
		}
	}
	fsckClean(t, s)
}
