package store

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"math"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/cache"
	"github.com/mnemofs/mnemofs/memory"
)

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
			if err := s.blobs.syncNew(ino); err != nil {
				return err
			}
		}
	}
	return s.Sync()
}

// Sync makes every committed change durable, blob data before the KV
// (durable.go).
func (s *Store) Sync() error { return s.syncOrdered(true) }

// spill writes full dirty chunks ahead of the commit. Caller holds f.mu.
func (s *Store) spill(f *openFile) error {
	s.mu.Lock()
	defer s.unlock()
	if err := s.dropStale(f); err != nil {
		return err
	}
	b := s.kv.NewBatch()
	end := f.storedEnd
	for idx, c := range f.dirty {
		if len(c) == ChunkSize {
			if err := b.Set(backend.ChunkKey(f.ino, idx), c); err != nil {
				b.Cancel()
				return err
			}
			delete(f.dirty, idx)
			f.dirtyBytes -= ChunkSize
			end = max(end, uint64(idx+1)*ChunkSize)
		}
	}
	if err := b.Flush(); err != nil {
		return err
	}
	s.tails.Forget(f.ino)
	f.spilled = true
	f.storedEnd = end
	return nil
}

// dropStale deletes stored chunks past truncFloor that are not dirty.
// Caller holds f.mu and s.mu.
func (s *Store) dropStale(f *openFile) error {
	if f.truncFloor == math.MaxUint64 {
		return nil
	}
	s.tails.Forget(f.ino)
	first := uint32(f.truncFloor / ChunkSize)
	var stale [][]byte
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.ChunkPrefix(f.ino), backend.ChunkKey(f.ino, first), true, func(k, _ []byte) bool {
			if _, ok := f.dirty[backend.ChunkIndex(k)]; !ok {
				stale = append(stale, append([]byte(nil), k...))
			}
			return true
		})
	})
	if err != nil {
		return err
	}
	for len(stale) > 0 {
		n := min(len(stale), 10000)
		err := s.kv.Update(func(t backend.Txn) error {
			for _, k := range stale[:n] {
				if err := t.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		stale = stale[n:]
	}
	f.truncFloor = math.MaxUint64
	return nil
}

// commit stores the dirty state of f with its metadata in one transaction
// and then tells the change handler.
func (s *Store) commit(f *openFile) error {
	f.mu.Lock()
	ev, err := s.commitLocked(f)
	f.mu.Unlock()
	s.deliver(ev)
	return err
}

// commitLocked is commit with f.mu held; it returns the events to deliver.
func (s *Store) commitLocked(f *openFile) (ev []Change, err error) {
	s.ptSync(f)
	if !f.modified {
		return nil, nil
	}
	i, err := s.inode(f.ino)
	if err != nil {
		return nil, err
	}
	if len(i.Links) == 0 {
		// Unlinked: nothing to keep.
		f.modified, f.dirty, f.dirtyBytes = false, nil, 0
		return nil, nil
	}
	// Hash and parse outside s.mu: reads see the dirty chunks through f.
	s.icMu.RLock()
	size, name := i.Size, i.Links[0].Name
	s.icMu.RUnlock()
	// An append after closed front matter cannot change the metadata:
	// keep it, and do not read the file back to parse it.
	keepMeta := f.appendOnly && f.committedSize > 0 && (f.settled || !memory.HasMetadata(name))
	var sum string
	var state, head []byte
	sess := f.sess.Load()
	if sess == nil || size <= ptHashInline || f.appendOnly {
		sum, state, head, err = s.digest(f, size, name, keepMeta)
		if err != nil {
			return nil, err
		}
	} // else hashed when the passthrough session is settled
	var lines *lineScan
	if isLogName(name) {
		// What its lines name (loglines.go): from where the last scan
		// ended when this is an append, else from the start.
		from := uint64(0)
		if r, err := s.storedRecord(f.ino); err == nil && f.appendOnly && r.LinesAt <= f.committedSize && !r.LinesUnknown {
			from = r.LinesAt
		}
		sc := s.scanLines(f, from, size)
		lines = &sc
	}
	toKV, err := s.ptCommitTemp(f, i, size)
	if err != nil {
		return nil, err
	}
	if f.blob != nil && f.blobGen != 0 {
		// The record about to point at this blob must not become durable
		// before its data (durable.go). Taken before mu: a sync holding
		// the barrier stalls only commits of blobs.
		defer s.blobs.pointAt(f.ino, f.blobGen)()
	}
	// The kernel may change the committed blob after this commit, or its
	// hash is left for later: the live mark says so (passthrough.go).
	// (Appends in place are marked too: a close may defer its commit.)
	mark := sess != nil && !sess.marked && !toKV
	from := uint64(0)
	if f.appendOnly {
		from = f.committedSize
	}
	s.mu.Lock()
	defer func() { ev = s.unlockKeep() }()
	// A rename or chmod while we hashed installed a new inode in the
	// cache: commit on top of that one, not the one read before.
	if i, err = s.inode(f.ino); err != nil {
		return nil, err
	}
	rec, err := s.storedRecord(f.ino)
	if err != nil {
		return nil, err
	}
	changed := rec.SHA256 != sum || sum == "" // "": too large to hash, so assume so
	prevRec := *rec
	var oldBytes []byte
	keep := false
	if changed {
		// The content it replaces, when the policy keeps versions: read
		// before dropStale deletes chunks a truncation cut off.
		if oldBytes, keep, err = s.keepVersion(f, i, &prevRec); err != nil {
			return nil, err
		}
	}
	if err := s.dropStale(f); err != nil {
		return nil, err
	}
	if !keepMeta {
		p := memory.Parse(name, head)
		if head == nil && size > headMax && memory.HasMetadata(name) {
			pre := make([]byte, 64)
			n, _ := s.readLocked(f.ino, f, pre, 0)
			p = memory.ParseLarge(name, pre[:n])
		}
		rec.applyParse(p)
		if !s.isInternal(f.ino) {
			s.claim(rec) // the store's user wrote it, not maintenance
		}
		rec.RelatedInos = s.resolveRelated(f.ino, rec.Meta.Related)
	}
	if lines != nil {
		rec.applyLines(*lines)
	}
	rec.HashState, rec.HashSize = state, size
	if changed {
		rec.SHA256 = sum
		rec.Version++
		rec.Cold, rec.DuplicateOf = false, 0 // what maintenance marked was the old content
		s.icMu.RLock()
		rec.Modified = i.Mtime
		s.icMu.RUnlock()
	}
	ino := f.ino
	s.icMu.RLock()
	snapshot := i.clone()
	s.icMu.RUnlock()
	if f.blob != nil {
		snapshot.Blob = f.blobGen
	}
	drop, err := s.blobCommitKeys(f)
	if err != nil {
		return nil, err
	}
	err = s.kv.Update(func(t backend.Txn) error {
		for idx, c := range f.dirty {
			if err := t.Set(backend.ChunkKey(ino, idx), c); err != nil {
				return err
			}
		}
		for _, k := range drop {
			if _, ok := f.dirty[backend.ChunkIndex(k)]; ok {
				continue // just written
			}
			if err := t.Delete(k); err != nil {
				return err
			}
		}
		if keep {
			if err := putVersion(t, snapshot, &prevRec, oldBytes, s.now().UnixNano()); err != nil {
				return err
			}
		}
		if mark {
			if err := t.Set(backend.LiveKey(ino), nil); err != nil {
				return err
			}
		}
		if err := putInode(t, snapshot); err != nil {
			return err
		}
		return putRecord(t, ino, rec)
	})
	if errors.Is(err, backend.ErrTxnTooBig) {
		// Too much at once: write the chunks in a batch first.
		b := s.kv.NewBatch()
		for idx, c := range f.dirty {
			if err = b.Set(backend.ChunkKey(ino, idx), c); err != nil {
				b.Cancel()
				return nil, err
			}
		}
		if err = b.Flush(); err != nil {
			return nil, err
		}
		if keep {
			err = s.kv.Update(func(t backend.Txn) error {
				return putVersion(t, snapshot, &prevRec, oldBytes, s.now().UnixNano())
			})
			if err != nil {
				return nil, err
			}
		}
		err = s.kv.Update(func(t backend.Txn) error {
			if mark {
				if err := t.Set(backend.LiveKey(ino), nil); err != nil {
					return err
				}
			}
			if err := putInode(t, snapshot); err != nil {
				return err
			}
			return putRecord(t, ino, rec)
		})
		if err == nil {
			// The inode points at its blob now: the chunks can go.
			err = s.deleteKeys(drop)
		}
	}
	if err != nil {
		s.recs.Forget(ino)
		return nil, err
	}
	s.recs.Set(ino, *rec)
	if sess != nil {
		sess.marked = sess.marked || mark
		sess.appends = sess.writers == 0
		sess.lastCommit, sess.deferred = time.Now(), false
	}
	s.blobCommitted(f)
	s.keepTail(f, size, rec, state)
	f.dirty, f.dirtyBytes, f.modified, f.appendOnly, f.spilled = nil, 0, false, true, false
	f.committedSize, f.storedEnd = size, size
	s.eventFrom(ino, from)
	return nil, nil
}

// keepTail caches what the next append needs (tails): the last chunk of a
// file in the KV, and for any file the hash state and whether appends can
// change its metadata. Caller holds f.mu.
func (s *Store) keepTail(f *openFile, size uint64, rec *Record, state []byte) {
	if size == 0 {
		s.tails.Forget(f.ino)
		return
	}
	tail := cache.Tail{Index: math.MaxUint32, Size: size, // MaxUint32: no chunk
		Settled: rec.Error == "" && rec.BodyOffset > 0 && uint64(rec.BodyOffset) <= size}
	if f.blob == nil {
		last := uint32((size - 1) / ChunkSize)
		c, ok := f.dirty[last]
		if !ok {
			s.tails.Forget(f.ino)
			return
		}
		tail.Index, tail.Data = last, c
	}
	tail.Hash = state
	if f.hash != nil && f.hashPos == size {
		tail.Hash, _ = f.hash.(encoding.BinaryMarshaler).MarshalBinary()
	}
	s.tails.Set(f.ino, tail)
}

// headMax is how much of a file is kept in hand for metadata parsing.
const headMax = memory.MaxParse

// hashStateMin: files at least this large keep their hash state, so an
// append hashes only the new bytes.
const hashStateMin = 4 << 10

// HashMax: a file larger than this is not read back to be hashed at commit
// (a truncate to 1 TiB must not take minutes); its sha256 is known only
// when it was written sequentially, else it is empty (unknown).
const HashMax = 1 << 30

// digest hashes the current content and returns the hash state (for large
// files) and the first bytes when the name carries metadata. An append to a
// file whose hash state is known hashes only the appended bytes. Caller
// holds f.mu.
func (s *Store) digest(f *openFile, size uint64, name string, keepMeta bool) (string, []byte, []byte, error) {
	needHead := !keepMeta && size <= headMax && memory.HasMetadata(name)
	if f.hash != nil && f.hashPos == size && !needHead {
		// Written sequentially: the running hash already covers it all.
		var state []byte
		if size >= hashStateMin {
			state, _ = f.hash.(encoding.BinaryMarshaler).MarshalBinary()
		}
		return hex.EncodeToString(f.hash.Sum(nil)), state, nil, nil
	}
	if size > HashMax {
		return "", nil, nil, nil
	}
	h := sha256.New()
	start := uint64(0)
	if f.appendOnly && !needHead && f.committedSize > 0 && size >= f.committedSize {
		// An append whose running hash was lost (say, a write at the end
		// while another handle wrote elsewhere): start from the saved one.
		if prev, err := s.record(f.ino); err == nil && prev.HashState != nil && prev.HashSize == f.committedSize {
			if h.(encoding.BinaryUnmarshaler).UnmarshalBinary(prev.HashState) == nil {
				start = f.committedSize
			} else {
				h.Reset()
			}
		}
	}
	var head []byte
	var err error
	buf := make([]byte, min(size-start, 1<<20))
	for pos := start; pos < size; {
		var n int
		n, err = s.readLocked(f.ino, f, buf[:min(uint64(len(buf)), size-pos)], pos)
		if err != nil {
			break
		}
		if n == 0 {
			err = errors.New("store: short read hashing content")
			break
		}
		h.Write(buf[:n])
		if needHead {
			head = append(head, buf[:n]...)
		}
		pos += uint64(n)
	}
	var state []byte
	if size >= hashStateMin {
		state, _ = h.(encoding.BinaryMarshaler).MarshalBinary()
	}
	return hex.EncodeToString(h.Sum(nil)), state, head, err
}
