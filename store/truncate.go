package store

import (
	"errors"
	"syscall"
)

// setSize updates the cached size (and times) of an inode being written.
func (s *Store) setSize(i *Inode, size uint64, touch bool) {
	now := s.now().UnixNano()
	s.mu.Lock()
	s.icMu.Lock()
	i = s.inodes[i.Ino]
	if i != nil {
		i.Size = size
		if touch {
			i.Mtime, i.Ctime = now, now
		}
	}
	s.icMu.Unlock()
	s.unlock()
}

// truncateLocked sets the size of f's inode i to size (Truncate, and an
// import's overwrite). Caller holds f.mu.
func (s *Store) truncateLocked(f *openFile, i *Inode, size uint64) error {
	if size > MaxFileSize {
		return syscall.EFBIG
	}
	s.icMu.RLock()
	old := i.Size
	s.icMu.RUnlock()
	if s.blobs != nil && (f.blob != nil || s.blobGenOf(i) != 0) {
		if err := s.truncateBlob(f, i, size, old); err != nil {
			return err
		}
	} else if size < old {
		idx := uint32(size / ChunkSize)
		if size%ChunkSize != 0 {
			c, err := s.dirtyChunk(f, idx, false)
			if err != nil {
				return err
			}
			if keep := int(size % ChunkSize); len(c) > keep {
				f.dirty[idx] = c[:keep]
			}
			idx++
		}
		for k := range f.dirty {
			if k >= idx {
				delete(f.dirty, k)
				f.dirtyBytes -= ChunkSize
			}
		}
		for k := range f.staged {
			if k >= idx {
				delete(f.staged, k) // stale in the stage too
			}
		}
		f.truncFloor = min(f.truncFloor, uint64(idx)*ChunkSize)
	}
	if size != old {
		f.appendOnly = false
	}
	// Even to the same size: the new times are committed too (the
	// content's hash tells the commit whether it is a new version).
	f.modified = true
	if size < f.hashPos {
		f.hash = nil
	}
	s.setSize(i, size, true)
	return nil
}

// Truncate sets the size of ino, committing at once when no handle is open.
func (s *Store) Truncate(ino uint64, size uint64) error {
	i, err := s.inode(ino)
	if err != nil {
		return err
	}
	if i.IsDir() {
		return syscall.EISDIR
	}
	if !i.IsReg() {
		return syscall.EINVAL
	}
	if err := s.pinned(ino); err != nil {
		return err
	}
	if err := s.Open(ino, false); err != nil {
		return err
	}
	f := s.openState(ino) // registered: Open holds a handle until Release
	if err := s.unpack(ino); err != nil {
		return errors.Join(err, s.Release(ino))
	}
	f.mu.Lock()
	err = s.refreshStale(f)
	if err == nil {
		i, err = s.inode(ino) // the cached inode now, not the one before Open
	}
	if err == nil {
		err = s.truncateLocked(f, i, size)
	}
	f.mu.Unlock()
	return errors.Join(err, s.Release(ino))
}
