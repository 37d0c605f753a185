package store

import (
	"errors"
	"fmt"
	"io"
	"math"
	"syscall"

	"github.com/mnemofs/mnemofs/store/internal/blobfs"

	"github.com/mnemofs/mnemofs/backend"
)

// The store's side of blob content (store/internal/blobfs has the files themselves).

// blobGenOf returns the committed blob generation of i (0: KV chunks).
func (s *Store) blobGenOf(i *Inode) uint64 {
	s.icMu.RLock()
	defer s.icMu.RUnlock()
	return i.Blob
}

// readCommittedBlob reads committed blob content of ino (generation gen)
// for a reader that holds no blob of it. It reports false, with no error,
// when the content moved back into the KV meanwhile (foldIntoKV).
func (s *Store) readCommittedBlob(ino, gen uint64, dest []byte, off uint64) (bool, error) {
	if s.blobs == nil {
		return true, errors.New("store: content is in a blob file but the store has no blob directory")
	}
	for try := 0; ; try++ {
		f, err := s.blobs.Open(ino, gen)
		if err == nil {
			err = blobfs.ReadFull(f, dest, off)
			f.Close()
			return true, err
		}
		// A commit may have just replaced the generation (the cached
		// inode is then another object: look it up again).
		i, ierr := s.inode(ino)
		if ierr != nil {
			return true, err
		}
		now := s.blobGenOf(i)
		if now == 0 {
			return false, nil
		}
		if now == gen || try > 0 {
			return true, err
		}
		gen = now
	}
}

// useBlob gives f its blob: the committed one, or (moving the content out
// of the KV chunks) a new generation holding the current size bytes.
// Caller holds f.mu.
func (s *Store) useBlob(f *openFile, i *Inode, size uint64) error {
	if f.blob != nil {
		return nil
	}
	if cur, err := s.inode(f.ino); err == nil {
		// The cached inode now: a caller's may predate its Open, which
		// may have waited for a passthrough session to end and settle
		// (foldIntoKV moves small content back into the KV and retires the
		// blob).
		i = cur
	}
	// Held until the open state goes (Release, endSession): bounded
	// (blobfs/held.go).
	if err := s.blobs.Hold(); err != nil {
		return err
	}
	if gen := s.blobGenOf(i); gen != 0 {
		bf, err := s.blobs.Open(f.ino, gen)
		if err != nil {
			s.blobs.Unhold()
			return err
		}
		f.blob, f.blobGen = bf, gen
		return nil
	}
	gen := s.blobs.NextGen(f.ino, 0)
	bf, err := s.blobs.Create(f.ino, gen)
	if err != nil {
		s.blobs.Unhold()
		return err
	}
	buf := make([]byte, min(size, 1<<20))
	for pos := uint64(0); pos < size; {
		n, err := s.readLocked(f.ino, f, buf[:min(uint64(len(buf)), size-pos)], pos)
		if err == nil && n == 0 {
			err = errors.New("store: short read moving content to a blob")
		}
		if err == nil {
			_, err = bf.WriteAt(buf[:n], int64(pos))
		}
		if err != nil {
			bf.Close()
			s.blobs.Unhold()
			s.blobs.RemoveGen(f.ino, gen)
			return err
		}
		pos += uint64(n)
	}
	s.blobs.Created(f.ino)
	f.dirty, f.dirtyBytes, f.truncFloor = nil, 0, math.MaxUint64
	f.blob, f.blobGen, f.blobNew, f.dropChunks = bf, gen, true, true
	s.tails.Forget(f.ino)
	return nil
}

// cowBlob moves f to the next generation, a copy of the first n bytes of
// the current one, so the committed content stays whole. Caller holds f.mu.
func (s *Store) cowBlob(f *openFile, n uint64) error {
	gen := s.blobs.NextGen(f.ino, f.blobGen)
	nb, err := s.blobs.Create(f.ino, gen)
	if err != nil {
		return err
	}
	if n > 0 {
		if err := blobfs.CopyRange(nb, f.blob, int64(n)); err != nil {
			nb.Close()
			s.blobs.RemoveGen(f.ino, gen)
			return err
		}
	}
	s.blobs.Created(f.ino)
	f.blob.Close()
	f.blob, f.blobGen, f.blobNew = nb, gen, true
	return nil
}

