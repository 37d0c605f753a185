package store

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPeriodicSyncBlobDataFirst: the store's periodic sync makes a
// committed blob's data durable along with the KV that points at it, and
// does nothing when nothing changed.
func TestPeriodicSyncBlobDataFirst(t *testing.T) {
	t.Parallel()
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
	f, err := os.Open(s.blobs.Path(ino, gen))
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
	left := s.blobs.Unsynced()
	if left != 0 {
		t.Fatalf("%d blobs still marked after the sync", left)
	}
	must(t, s.syncCommitted()) // nothing to do
}

// TestCloseSyncsBlobData: closing the store (a clean unmount) leaves a
// committed blob's data on disk, not only the KV that points at it.
func TestCloseSyncsBlobData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var sfs unix.Statfs_t
	must(t, unix.Statfs(dir, &sfs))
	ext4 := sfs.Type == unix.EXT4_SUPER_MAGIC // FIEMAP's delayed allocation flag is ext4's
	s, kv := openBlobStore(t, dir)
	defer kv.Close()
	ino := writeFile(t, s, RootIno, "big.bin", pattern(100<<10, 6))
	p := s.blobs.Path(ino, blobGen(t, s, ino))
	f, err := os.Open(p)
	must(t, err)
	defer f.Close()
	if ext4 && !delalloc(t, f) {
		t.Fatal("the blob's data reached the disk before the close (cannot tell the close did it)")
	}
	must(t, s.Close())
	if ext4 && delalloc(t, f) {
		t.Fatal("the store closed with a committed blob's data not on disk")
	}
}
