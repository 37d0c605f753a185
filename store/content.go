package store

import (
	"crypto/sha256"
	"encoding"
	"errors"
	"hash"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// spillBytes is how much dirty data an inode may hold before full chunks are
// written to the KV ahead of the commit.
const spillBytes = 2 << 20

// openFile is the shared write state of one inode with open handles.
type openFile struct {
	ino uint64

	// mu guards everything below. It is taken before Store.mu.
	mu sync.Mutex
	// refs counts open handles (Store.filesMu guards refs, not mu).
	refs int
	// dirty holds chunks changed since the last commit, by chunk index.
	dirty      map[uint32][]byte
	dirtyBytes int
	// truncFloor: stored chunks at or past this offset are stale (the file
	// was truncated below it since the last commit); MaxUint64 if none.
	truncFloor uint64
	// modified: content changed since the last commit.
	modified bool
	// appendOnly: every change since the last commit was an append.
	appendOnly bool
	// committedSize is the size at the last commit.
	committedSize uint64
	// storedEnd: no chunk at or past this offset is in the backend
	// (committed size, raised by spills).
	storedEnd uint64
	// hash, when not nil, is the running SHA-256 of [0, hashPos): writes
	// that continue at hashPos (sequential writes, appends) feed it, so a
	// commit need not read the file back. Any other change drops it.
	hash    hash.Hash
	hashPos uint64
	// hashTried: the saved hash state was looked for in this open.
	hashTried bool
	// settled: the metadata at committedSize cannot change by appending
	// (closed front matter, or a name that carries none).
	settled bool

	// blob is the open content file when the content is in a blob or
	// moves to one in this open (blob.go); blobGen is its generation.
	// blobNew: it is not the committed generation yet (copied on write,
	// or moved out of the KV chunks); the commit points the inode at it.
	// dropChunks: the content moved out of the KV chunks, which the
	// commit deletes.
	blob       *os.File
	blobGen    uint64
	blobNew    bool
	dropChunks bool
	// spilled: dirty chunks were written ahead of the commit, so the KV
	// no longer holds all of the committed content (no version is kept).
	spilled bool

	// pt: a passthrough session runs on blob (passthrough.go); ptSeen is
	// what fstat said of the blob when last looked at; ptAppend: every
	// handle of the session appends (the committed bytes stay as they
	// are); ptMarked: the live mark is set; lingerAt: when the last
	// handle went.
	pt        atomic.Bool
	ptSeen    ptStamp
	ptAppend  bool
	ptMarked  bool
	ptTemp    bool // blob is an unnamed file (O_TMPFILE) not yet linked
	ptWriters int  // open handles that may write below the end
	lingerAt  time.Time
	// lastCommit: when f was last committed; deferred: a close did not
	// commit (an append soon after the last commit, passthrough.go).
	lastCommit time.Time
	deferred   bool
}

// Open registers an open handle of ino and returns nothing but an error; the
// caller must call Release once. Reads also count as accesses.
func (s *Store) Open(ino uint64, forRead bool) error {
	// Under mu, so that an unlink or rename-over sees this handle and
	// keeps the inode as an orphan rather than freeing it.
	s.mu.Lock()
	defer s.unlock()
	i, err := s.inode(ino)
	if err != nil {
		return err
	}
	if i.IsReg() && !s.Visible(ino) {
		return syscall.EACCES
	}
	if forRead {
		s.touch(ino)
	}
	s.icMu.RLock()
	size := i.Size
	s.icMu.RUnlock()
	s.filesMu.Lock()
	f := s.files[ino]
	if f == nil {
		if f = s.lingering[ino]; f != nil {
			// The session of a moment ago (passthrough.go).
			delete(s.lingering, ino)
			s.files[ino] = f
		}
	}
	if f == nil {
		f = &openFile{ino: ino, truncFloor: math.MaxUint64, committedSize: size, storedEnd: size, appendOnly: true}
		s.files[ino] = f
	}
	f.refs++
	s.filesMu.Unlock()
	return nil
}

// Release drops one open handle. The last release of an unlinked inode
// frees its content.
func (s *Store) Release(ino uint64) error {
	s.filesMu.Lock()
	f := s.files[ino]
	if f == nil {
		s.filesMu.Unlock()
		return nil
	}
	f.refs--
	last := f.refs == 0
	s.filesMu.Unlock()
	if !last {
		return nil
	}
	// Commit with f still registered: an Open meanwhile shares f (and
	// its uncommitted state) rather than starting a second open state
	// from the committed inode, and then keeps it.
	var err error
	if !s.deferFlush(f) { // else the session, lingering, commits soon
		err = s.commit(f)
	}
	linked := false
	if i, ierr := s.inode(ino); ierr == nil {
		s.icMu.RLock()
		linked = len(i.Links) > 0
		s.icMu.RUnlock()
	}
	f.mu.Lock()
	s.filesMu.Lock()
	if f.refs == 0 && s.files[ino] == f {
		delete(s.files, ino)
		if f.pt.Load() && linked && err == nil {
			s.linger(f)
		} else if f.blob != nil {
			f.blob.Close()
			f.blob = nil
		}
	}
	s.filesMu.Unlock()
	f.mu.Unlock()
	s.mu.Lock()
	// Under mu, as Open registers: an open of the same (already unlinked)
	// inode may have come in since the handle was dropped above.
	if i, ierr := s.inode(ino); ierr == nil && len(i.Links) == 0 && !i.IsDir() && s.openState(ino) == nil {
		err = errors.Join(err, s.purge(ino))
	}
	s.unlock()
	return err
}

func (s *Store) openState(ino uint64) *openFile {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	return s.files[ino]
}

// ReadAt reads from ino at off into dest and returns the bytes read (short
// only at end of file).
func (s *Store) ReadAt(ino uint64, dest []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	f := s.openState(ino)
	if f != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		s.ptSync(f)
	}
	if n, ok, err := s.readHot(ino, f, dest, uint64(off)); ok {
		return n, err
	}
	return s.readLocked(ino, f, dest, uint64(off))
}

