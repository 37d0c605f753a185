package store

import (
	"errors"
	"math"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/policy"
)

// Passthrough sessions. With FUSE passthrough (Linux >= 6.9, as root) the
// kernel reads and writes a file's content in a backing file itself, and the
// daemon never sees the data. The store runs such a session on a blob file
// (blob.go) when fusefs asks at open time and it is safe:
//
//   - a file just created: the session writes an unnamed file (O_TMPFILE),
//     which its first commit copies into the KV (small content) or links
//     as the inode's next blob generation. (An open with O_TRUNC does not
//     say so: without atomic O_TRUNC the kernel truncates with a SETATTR
//     after the open.)
//   - a file whose content is already in a blob, opened with O_APPEND: the
//     session appends to the committed generation in place, past its
//     committed size, as appends always do.
//
// Only under a tree whose policy updates in place (no versions to keep),
// only when no other handle has the file open, and never for an encrypted
// store (no blobs). Every later open of the inode joins the session: the
// kernel allows one backing file per inode.
//
// The daemon learns of the kernel's writes from the blob itself (ptSync:
// size and times by fstat), before every attribute reply, read and commit;
// a commit hashes what the blob holds (a large blob: after the session, see
// settle). A commit made while the kernel may still write the committed
// blob in place sets the live mark (backend.LiveKey) in its transaction;
// the mark goes when the session is settled, and a store opened after a
// crash rehashes every marked inode, so fsck finds the record agreeing
// with the content.
//
// After the last close the session lingers for ptLinger: go-fuse drops the
// kernel's backing file only after the store's Release has returned, and
// an open in between is given the same backing file, so it must find the
// same session. A file reopened meanwhile (the next append to a log) joins
// it again. Then the session is settled: the sha256 of a large file is
// computed, a small file's content moves back into the KV, the mark goes.

// PTKind says why an open may start a passthrough session.
type PTKind int

const (
	// PTNone joins a running session but never starts one.
	PTNone PTKind = iota
	// PTCreate is the open of a file just created.
	PTCreate
	// PTAppend is an open with O_APPEND for writing.
	PTAppend
)

const (
	// ptLinger is how long a session outlives its last close.
	ptLinger = 100 * time.Millisecond
	// ptHashInline: a session's commit hashes content up to this size at
	// once; larger content is hashed when the session is settled.
	ptHashInline = 4 << 20
)

// ptStamp is what fstat says of a session's blob.
type ptStamp struct{ size, mtime, ctime int64 }

func stampOf(f *os.File) (ptStamp, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return ptStamp{}, err
	}
	return ptStamp{st.Size, st.Mtim.Nano(), st.Ctim.Nano()}, nil
}

// PassthroughOn reports whether passthrough sessions may start.
func (s *Store) PassthroughOn() bool { return s.ptOn.Load() }

// EnablePassthrough lets Passthrough start sessions (fusefs calls it once
// the kernel has accepted a backing file).
func (s *Store) EnablePassthrough() { s.ptOn.Store(s.blobs != nil) }

// Passthrough returns the content file that the open of ino (registered
// with Open) may hand to the kernel, or nil. writes and appends describe
// the open's access mode.
func (s *Store) Passthrough(ino uint64, kind PTKind, writes, appends bool) *os.File {
	if !s.ptOn.Load() {
		return nil
	}
	f := s.openState(ino)
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pt.Load() {
		if writes && !appends {
			f.ptAppend = false // may write below the committed size
			f.ptWriters++
		}
		return f.blob
	}
	if kind == PTNone || !writes {
		return nil
	}
	s.filesMu.Lock()
	refs := f.refs
	s.filesMu.Unlock()
	if refs != 1 || f.modified || f.blob != nil || f.dirty != nil || f.truncFloor != math.MaxUint64 {
		return nil
	}
	// Under mu: settle and the end of a session change the blob of an
	// inode that has no open state; this one has.
	s.mu.Lock()
	defer s.unlock()
	i, err := s.inode(ino)
	if err != nil || !i.IsReg() || len(i.Links) == 0 {
		return nil
	}
	if p, err := s.Path(ino); err != nil || s.Policy().UpdateMode(p) != policy.InPlace {
		return nil
	}
	s.icMu.RLock()
	gen, size, pack := i.Blob, i.Size, i.Pack
	s.icMu.RUnlock()
	if pack != 0 {
		return nil
	}
	switch kind {
	case PTAppend:
		if gen == 0 {
			return nil
		}
		bf, err := s.blobs.open(ino, gen)
		if err != nil {
			return nil
		}
		// Bytes past the committed size are not part of the file.
		if st, err := stampOf(bf); err != nil || (uint64(st.size) > size && bf.Truncate(int64(size)) != nil) {
			bf.Close()
			return nil
		}
		f.blob, f.blobGen, f.blobNew = bf, gen, false
		f.ptAppend = true
	default:
		if size > 0 {
			return nil // not a new file after all
		}
		bf, err := s.blobs.takeTemp()
		if err != nil {
			return nil
		}
		f.blob, f.blobGen, f.blobNew, f.ptTemp = bf, 0, true, true
		f.ptAppend = false
	}
	if !appends {
		f.ptWriters++
	}
	f.hash, f.hashTried = nil, true
	f.ptSeen, _ = stampOf(f.blob)
	f.pt.Store(true)
	s.tails.Forget(ino)
	return f.blob
}