// writeBlob writes data at off into f's blob; size is the current size.
// Caller holds f.mu.
func (s *Store) writeBlob(f *openFile, i *Inode, data []byte, off, size uint64) error {
	if err := s.useBlob(f, i, size); err != nil {
		return err
	}
	if sess := f.sess.Load(); sess != nil && off < f.committedSize {
		sess.appends = false
	} else if off < f.committedSize && !f.blobNew && !s.overwriteInPlace(f) {
		if err := s.cowBlob(f, size); err != nil {
			return err
		}
	}
	_, err := f.blob.WriteAt(data, int64(off))
	return err
}

// truncateBlob sets the size of f's blob from old to size. Caller holds f.mu.
func (s *Store) truncateBlob(f *openFile, i *Inode, size, old uint64) error {
	if err := s.useBlob(f, i, old); err != nil {
		return err
	}
	if sess := f.sess.Load(); sess != nil {
		// The kernel writes this blob: change it in place (live mark).
		sess.appends = sess.appends && size >= f.committedSize
	} else if size < f.committedSize && !f.blobNew && !s.overwriteInPlace(f) {
		if err := s.cowBlob(f, min(size, old)); err != nil {
			return err
		}
	}
	return f.blob.Truncate(int64(size))
}

// blobCommitKeys lists the chunk keys a commit that moves f's content out
// of the KV deletes. Caller holds f.mu.
func (s *Store) blobCommitKeys(f *openFile) ([][]byte, error) {
	if !f.dropChunks {
		return nil, nil
	}
	id, err := s.chunkIDOf(f.ino)
	if err != nil {
		return nil, err
	}
	var keys [][]byte
	err = s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.ChunkPrefix(id), nil, true, func(k, _ []byte) bool {
			keys = append(keys, append([]byte(nil), k...))
			return true
		})
	})
	return keys, err
}

// blobCommitted records that the commit of f pointed its inode at f's
// blob. Caller holds f.mu and s.mu.
func (s *Store) blobCommitted(f *openFile) {
	if f.blob == nil {
		return
	}
	s.icMu.Lock()
	if i := s.inodes[f.ino]; i != nil {
		if i.Blob != 0 && i.Blob != f.blobGen {
			s.blobs.Retire(f.ino, i.Blob)
		}
		i.Blob = f.blobGen
	}
	s.icMu.Unlock()
	f.blobNew, f.dropChunks = false, false
}

// syncBlob makes f's blob content (and a new blob's name) durable.
// Caller holds f.mu.
func (s *Store) syncBlob(f *openFile) error {
	if f.blob == nil {
		return nil
	}
	if err := f.blob.Sync(); err != nil {
		return err
	}
	return s.blobs.SyncNew(f.ino)
}

// cleanBlobs deletes blob generations no inode points to (left by a crash
// between a copy and its commit, or replaced and not yet deleted).
func (s *Store) cleanBlobs() error {
	if s.blobs == nil {
		return nil
	}
	ids, err := s.blobs.List()
	if err != nil {
		return err
	}
	for _, id := range ids {
		i, err := s.inode(id.Ino)
		if err == nil && i.Blob == id.Gen {
			continue
		}
		if err != nil && !errors.Is(err, syscall.ENOENT) {
			return err
		}
		s.blobs.RemoveGen(id.Ino, id.Gen)
	}
	return nil
}

// hashBlob feeds the committed blob content of i to h, checking that the
// blob holds all of it.
func (s *Store) hashBlob(h io.Writer, i *Inode) error {
	if s.blobs == nil {
		return errors.New("content is in a blob file but the store has no blob directory")
	}
	f, err := s.blobs.Open(i.Ino, i.Blob)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if uint64(st.Size()) < i.Size {
		return fmt.Errorf("content file holds %d bytes of %d", st.Size(), i.Size)
	}
	_, err = io.Copy(h, io.NewSectionReader(f, 0, int64(i.Size)))
	return err
}
