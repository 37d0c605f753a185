package store

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fallocate(2) on an open file, as a disk answers it:
//
//   - reserving (mode 0, or FALLOC_FL_KEEP_SIZE) checks the free space
//     first (ENOSPC beyond it, as every write does: space.go); a file
//     whose content is, or grows into, a blob file (internal/blobfs) has
//     that file's blocks allocated for real, so the data directory's disk,
//     and statfs, count them. Mode 0 also sets the size to the end of the
//     range, zeros, when it is larger.
//   - FALLOC_FL_PUNCH_HOLE and FALLOC_FL_ZERO_RANGE change the content as
//     a write of zeros would (a new version, a new sha256, indexed again
//     at the commit), under the same copy-on-write rules; in a blob file
//     the zeros are a hole (punched) or unwritten blocks, not written.
//
// Anything else (collapsing or inserting a range) is EOPNOTSUPP.

// Fallocate modes.
const (
	AllocKeepSize  = unix.FALLOC_FL_KEEP_SIZE
	AllocPunchHole = unix.FALLOC_FL_PUNCH_HOLE
	AllocZeroRange = unix.FALLOC_FL_ZERO_RANGE
)

// Allocate is fallocate(2) on ino, which must be open.
func (s *Store) Allocate(ino uint64, off, length uint64, mode uint32) error {
	switch mode {
	case 0, AllocKeepSize, AllocPunchHole | AllocKeepSize, AllocZeroRange, AllocZeroRange | AllocKeepSize:
	default:
		return syscall.EOPNOTSUPP
	}
	end := off + length
	if length == 0 || end < off {
		return syscall.EINVAL
	}
	if end > MaxFileSize {
		return syscall.EFBIG
	}
	if err := s.mayWrite(ino, mode&^AllocKeepSize == 0); err != nil {
		return err // immutable; append-only allows reserving only
	}
	f := s.openState(ino)
	if f == nil {
		return syscall.EBADF
	}
	if err := s.unpack(ino); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := s.refreshStale(f); err != nil {
		return err
	}
	i, err := s.inode(ino)
	if err != nil {
		return err
	}
	s.icMu.RLock()
	size := i.Size
	s.icMu.RUnlock()
	if mode&AllocKeepSize == 0 && end > size || mode&(AllocPunchHole|AllocZeroRange) == 0 {
		// New room: what the range adds past the end.
		if err := s.space.need(int(min(length, max(end, size)-size))); err != nil {
			return err
		}
	}
	if mode&AllocPunchHole == 0 && mode&AllocZeroRange == 0 {
		return s.reserve(f, i, off, length, mode, size)
	}
	return s.zeroRange(f, i, off, end, mode, size)
}

// useBlobFor reports whether f's content is, or is to be, a blob file for
// a range ending at end. Caller holds f.mu.
func (s *Store) useBlobFor(f *openFile, i *Inode, end uint64) bool {
	return s.blobs != nil && !f.masked && (f.blob != nil || s.blobGenOf(i) != 0 || end > ChunkSize)
}

// reserve allocates [off, off+length) (mode 0 or AllocKeepSize). Caller
// holds f.mu.
func (s *Store) reserve(f *openFile, i *Inode, off, length uint64, mode uint32, size uint64) error {
	end := off + length
	if s.useBlobFor(f, i, end) {
		if err := s.fitsOnDisk(length); err != nil {
			return err
		}
		if err := s.useBlob(f, i, size); err != nil {
			return err
		}
		// Allocated blocks hold zeros: no content changes within the
		// committed bytes, so no copy is made.
		if err := fallocate(f.blob, unix.FALLOC_FL_KEEP_SIZE, off, length); err != nil {
			return err
		}
	}
	if mode&AllocKeepSize != 0 || end <= size {
		return nil
	}
	return s.truncateLocked(f, i, end)
}

// zeroRange makes [off, end) zeros (AllocPunchHole, AllocZeroRange), and
// with AllocZeroRange alone sets the size to end when larger. Caller
// holds f.mu.
func (s *Store) zeroRange(f *openFile, i *Inode, off, end uint64, mode uint32, size uint64) error {
	newSize := size
	if mode&AllocKeepSize == 0 {
		newSize = max(size, end)
	}
	zend := min(end, newSize) // past the end there is nothing to zero
	if off < zend {
		if s.useBlobFor(f, i, newSize) {
			if err := s.zeroBlob(f, i, off, zend, size); err != nil {
				return err
			}
		} else {
			if err := s.zeroChunks(f, off, zend); err != nil {
				return err
			}
		}
		f.appendOnly, f.modified = false, true
		if off < f.hashPos {
			f.hash = nil
		}
	}
	if newSize != size {
		return s.truncateLocked(f, i, newSize)
	}
	if off < zend {
		s.setSize(i, size, true)
	}
	return nil
}

