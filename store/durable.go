package store

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Durability without fsync. The KV does not sync its log on commit (that
// is what Sync and fsync are for); the store's clock (flusher.go) syncs
// what was committed every few seconds instead, as a filesystem commits
// its journal, so a power loss takes at most the last seconds of work.
//
// A record may point at a blob file whose data the kernel still holds in
// its page cache. The periodic sync therefore syncs the data of every blob
// generation a commit pointed at since the last sync, then the shard
// directories of new blobs, and only then the KV: no record is durable
// before the content it describes. A commit that points at a blob holds
// the barrier (read side) from marking the blob dirty until its KV write;
// the sync takes the write side for its last round, so a commit cannot
// slip its record in between the data sync and the KV sync.

// pointAt marks generation gen of ino as pointed at by a commit about to
// be written, and holds the barrier until the returned func is called.
func (b *blobDir) pointAt(ino, gen uint64) (done func()) {
	b.barrier.RLock()
	b.mu.Lock()
	if b.dirty == nil {
		b.dirty = map[blobID]bool{}
	}
	b.dirty[blobID{ino, gen}] = true
	b.mu.Unlock()
	return b.barrier.RUnlock
}

// syncDirty syncs the data of the dirty generations (a removed one is
// skipped) and the shard directories of new blobs.
func (b *blobDir) syncDirty() error {
	b.mu.Lock()
	dirty, fresh := b.dirty, b.fresh
	b.dirty, b.fresh = nil, nil
	b.mu.Unlock()
	var errs []error
	keep := func(id blobID) {
		b.mu.Lock()
		if b.dirty == nil {
			b.dirty = map[blobID]bool{}
		}
		b.dirty[id] = true
		b.mu.Unlock()
	}
	for id := range dirty {
		if err := syncPath(b.path(id.ino, id.gen), unix.O_RDONLY); err != nil {
			keep(id)
			errs = append(errs, err)
		}
	}
	dirs := map[string]bool{}
	for ino := range fresh {
		dirs[filepath.Dir(b.path(ino, 1))] = true
	}
	for d := range dirs {
		if err := syncPath(d, unix.O_RDONLY|unix.O_DIRECTORY); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		// The shards to sync again are not known by inode any more:
		// mark every fresh inode again.
		b.mu.Lock()
		if b.fresh == nil {
			b.fresh = map[uint64]bool{}
		}
		for ino := range fresh {
			b.fresh[ino] = true
		}
		b.mu.Unlock()
	}
	return errors.Join(errs...)
}

// syncPath fsyncs the file or directory at p; one that is gone is fine.
func syncPath(p string, flags int) error {
	fd, err := unix.Open(p, flags|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return &os.PathError{Op: "fsync", Path: p, Err: err}
	}
	return nil
}

// unsyncedKV is what a KV may tell of itself (backend's Badger does).
type unsyncedKV interface{ Unsynced() bool }

// syncCommitted makes everything committed so far durable, blob data
// first (see above). It does nothing when nothing changed.
func (s *Store) syncCommitted() error {
	if s.blobs != nil {
		if err := s.blobs.syncDirty(); err != nil { // the bulk, commits going on
			return err
		}
		s.blobs.barrier.Lock()
		defer s.blobs.barrier.Unlock()
		if err := s.blobs.syncDirty(); err != nil { // what came in meanwhile
			return err
		}
	}
	if u, ok := s.kv.(unsyncedKV); ok && !u.Unsynced() && (s.blobs == nil || !s.blobs.pending()) {
		return nil
	}
	return s.Sync()
}
