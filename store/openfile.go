package store

import (
	"errors"
	"hash"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// Open states: one per inode with open handles, shared by them; Open
// registers a handle, Release drops it and commits after the last.

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
	// moves to one in this open (internal/blobfs); blobGen is its generation.
	// blobNew: it is not the committed generation yet (copied on write,
	// or moved out of the KV chunks); the commit points the inode at it.
	// dropChunks: the content moved out of the KV chunks, which the
	// commit deletes.
	blob       *os.File
	blobGen    uint64
	blobNew    bool
	dropChunks bool
	// inPlace: the committed blob is changed in place, marked live
	// (inplace.go).
	inPlace bool
	// rehash: an open state made to hash and parse the committed content
	// again (settle), not to change it.
	rehash bool
	// spilled: dirty chunks were written ahead of the commit: to the
	// stage, or in place past the committed bytes (chunks.go).
	spilled bool
	// stage, when not 0, is the chunk id a staged rewrite writes the new
	// content under (stage.go); staged holds the chunks written there.
	stage  uint64
	staged map[uint32]bool
	// masked: a store-mode redaction rule covers the file (redact.go):
	// no blob, no passthrough, no spill, and the commit masks it first.
	masked bool
	// stale: another host changed the file while this open state held no
	// changes, and this host forgot its cached inode (remote.go): the
	// committed size here is the old one until refreshStale.
	stale bool
	// remote: another host changed the file while f was busy (its mu
	// held); takeRemote acts on it. Set without mu.
	remote atomic.Bool

	// sess is the passthrough session running on blob (passthrough.go,
	// writestate.go); nil when none runs. Its fields are guarded by mu.
	sess atomic.Pointer[ptSession]
}

// Open registers an open handle of ino and returns nothing but an error; the
// caller must call Release once. Reads also count as accesses.
func (s *Store) Open(ino uint64, forRead bool) error {
	for {
		wait, err := s.open(ino, forRead)
		if wait == nil {
			return err
		}
		<-wait
	}
}

// open is Open, or the channel to wait on when the passthrough session of
// ino is ending: an open state made from the committed inode meanwhile
// would be a second one, and the ending session's commit would point the
// inode back at the blob generation it had replaced (passthrough_end.go).
func (s *Store) open(ino uint64, forRead bool) (<-chan struct{}, error) {
	// Under mu, so that an unlink or rename-over sees this handle and
	// keeps the inode as an orphan rather than freeing it.
	masked := !forRead && s.storeMasked(ino)
	s.mu.Lock()
	defer s.unlock()
	i, err := s.inode(ino)
	if err != nil {
		return nil, err
	}
	if i.IsReg() && !s.Visible(ino) {
		return nil, syscall.EACCES
	}
	if !forRead {
		if err := s.mayChange(ino); err != nil {
			return nil, err
		}
	}
	s.icMu.RLock()
	size := i.Size
	s.icMu.RUnlock()
	s.filesMu.Lock()
	var f *openFile
	switch w := s.writes[ino]; {
	case w == nil:
		f = &openFile{ino: ino, truncFloor: math.MaxUint64, committedSize: size, storedEnd: size, appendOnly: true}
		f.masked = masked && i.IsReg() && s.blobGenOf(i) == 0
		if masked && !f.masked && i.IsReg() {
			s.warnUnmasked(ino)
		}
		s.writes[ino] = &writeState{phase: phaseOpen, f: f}
	case w.phase == phaseEnding:
		s.filesMu.Unlock()
		return w.done, nil
	default:
		// Open, or the lingering session of a moment ago
		// (passthrough.go), which it joins again.
		w.phase, f = phaseOpen, w.f
	}
	f.refs++
	s.filesMu.Unlock()
	if forRead {
		s.touch(ino)
	}
	return nil, nil
}

// Release drops one open handle. The last release of an unlinked inode
// frees its content.
func (s *Store) Release(ino uint64) error {
	s.filesMu.Lock()
	w := s.writes[ino]
	if w == nil || w.phase != phaseOpen {
		s.filesMu.Unlock()
		return nil
	}
	f := w.f
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
		err = s.commitUnless(f, func() bool {
			// An Open joined f since its refs went to 0 (the kernel's
			// next open may come before this release): what f holds now
			// may be half of that handle's rewrite, which a commit here
			// would publish and turn the rest of into appends (rebase.go:
			// moved to the end of another host's version). That handle's
			// flush or last release commits it, as when the Open comes
			// first.
			s.filesMu.Lock()
			defer s.filesMu.Unlock()
			return f.refs > 0
		})
	}
	linked := false
	if i, ierr := s.inode(ino); ierr == nil {
		s.icMu.RLock()
		linked = len(i.Links) > 0
		s.icMu.RUnlock()
	}
	f.mu.Lock()
	s.filesMu.Lock()
	if w := s.writes[ino]; f.refs == 0 && w != nil && w.phase == phaseOpen && w.f == f {
		if sess := f.sess.Load(); sess != nil && linked && err == nil {
			s.linger(f, sess)
		} else {
			delete(s.writes, ino)
			s.leftInPlace(f)
			if f.blob != nil {
				f.blob.Close()
				f.blob = nil
				s.blobs.Unhold()
			}
		}
	}
	gone := s.writes[ino] == nil
	stale := s.staleOpen[ino] && gone
	if stale {
		delete(s.staleOpen, ino)
	}
	committed := f.committedSize
	s.filesMu.Unlock()
	f.mu.Unlock()
	switch {
	case err != nil && gone && errors.Is(err, backend.ErrUnavailable):
		s.revertUncommitted(ino, committed) // refused: nothing was stored
	case stale, err != nil && gone:
		s.forgetStale(ino)
	}
	s.mu.Lock()
	// Under mu, as Open registers: an open of the same (already unlinked)
	// inode may have come in since the handle was dropped above.
	if i, ierr := s.inode(ino); ierr == nil && len(i.Links) == 0 && !i.IsDir() && s.openState(ino) == nil {
		err = errors.Join(err, s.purge(ino))
	}
	s.unlock()
	return err
}

// restart is openFile.restart, dropping the stage f wrote. Caller holds
// f.mu, not s.mu.
func (s *Store) restart(f *openFile, size uint64) {
	s.endStage(f, true)
	f.restart(size)
}

// restart makes f hold no changes over a committed file of size bytes, as
// an open state made on it now would (a refused commit, a rebase, another
// host's change). Caller holds f.mu.
func (f *openFile) restart(size uint64) {
	f.dirty, f.dirtyBytes, f.modified, f.appendOnly = nil, 0, false, true
	f.committedSize, f.storedEnd, f.truncFloor = size, size, math.MaxUint64
	f.spilled = false
	f.hash, f.hashPos, f.hashTried, f.settled, f.stale = nil, 0, false, false, false
}
