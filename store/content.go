package store

import (
	"crypto/sha256"
	"encoding"
	"errors"
	"syscall"

	"github.com/mnemofs/mnemofs/store/internal/blobfs"

	"github.com/mnemofs/mnemofs/backend"
)

// Reading and writing content through the open state (openfile.go).

// spillBytes is how much dirty data an inode may hold before full chunks are
// written to the KV ahead of the commit.
const spillBytes = 2 << 20

// ReadAt reads from ino at off into dest and returns the bytes read (short
// only at end of file).
func (s *Store) ReadAt(ino uint64, dest []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	if b, ok, err := s.partialOf(ino); ok {
		// A shared log: the lines the store's user sees (loglines.go).
		if err != nil || off >= int64(len(b)) {
			return 0, err
		}
		return copy(dest, b[off:]), nil
	}
	return s.readAt(ino, dest, off)
}

// readAt is ReadAt of every byte, whoever the store's user is.
func (s *Store) readAt(ino uint64, dest []byte, off int64) (int, error) {
	f := s.openState(ino)
	if f != nil {
		f.mu.Lock()
		s.takeRemote(f)
		s.ptSync(f)
		if f.blob == nil {
			if i, err := s.inode(ino); err == nil && s.blobGenOf(i) != 0 {
				// Committed content in a blob file, which f does not
				// change: read it without f.mu, so that the kernel's
				// readahead requests, sent together, reach the disk
				// together.
				f.mu.Unlock()
				return s.readLocked(ino, nil, dest, uint64(off))
			}
		}
		defer f.mu.Unlock()
	}
	if n, ok, err := s.readHot(ino, f, dest, uint64(off)); ok {
		return n, err
	}
	return s.readLocked(ino, f, dest, uint64(off))
}

func (s *Store) readLocked(ino uint64, f *openFile, dest []byte, off uint64) (int, error) {
	var end, id uint64
	for {
		i, err := s.inode(ino)
		if err != nil {
			return 0, err
		}
		s.icMu.RLock()
		size, gen := i.Size, i.Blob
		id = i.chunkID()
		s.icMu.RUnlock()
		if off >= size {
			return 0, nil
		}
		end = min(size, off+uint64(len(dest)))
		n := int(end - off)
		if f != nil && f.blob != nil {
			return n, blobfs.ReadFull(f.blob, dest[:n], off)
		}
		if gen == 0 {
			break
		}
		if inBlob, err := s.readCommittedBlob(ino, gen, dest[:n], off); inBlob {
			return n, err
		}
		// Moved into the KV meanwhile (foldIntoKV): the size may have
		// changed since, too.
	}
	n := int(end - off)
	dest = dest[:n]
	err := s.kv.View(func(t backend.Txn) error {
		for pos := off; pos < end; {
			idx := uint32(pos / ChunkSize)
			cstart := uint64(idx) * ChunkSize
			cend := min(cstart+ChunkSize, end)
			chunk, err := s.chunk(t, f, ino, id, idx)
			if err != nil {
				return err
			}
			out := dest[pos-off : cend-off]
			lo := pos - cstart
			c := 0
			if lo < uint64(len(chunk)) {
				c = copy(out, chunk[lo:])
			}
			clear(out[c:])
			pos = cend
		}
		return nil
	})
	return n, err
}

// chunk returns chunk idx of ino as currently seen (dirty, written to the
// open state's stage, stale after a truncation, or committed under the
// inode's chunk id, Inode.chunkID). The result may be shorter than
// ChunkSize; missing bytes are zeros. It must not be modified.
func (s *Store) chunk(t backend.Txn, f *openFile, ino, id uint64, idx uint32) ([]byte, error) {
	if f != nil {
		if c, ok := f.dirty[idx]; ok {
			return c, nil
		}
		if f.staged[idx] {
			id = f.stage
		} else if uint64(idx)*ChunkSize >= f.truncFloor {
			return nil, nil
		}
	}
	c, err := t.Get(backend.ChunkKey(id, idx))
	if errors.Is(err, backend.ErrNotFound) {
		if idx == 0 {
			return s.packedChunk(t, ino) // an archived file may be in a pack
		}
		return nil, nil
	}
	return c, err
}

// dirtyChunk returns a writable copy of chunk idx, loading it if needed:
// not when the write covers the whole chunk, nor past the stored data.
// Caller holds f.mu.
func (s *Store) dirtyChunk(f *openFile, idx uint32, whole bool) ([]byte, error) {
	if c, ok := f.dirty[idx]; ok {
		return c, nil
	}
	if f.dirty == nil {
		f.dirty = map[uint32][]byte{}
	}
	if whole || uint64(idx)*ChunkSize >= f.storedEnd {
		f.dirty[idx] = nil
		f.dirtyBytes += ChunkSize
		return nil, nil
	}
	id, err := s.chunkIDOf(f.ino)
	if err != nil {
		return nil, err
	}
	var c []byte
	if tail, ok := s.tails.Get(f.ino); ok && tail.Index == idx && uint64(idx)*ChunkSize < f.truncFloor && !f.staged[idx] {
		c = append(make([]byte, 0, len(tail.Data)+512), tail.Data...)
	} else if err := s.kv.View(func(t backend.Txn) error {
		old, err := s.chunk(t, f, f.ino, id, idx)
		c = append([]byte(nil), old...)
		return err
	}); err != nil {
		return nil, err
	}
	f.dirty[idx] = c
	f.dirtyBytes += ChunkSize
	return c, nil
}

