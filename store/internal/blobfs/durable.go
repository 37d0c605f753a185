package blobfs

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Durability: the periodic sync (the store's, durable.go) makes blob data
// durable before the KV records that point at it. A commit that points at
// a generation marks it dirty and holds the barrier's read side until its
// KV write (PointAt); the sync syncs the dirty generations and the shard
// directories of new blobs (SyncDirty), then once more holding the write
// side (Exclusive), then syncs the KV and tells the Dir (Synced), which
// only then deletes the generations replaced before it.

// pointAt marks generation gen of ino as pointed at by a commit about to
// be written, and holds the barrier until the returned func is called.
func (b *Dir) PointAt(ino, gen uint64) (done func()) {
	b.barrier.RLock()
	b.mu.Lock()
	if b.dirty == nil {
		b.dirty = map[ID]bool{}
	}
	b.dirty[ID{Ino: ino, Gen: gen}] = true
	b.mu.Unlock()
	return b.barrier.RUnlock
}

// syncDirty syncs the data of the dirty generations (a removed one is
// skipped) and the shard directories of new blobs. What fails stays marked
// for the next sync.
func (b *Dir) SyncDirty() error {
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
		if err := syncPath(b.Path(id.Ino, id.Gen), unix.O_RDONLY); err != nil {
			b.mu.Lock()
			if b.dirty == nil {
				b.dirty = map[ID]bool{}
			}
			b.dirty[id] = true
			b.mu.Unlock()
			errs = append(errs, err)
		}
	}
	dirs := map[string][]uint64{}
	for ino := range fresh {
		d := filepath.Dir(b.Path(ino, 1))
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

// Exclusive takes the write side of the barrier (the periodic sync's last
// round: no commit can point at a blob meanwhile); call unlock after the
// KV sync.
func (b *Dir) Exclusive() (unlock func()) {
	b.barrier.Lock()
	return b.barrier.Unlock
}

// Unsynced counts the generations and new directories a sync still has to
// make durable.
func (b *Dir) Unsynced() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.dirty) + len(b.fresh)
}

// syncNew makes the name of a blob of ino created since its last sync
// durable. The entry goes once the directory is synced, so a second
// caller meanwhile syncs it too rather than returning early.
func (b *Dir) SyncNew(ino uint64) error {
	b.mu.Lock()
	seq := b.fresh[ino]
	b.mu.Unlock()
	if seq == 0 {
		return nil
	}
	if err := syncPath(filepath.Dir(b.Path(ino, 1)), unix.O_RDONLY|unix.O_DIRECTORY); err != nil {
		return err
	}
	b.mu.Lock()
	if b.fresh[ino] == seq {
		delete(b.fresh, ino)
	}
	b.mu.Unlock()
	return nil
}

// Retired is a mark to give Synced: how many generations were retired
// before a KV sync begins.
func (b *Dir) Retired() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.stale)
}

// Synced deletes the generations retired before a KV sync that succeeded
// (the first mark of them, Retired before the sync): one retired during
// the sync may have been replaced by a write the sync did not take.
func (b *Dir) Synced(mark int) {
	b.mu.Lock()
	if b.keeps > 0 {
		b.mu.Unlock()
		return // a later sync deletes them
	}
	mark = min(mark, len(b.stale))
	stale := b.stale[:mark:mark]
	b.stale = append([]ID(nil), b.stale[mark:]...)
	b.mu.Unlock()
	for _, id := range stale {
		os.Remove(b.Path(id.Ino, id.Gen))
	}
	b.mu.Lock()
	for _, id := range stale {
		if b.retiring[id]--; b.retiring[id] <= 0 {
			delete(b.retiring, id)
		}
	}
	b.mu.Unlock()
}

// pending reports whether generations wait for a sync to be deleted.
func (b *Dir) Pending() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.stale) > 0
}
