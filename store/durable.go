package store

import (
	"errors"
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
		errs = append(errs, s.blobs.SyncDirty()) // the bulk, commits going on
		defer s.blobs.Exclusive()()
		errs = append(errs, s.blobs.SyncDirty()) // what came in meanwhile
	}
	if u, ok := s.kv.(unsyncedKV); !force && ok && !u.Unsynced() && (s.blobs == nil || !s.blobs.Pending()) {
		return errors.Join(errs...)
	}
	mark := 0
	if s.blobs != nil {
		mark = s.blobs.Retired()
	}
	if err := s.kv.Sync(); err != nil {
		return errors.Join(append(errs, err)...)
	}
	if s.blobs != nil {
		s.blobs.Synced(mark)
	}
	return errors.Join(errs...)
}

// Flush commits the pending changes of ino (close), unless a passthrough
// session defers it (passthrough.go).
func (s *Store) Flush(ino uint64) error {
	if f := s.openState(ino); f != nil {
		if s.deferFlush(f) {
			return nil
		}
		return s.commit(f)
	}
	return nil
}

// Fsync commits ino and makes the store durable.
func (s *Store) Fsync(ino uint64) error {
	if f := s.openState(ino); f != nil {
		f.mu.Lock()
		err := s.syncBlob(f)
		f.mu.Unlock()
		if err != nil {
			return err
		}
		if err := s.commit(f); err != nil {
			return err
		}
		if s.blobs != nil {
			// The commit may have named a passthrough session's file.
			if err := s.blobs.SyncNew(ino); err != nil {
				return err
			}
		}
	}
	return s.Sync()
}

// Sync makes every committed change durable, blob data before the KV
// (durable.go).
func (s *Store) Sync() error { return s.syncOrdered(true) }