// WriteAt writes data at off into ino, which must be open.
func (s *Store) WriteAt(ino uint64, data []byte, off int64) (int, error) {
	return s.write(ino, data, off, false)
}

// Append writes data at the end of ino, which must be open; finding the
// end and writing are one step, so concurrent appends never overlap.
func (s *Store) Append(ino uint64, data []byte) (int, error) {
	return s.write(ino, data, 0, true)
}

func (s *Store) write(ino uint64, data []byte, off int64, atEnd bool) (int, error) {
	f := s.openState(ino)
	if f == nil {
		return 0, syscall.EBADF
	}
	if off < 0 {
		return 0, syscall.EINVAL
	}
	if err := s.mayWrite(ino, atEnd); err != nil {
		return 0, err // immutable, or append-only (chattr; flags.go)
	}
	if err := s.unpack(ino); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return s.writeLocked(f, data, off, atEnd)
}

// writeLocked is write with f.mu held (and the file unpacked).
func (s *Store) writeLocked(f *openFile, data []byte, off int64, atEnd bool) (int, error) {
	if err := s.refreshStale(f); err != nil {
		return 0, err
	}
	i, err := s.inode(f.ino)
	if err != nil {
		return 0, err
	}
	s.icMu.RLock()
	size := i.Size
	s.icMu.RUnlock()
	if atEnd {
		off = int64(size)
	}
	end := uint64(off) + uint64(len(data))
	if end > MaxFileSize {
		return 0, syscall.EFBIG
	}
	if err := s.space.need(len(data)); err != nil {
		return 0, err
	}
	if uint64(off) != size {
		f.appendOnly = false
	}
	if !f.masked && !f.modified && f.blob == nil && s.blobGenOf(i) == 0 && s.storeMasked(f.ino) {
		// Opened for reading first (the kernel's release of that handle
		// may come after this writer's open, which then joined it): the
		// first write makes it masked, as an open for writing would have.
		f.masked = true
	}
	if f.masked && end > maxMasked {
		return 0, syscall.EFBIG // held in memory until masked (redact.go)
	}
	if s.blobs != nil && !f.masked && (f.blob != nil || end > ChunkSize || s.blobGenOf(i) != 0) {
		if err := s.writeBlob(f, i, data, uint64(off), size); err != nil {
			return 0, err
		}
		s.feedHash(f, data, uint64(off))
		f.modified = true
		s.setSize(i, max(size, end), true)
		return len(data), nil
	}
	for pos := uint64(off); pos < end; {
		idx := uint32(pos / ChunkSize)
		cstart := uint64(idx) * ChunkSize
		cend := min(cstart+ChunkSize, end)
		c, err := s.dirtyChunk(f, idx, pos == cstart && cend == cstart+ChunkSize)
		if err != nil {
			return 0, err
		}
		if need := int(cend - cstart); len(c) < need {
			c = append(c, make([]byte, need-len(c))...) // zeros up to the write
		}
		copy(c[pos-cstart:], data[pos-uint64(off):cend-uint64(off)])
		f.dirty[idx] = c
		pos = cend
	}
	s.feedHash(f, data, uint64(off))
	f.modified = true
	s.setSize(i, max(size, end), true)
	if f.dirtyBytes >= spillBytes && !f.masked {
		if err := s.spill(f); err != nil {
			return 0, err
		}
	}
	return len(data), nil
}

// feedHash continues the running hash with a write at off, or drops it
// when the write is not sequential. Caller holds f.mu.
func (s *Store) feedHash(f *openFile, data []byte, off uint64) {
	if f.hash == nil && !f.hashTried && off == f.committedSize {
		f.hashTried = true
		if f.committedSize == 0 {
			f.hash, f.hashPos = sha256.New(), 0
		} else if tail, ok := s.tails.Get(f.ino); ok && tail.Size == f.committedSize {
			// Appended to a moment ago: no need to read the record.
			f.settled = tail.Settled
			h := sha256.New()
			if tail.Hash != nil && h.(encoding.BinaryUnmarshaler).UnmarshalBinary(tail.Hash) == nil {
				f.hash, f.hashPos = h, f.committedSize
			}
		} else if rec, err := s.record(f.ino); err == nil {
			f.settled = rec.Error == "" && rec.BodyOffset > 0 && uint64(rec.BodyOffset) <= f.committedSize
			if rec.HashState != nil && rec.HashSize == f.committedSize {
				h := sha256.New()
				if h.(encoding.BinaryUnmarshaler).UnmarshalBinary(rec.HashState) == nil {
					f.hash, f.hashPos = h, f.committedSize
				}
			}
		}
	}
	if f.hash == nil {
		return
	}
	if off != f.hashPos {
		f.hash = nil
		return
	}
	f.hash.Write(data)
	f.hashPos += uint64(len(data))
}