func (s *Store) readLocked(ino uint64, f *openFile, dest []byte, off uint64) (int, error) {
	i, err := s.inode(ino)
	if err != nil {
		return 0, err
	}
	s.icMu.RLock()
	size := i.Size
	s.icMu.RUnlock()
	if off >= size {
		return 0, nil
	}
	end := min(size, off+uint64(len(dest)))
	n := int(end - off)
	dest = dest[:n]
	if f != nil && f.blob != nil {
		return n, readBlob(f.blob, dest, off)
	}
	s.icMu.RLock()
	gen := i.Blob
	s.icMu.RUnlock()
	if gen != 0 {
		return n, s.readCommittedBlob(i, gen, dest, off)
	}
	err = s.kv.View(func(t backend.Txn) error {
		for pos := off; pos < end; {
			idx := uint32(pos / ChunkSize)
			cstart := uint64(idx) * ChunkSize
			cend := min(cstart+ChunkSize, end)
			chunk, err := s.chunk(t, f, ino, idx)
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

// chunk returns chunk idx as currently seen (dirty, stale-after-truncate,
// or stored). The result may be shorter than ChunkSize; missing bytes are
// zeros. It must not be modified.
func (s *Store) chunk(t backend.Txn, f *openFile, ino uint64, idx uint32) ([]byte, error) {
	if f != nil {
		if c, ok := f.dirty[idx]; ok {
			return c, nil
		}
		if uint64(idx)*ChunkSize >= f.truncFloor {
			return nil, nil
		}
	}
	c, err := t.Get(backend.ChunkKey(ino, idx))
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
	var c []byte
	if tail, ok := s.tails.Get(f.ino); ok && tail.Index == idx && uint64(idx)*ChunkSize < f.truncFloor {
		c = append(make([]byte, 0, len(tail.Data)+512), tail.Data...)
	} else if err := s.kv.View(func(t backend.Txn) error {
		old, err := s.chunk(t, f, f.ino, idx)
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
	if err := s.unpack(ino); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	i, err := s.inode(ino)
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
	if s.blobs != nil && (f.blob != nil || end > ChunkSize || s.blobGenOf(i) != 0) {
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
	if f.dirtyBytes >= spillBytes {
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
