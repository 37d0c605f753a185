package store

import (
	"os"
	"testing"
)

// TestPeriodicSyncBlobDataFirst: the store's periodic sync makes a
// committed blob's data durable along with the KV that points at it, and
// does nothing when nothing changed.
func TestPeriodicSyncBlobDataFirst(t *testing.T) {
	s, ext4 := openScratchBlobStore(t)
	u, ok := s.kv.(unsyncedKV)
	if !ok {
		t.Fatal("the Badger KV does not say whether it is synced")
	}
	must(t, s.syncCommitted())
	if u.Unsynced() {
		t.Fatal("unsynced after a sync")
	}
	ino := writeFile(t, s, RootIno, "big.bin", pattern(100<<10, 5))
	gen := blobGen(t, s, ino)
	if gen == 0 {
		t.Fatal("a 100 KiB file has no blob")
	}
	if !u.Unsynced() {
		t.Fatal("a commit left the KV synced")
	}
	f, err := os.Open(s.blobs.path(ino, gen))
	must(t, err)
	defer f.Close()
	if ext4 && !delalloc(t, f) {
		t.Fatal("the blob's data reached the disk before any sync (cannot tell the sync did it)")
	}
	must(t, s.syncCommitted())
	if u.Unsynced() {
		t.Fatal("the periodic sync left the KV unsynced")
	}
	if ext4 && delalloc(t, f) {
		t.Fatal("the KV pointing at the blob is synced, the blob's data is not")
	}
	s.blobs.mu.Lock()
	left := len(s.blobs.dirty) + len(s.blobs.fresh)
	s.blobs.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d blobs still marked after the sync", left)
	}
	must(t, s.syncCommitted()) // nothing to do
}
