// Package storetest holds the helpers of tests that use a store through
// its public API (package store_test, lifecycle, transfer): an in-memory
// store, and writes and reads that fail the test on any error.
package storetest

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

// NewStore opens a store with options o on an in-memory Badger, closed
// when the test ends.
func NewStore(t testing.TB, o store.Options) *store.Store {
	t.Helper()
	return open(t, "", backend.Options{InMemory: true}, o)
}

// NewBulkStore opens a store with options o on an on-disk Badger opened
// for bulk loads, as the import command's own (backend.Options.Bulk),
// closed when the test ends.
func NewBulkStore(t testing.TB, o store.Options) *store.Store {
	t.Helper()
	return open(t, t.TempDir(), backend.Options{Bulk: true}, o)
}

func open(t testing.TB, dir string, bo backend.Options, o store.Options) *store.Store {
	t.Helper()
	kv, err := backend.OpenBadger(dir, bo)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(kv, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); kv.Close() })
	return s
}

// Must fails the test on err.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// WriteFile creates dir/name holding data, in one open, and returns it.
func WriteFile(t testing.TB, s *store.Store, dir uint64, name string, data []byte) uint64 {
	t.Helper()
	i, err := s.Create(dir, name, 0o644, store.Owner{})
	Must(t, err)
	Must(t, s.Open(i.Ino, false))
	_, err = s.WriteAt(i.Ino, data, 0)
	Must(t, err)
	Must(t, s.Release(i.Ino))
	return i.Ino
}

// ReadAll reads the whole content of ino.
func ReadAll(t testing.TB, s *store.Store, ino uint64) []byte {
	t.Helper()
	a, err := s.Attr(ino)
	Must(t, err)
	buf := make([]byte, a.Size+10)
	n, err := s.ReadAt(ino, buf, 0)
	Must(t, err)
	return buf[:n]
}

// Rewrite replaces the content of ino in one open (as an editor's save or
// os.WriteFile does: truncate, write, close).
func Rewrite(t testing.TB, s *store.Store, ino uint64, data []byte) {
	t.Helper()
	Must(t, s.Open(ino, false))
	Must(t, s.Truncate(ino, 0))
	_, err := s.WriteAt(ino, data, 0)
	Must(t, err)
	Must(t, s.Release(ino))
}

// AppendBytes appends data to ino in one open.
func AppendBytes(t testing.TB, s *store.Store, ino uint64, data []byte) {
	t.Helper()
	Must(t, s.Open(ino, false))
	_, err := s.Append(ino, data)
	Must(t, err)
	Must(t, s.Release(ino))
}

// MkdirAll makes the directory p and its parents (0755, root), as the
// store does for what it writes itself, and returns it.
func MkdirAll(t testing.TB, s *store.Store, p string) uint64 {
	t.Helper()
	ino := uint64(store.RootIno)
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." {
			continue
		}
		i, err := s.Lookup(ino, part)
		if errors.Is(err, syscall.ENOENT) {
			i, err = s.Mkdir(ino, part, 0o755, store.Owner{})
		}
		Must(t, err)
		ino = i.Ino
	}
	return ino
}

// Resolve is the inode at the store path p.
func Resolve(t testing.TB, s *store.Store, p string) uint64 {
	t.Helper()
	ino, err := s.Resolve(p)
	Must(t, err)
	return ino
}

// DirIno is the inode of the top-level directory name.
func DirIno(t testing.TB, s *store.Store, name string) uint64 {
	t.Helper()
	return Resolve(t, s, "/"+name)
}

// FsckClean fails the test unless fsck finds nothing wrong.
func FsckClean(t testing.TB, s *store.Store) {
	t.Helper()
	r, err := s.Fsck(false)
	Must(t, err)
	if !r.Clean {
		t.Fatalf("fsck: %v", r.Problems)
	}
}

// Pattern is n bytes that differ from one seed to another.
func Pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(k%251) ^ seed
	}
	return b
}