// zeroBlob punches [off, end) out of f's blob (copied first, as a write
// there would be). Caller holds f.mu.
func (s *Store) zeroBlob(f *openFile, i *Inode, off, end, size uint64) error {
	if err := s.useBlob(f, i, size); err != nil {
		return err
	}
	if err := s.beforeOverwrite(f, off, size); err != nil {
		return err
	}
	err := fallocate(f.blob, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, end-off)
	if errors.Is(err, syscall.EOPNOTSUPP) {
		// A disk that cannot punch holes: write the zeros.
		err = nil
		zeros := make([]byte, min(end-off, 1<<20))
		for pos := off; pos < end && err == nil; pos += uint64(len(zeros)) {
			n := min(uint64(len(zeros)), end-pos)
			_, err = f.blob.WriteAt(zeros[:n], int64(pos))
		}
	}
	return err
}

// zeroChunks zeros [off, end) of f's chunks. Caller holds f.mu.
func (s *Store) zeroChunks(f *openFile, off, end uint64) error {
	for pos := off; pos < end; {
		idx := uint32(pos / ChunkSize)
		cstart := uint64(idx) * ChunkSize
		cend := min(cstart+ChunkSize, end)
		c, err := s.dirtyChunk(f, idx, false)
		if err != nil {
			return err
		}
		// A chunk reads as zeros past its bytes: cut it, or clear.
		lo, hi := int(pos-cstart), int(cend-cstart)
		switch {
		case lo >= len(c):
		case hi >= len(c):
			c = c[:lo]
		default:
			clear(c[lo:hi])
		}
		f.dirty[idx] = c
		pos = cend
	}
	if f.dirtyBytes >= spillBytes && !f.masked {
		return s.spill(f)
	}
	return nil
}

// beforeOverwrite is what writeBlob does before changing committed bytes
// of f's blob at off: a passthrough session's blob is changed in place
// (live mark), any other is copied first. Caller holds f.mu.
func (s *Store) beforeOverwrite(f *openFile, off, size uint64) error {
	if sess := f.sess.Load(); sess != nil && off < f.committedSize {
		sess.appends = false
		s.markLive(f, sess)
		return nil
	}
	if off < f.committedSize && !f.blobNew && !s.overwriteInPlace(f) {
		return s.cowBlob(f, size)
	}
	return nil
}

// fitsOnDisk returns ENOSPC when n bytes are more than the blob
// directory's disk has free: a filesystem allocates what it can of a
// reservation too large before it fails, filling the disk for everyone
// meanwhile. (The free-space guard, when the store has one, refused it
// already: this is for a store opened without, as in tests.)
func (s *Store) fitsOnDisk(n uint64) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.opts.BlobDir, &st); err != nil {
		return nil // cannot tell: the disk says
	}
	if free := st.Bavail * uint64(st.Bsize); n > free {
		return syscall.ENOSPC
	}
	return nil
}

func fallocate(f *os.File, mode uint32, off, length uint64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), mode, int64(off), int64(length))
		if err != syscall.EINTR {
			return err
		}
	}
}

// SeekData is lseek(2) with SEEK_DATA (hole false) or SEEK_HOLE on ino
// from off. The holes are those of its blob file (a punched range, what
// a truncation added); content in KV chunks has none but the end.
func (s *Store) SeekData(ino, off uint64, hole bool) (uint64, error) {
	i, err := s.Attr(ino)
	if err != nil {
		return 0, err
	}
	if off >= i.Size {
		return 0, syscall.ENXIO
	}
	var bf *os.File
	f := s.openState(ino)
	if f != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		bf = f.blob
	}
	if bf == nil && i.Blob != 0 && s.blobs != nil {
		if bf, err = s.blobs.Open(ino, i.Blob); err != nil {
			return 0, err
		}
		defer bf.Close()
	}
	if bf == nil {
		if hole {
			return i.Size, nil
		}
		return off, nil
	}
	whence := unix.SEEK_DATA
	if hole {
		whence = unix.SEEK_HOLE
	}
	r, err := unix.Seek(int(bf.Fd()), int64(off), whence)
	switch {
	case errors.Is(err, syscall.ENXIO):
		// Past the blob's end: zeros up to the size, a hole.
		if hole {
			return off, nil
		}
		return 0, syscall.ENXIO
	case err != nil:
		return 0, err
	case hole:
		return min(uint64(r), i.Size), nil
	case uint64(r) >= i.Size:
		return 0, syscall.ENXIO
	}
	return uint64(r), nil
}
