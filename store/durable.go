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
// skipped) and the shard directories of new blobs. What fails stays marked
// for the next sync.
func (b *blobDir) syncDirty() error {
	b.mu.Lock()
	dirty := b.dirty
	b.dirty = nil
	// fresh entries stay until their directory is synced: an Fsync
	// meanwhile (syncNew) must still see them and sync it itself.
	fresh := make(map[uint64]uint64, len(b.fresh))
	for ino, seq := range b.fresh {
		fresh[ino] = seq
	}
	b.mu.Unlock()
	var errs []error
	for id := range dirty {
		if err := syncPath(b.path(id.ino, id.gen), unix.O_RDONLY); err != nil {
			b.mu.Lock()
			if b.dirty == nil {
				b.dirty = map[blobID]bool{}
			}
			b.dirty[id] = true
			b.mu.Unlock()
			errs = append(errs, err)
		}
	}
	dirs := map[string][]uint64{}
	for ino := range fresh {
		d := filepath.Dir(b.path(ino, 1))
		dirs[d] = append(dirs[d], ino)
	}
	for d, inos := range dirs {
		err := syncPath(d, unix.O_RDONLY|unix.O_DIRECTORY)
		if errors.Is(err, unix.EINVAL) {
			err = nil // a filesystem that does not sync directories
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b.mu.Lock()
		for _, ino := range inos {
			if b.fresh[ino] == fresh[ino] { // not created again since
				delete(b.fresh, ino)
			}
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

// syncCommitted is the periodic sync: syncOrdered, when anything changed.
func (s *Store) syncCommitted() error { return s.syncOrdered(false) }

// syncOrdered makes everything committed so far durable, blob data first
// (see above); unless force, the KV only when it has unsynced writes or
// replaced blobs wait. A blob that fails to sync does not hold the KV
// back (its data may be lost either way): the error is returned after.
func (s *Store) syncOrdered(force bool) error {
	var errs []error
	if s.blobs != nil {
		errs = append(errs, s.blobs.syncDirty()) // the bulk, commits going on
		s.blobs.barrier.Lock()
		defer s.blobs.barrier.Unlock()
		errs = append(errs, s.blobs.syncDirty()) // what came in meanwhile
	}
	if u, ok := s.kv.(unsyncedKV); !force && ok && !u.Unsynced() && (s.blobs == nil || !s.blobs.pending()) {
		return errors.Join(errs...)
	}
	if err := s.kv.Sync(); err != nil {
		return errors.Join(append(errs, err)...)
	}
	if s.blobs != nil {
		s.blobs.synced()
	}
	return errors.Join(errs...)
}