// PassthroughClosed tells the session of ino that a handle for which
// Passthrough was called with writes and not appends is closing.
func (s *Store) PassthroughClosed(ino uint64) {
	if f := s.openState(ino); f != nil {
		f.mu.Lock()
		f.ptWriters = max(0, f.ptWriters-1)
		f.mu.Unlock()
	}
}

// ptCommitTemp gives the unnamed file of a session a place before its
// first commit: small content goes into the KV chunks (the file stays
// unnamed; a crash loses only what no commit took), larger content is
// linked as the next blob generation. It reports whether the content goes
// to the KV. Caller holds f.mu.
func (s *Store) ptCommitTemp(f *openFile, i *Inode, size uint64) (bool, error) {
	if !f.ptTemp {
		return false, nil
	}
	if size <= ChunkSize {
		data := make([]byte, size)
		if err := readBlob(f.blob, data, 0); err != nil {
			return false, err
		}
		f.dirty = map[uint32][]byte{}
		if size > 0 {
			f.dirty[0] = data
		}
		// Chunks past the first, of content committed to the KV before;
		// a committed blob goes in blobCommitted.
		f.dropChunks = s.blobGenOf(i) == 0 && (f.committedSize > ChunkSize || (size == 0 && f.committedSize > 0))
		return true, nil
	}
	gen := s.blobGenOf(i) + 1
	if err := s.blobs.link(f.blob, f.ino, gen); err != nil {
		return false, err
	}
	f.dropChunks = f.dropChunks || s.blobGenOf(i) == 0
	f.ptTemp, f.blobGen, f.blobNew = false, gen, true
	return false, nil
}

// ptSync brings the inode of a session up to what the kernel wrote into
// its blob. Caller holds f.mu.
func (s *Store) ptSync(f *openFile) {
	if !f.pt.Load() || f.blob == nil {
		return
	}
	st, err := stampOf(f.blob)
	if err != nil || st == f.ptSeen {
		return
	}
	f.ptSeen = st
	f.modified, f.hash = true, nil
	size := uint64(st.size)
	if !f.ptAppend || size < f.committedSize {
		f.appendOnly = false
	}
	s.mu.Lock()
	s.icMu.Lock()
	if i := s.inodes[f.ino]; i != nil {
		i.Size, i.Mtime, i.Ctime = size, st.mtime, max(i.Ctime, st.mtime)
	}
	s.icMu.Unlock()
	s.unlock()
}

// syncPT is ptSync for callers that hold no lock.
func (s *Store) syncPT(ino uint64) {
	if f := s.openState(ino); f != nil && f.pt.Load() {
		f.mu.Lock()
		s.ptSync(f)
		f.mu.Unlock()
	}
}

// linger keeps the session of f (just released by its last handle) for
// ptLinger. Caller holds f.mu and filesMu.
func (s *Store) linger(f *openFile) {
	f.lingerAt = time.Now()
	s.lingering[f.ino] = f
}

// endSessions ends the sessions that have lingered for at least age.
func (s *Store) endSessions(age time.Duration) {
	now := time.Now()
	var done []*openFile
	s.filesMu.Lock()
	for ino, f := range s.lingering {
		if now.Sub(f.lingerAt) >= age {
			done = append(done, f)
			delete(s.lingering, ino)
		}
	}
	s.filesMu.Unlock()
	for _, f := range done {
		if err := s.endSession(f); err != nil {
			s.log.Printf("mnemofs: ending the passthrough session of inode %d: %v", f.ino, err)
		}
	}
}

// endSession commits what the kernel wrote last, closes the blob and
// settles the inode. f is no longer registered.
func (s *Store) endSession(f *openFile) error {
	f.mu.Lock()
	s.ptSync(f)
	ev, err := s.commitLocked(f)
	gen, fresh := f.blobGen, f.blobNew && !f.ptTemp
	var content []byte
	if f.blob != nil && f.ptTemp && err == nil {
		// Small content went to the KV: hand it to the kernel's page
		// cache, which the session's writes bypassed (prefill).
		if st, serr := stampOf(f.blob); serr == nil && st.size <= ChunkSize && s.opts.Notify != nil {
			content = make([]byte, st.size)
			if readBlob(f.blob, content, 0) != nil {
				content = nil
			}
		}
	}
	var version int
	if content != nil {
		if rec, rerr := s.storedRecordLocked(f.ino); rerr == nil {
			version = rec.Version
		} else {
			content = nil
		}
	}
	if f.blob != nil && f.ptTemp {
		s.blobs.giveTemp(f.blob) // the kernel let go of it ptLinger ago
	} else if f.blob != nil {
		f.blob.Close()
	}
	f.blob = nil
	f.pt.Store(false)
	f.mu.Unlock()
	s.deliver(ev)
	if errors.Is(err, syscall.ENOENT) {
		return nil // removed meanwhile: its keys and blobs went with it
	}
	if err != nil {
		return err
	}
	if fresh {
		// Nothing was committed from this generation.
		s.mu.Lock()
		if i, ierr := s.inode(f.ino); s.openState(f.ino) == nil && (ierr != nil || s.blobGenOf(i) != gen) {
			s.blobs.removeGen(f.ino, gen)
		}
		s.unlock()
	}
	if err := s.settle(f.ino, f.ptMarked, false); err != nil {
		return err
	}
	if content != nil {
		s.prefill(f.ino, content, version)
	}
	return nil
}

