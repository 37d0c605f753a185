package store

import (
	"errors"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// TestGoneHostsOrphansAreFreed: a file unlinked while open on host A is
// kept while A is there, whoever sweeps, and freed by host B's sweep once
// A is gone (closed here without closing the file: its presence is
// dropped, as a killed host's lapses).
func TestGoneHostsOrphansAreFreed(t *testing.T) {
	t.Parallel()
	eps, prefix := testetcd.Shared(t), testetcd.Prefix(t)
	open := func() *Store {
		kv, err := backend.OpenEtcd(backend.EtcdOptions{Endpoints: eps, Prefix: prefix})
		must(t, err)
		t.Cleanup(func() { kv.Close() })
		s, err := Open(kv, Options{}) // a file removed young is deleted, not trashed
		must(t, err)
		return s
	}
	a, b := open(), open()
	t.Cleanup(func() { b.Close() })
	ino := writeFile(t, a, RootIno, "open.md", []byte("kept while open\n"))
	must(t, a.Open(ino, true))
	if _, err := a.Remove(RootIno, "open.md"); err != nil { // young: deleted, an orphan while open
		t.Fatal(err)
	}
	inodeThere := func() bool {
		err := b.kv.View(func(t backend.Txn) error { _, err := t.Get(backend.InodeKey(ino)); return err })
		if err != nil && !errors.Is(err, backend.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	must(t, b.sweepOrphans())
	if !inodeThere() {
		t.Fatal("B freed an orphan that A still has open")
	}
	buf := make([]byte, 64)
	if n, err := a.ReadAt(ino, buf, 0); err != nil || string(buf[:n]) != "kept while open\n" {
		t.Fatalf("A reads its open, unlinked file: %q, %v", buf[:n], err)
	}
	must(t, a.Close()) // gone, its file still open
	must(t, b.sweepOrphans())
	if inodeThere() {
		t.Fatal("the orphan of a host that is gone was not freed")
	}
}