// hashNow settles ino at once if it was written in a passthrough session
// that has ended (or lingers), so that its sha256 is known. It reports
// whether it did.
func (s *Store) hashNow(ino uint64) bool {
	s.filesMu.Lock()
	f := s.lingering[ino]
	delete(s.lingering, ino)
	s.filesMu.Unlock()
	if f != nil {
		return s.endSession(f) == nil
	}
	if s.openState(ino) != nil {
		return false // being written: hashed when its session ends
	}
	return s.settle(ino, false, false) == nil
}

// Prefiller is a Notifier that can also put content into the kernel's page
// cache of an inode.
type Prefiller interface {
	Prefill(ino uint64, data []byte)
}

// prefill puts data, the committed content of ino, into the kernel's page
// cache, unless ino was opened or changed meanwhile. Under mu, as Open
// registers: no kernel file of ino is open, so no read is in flight.
func (s *Store) prefill(ino uint64, data []byte, version int) {
	p, ok := s.opts.Notify.(Prefiller)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.unlock()
	i, err := s.inode(ino)
	if err != nil || s.openState(ino) != nil {
		return
	}
	s.icMu.RLock()
	same := i.Size == uint64(len(data)) && i.Blob == 0
	s.icMu.RUnlock()
	if rec, err := s.storedRecord(ino); same && err == nil && rec.Version == version {
		p.Prefill(ino, data)
	}
}

// settle makes the committed state of ino canonical after a session: the
// sha256 computed when it was left for later (or, after a crash, checked
// against what the blob holds), a small file's content moved back into
// the KV, and the live mark dropped. An inode open again is left to the
// end of its new session.
func (s *Store) settle(ino uint64, marked, recheck bool) error {
	s.mu.Lock()
	if s.openState(ino) != nil {
		s.unlock()
		return nil
	}
	i, err := s.inode(ino)
	if errors.Is(err, syscall.ENOENT) {
		s.unlock()
		if marked {
			return s.kvDelete(backend.LiveKey(ino))
		}
		return nil
	}
	if err != nil {
		s.unlock()
		return err
	}
	rec, err := s.storedRecord(ino)
	s.icMu.RLock()
	size := i.Size
	s.icMu.RUnlock()
	s.unlock()
	if err != nil {
		return err
	}
	if recheck || (rec.SHA256 == "" && size <= HashMax) {
		// Hash (and parse) the committed content, as fsck's repair does.
		f := &openFile{ino: ino, truncFloor: math.MaxUint64, committedSize: size, storedEnd: size, modified: true}
		if err := s.commit(f); err != nil {
			return err
		}
	}
	return s.fold(ino, marked)
}

// fold moves the content of a small file out of its blob into the KV and
// drops the live mark, in one transaction.
func (s *Store) fold(ino uint64, marked bool) error {
	s.mu.Lock()
	defer s.unlock()
	if s.openState(ino) != nil {
		return nil
	}
	i, err := s.inode(ino)
	if err != nil {
		return nil // removed meanwhile: its keys went with it
	}
	s.icMu.RLock()
	snap := i.clone()
	s.icMu.RUnlock()
	var data []byte
	move := snap.Blob != 0 && snap.Size <= ChunkSize && snap.Pack == 0 && snap.IsReg()
	if move {
		bf, err := s.blobs.open(ino, snap.Blob)
		if err != nil {
			return err
		}
		data = make([]byte, snap.Size)
		err = readBlob(bf, data, 0)
		bf.Close()
		if err != nil {
			return err
		}
	} else if !marked {
		return nil
	}
	old := snap.Blob
	if move {
		snap.Blob = 0
	}
	err = s.update(func(t backend.Txn) error {
		if marked {
			if err := t.Delete(backend.LiveKey(ino)); err != nil {
				return err
			}
		}
		if move && len(data) > 0 {
			return t.Set(backend.ChunkKey(ino, 0), data)
		}
		return nil
	}, snap)
	if err != nil || !move {
		return err
	}
	s.tails.Forget(ino)
	s.blobs.retire(ino, old)
	return nil
}

// settleMarked settles every inode that carries a live mark and is not
// open: at start (the store stopped with sessions running) and by fsck.
func (s *Store) settleMarked() error {
	var inos []uint64
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.LivePrefix(), nil, true, func(k, _ []byte) bool {
			inos = append(inos, backend.KeyIno(k))
			return true
		})
	})
	if err != nil {
		return err
	}
	for _, ino := range inos {
		if err := s.settle(ino, true, true); err != nil {
			return err
		}
	}
	return nil
}
