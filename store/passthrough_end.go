package store

import (
	"errors"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// The end of passthrough sessions (passthrough.go): lingering, settling
// (the deferred hash, small content back into the KV, the live mark) and
// the page cache prefill.

// linger keeps the session of f (just released by its last handle) for
// ptLinger. Caller holds f.mu and filesMu.
func (s *Store) linger(f *openFile) {
	f.lingerAt = time.Now()
	s.lingering[f.ino] = f
}

// Ending a session, and settling an inode, happen while it has no open
// state: Open waits for them (Store.ending). An open state made from the
// committed inode meanwhile would be a second one for the same inode, and
// the ending session's commit, of its own blob generation, could undo the
// other's (and point the inode at a generation the other had replaced and
// deleted).

// testHookEnding, when set by a test, runs as a session starts ending.
var testHookEnding atomic.Pointer[func(ino uint64)]

// holdLocked marks ino as ending until the returned func is called.
// Caller holds filesMu; ino has no open state and is not held.
func (s *Store) holdLocked(ino uint64) (release func()) {
	ch := make(chan struct{})
	s.ending[ino] = ch
	return func() {
		s.filesMu.Lock()
		delete(s.ending, ino)
		s.filesMu.Unlock()
		close(ch)
	}
}

// hold marks ino as ending, when it has no open state, no lingering
// session and is not held already; else it returns nil.
func (s *Store) hold(ino uint64) (release func()) {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	if s.files[ino] != nil || s.lingering[ino] != nil || s.ending[ino] != nil {
		return nil
	}
	return s.holdLocked(ino)
}

// lingers reports whether the passthrough session of ino lingers.
func (s *Store) lingers(ino uint64) bool {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	return s.lingering[ino] != nil
}

// endSessions ends the sessions that have lingered for at least age.
func (s *Store) endSessions(age time.Duration) {
	now := time.Now()
	var due []uint64
	s.filesMu.Lock()
	for ino, f := range s.lingering {
		if now.Sub(f.lingerAt) >= age {
			due = append(due, ino)
		}
	}
	s.filesMu.Unlock()
	for _, ino := range due {
		// Taken one at a time: one reopened meanwhile goes on.
		s.filesMu.Lock()
		f := s.lingering[ino]
		if f != nil && time.Since(f.lingerAt) < age {
			f = nil // reopened and released since: lingers anew
		}
		var release func()
		if f != nil {
			delete(s.lingering, ino)
			release = s.holdLocked(ino)
		}
		s.filesMu.Unlock()
		if f == nil {
			continue
		}
		if hook := testHookEnding.Load(); hook != nil {
			(*hook)(ino)
		}
		if err := s.endSession(f); err != nil {
			s.log.Printf("mnemofs: ending the passthrough session of inode %d: %v", f.ino, err)
		}
		release()
		// A tick may end hundreds (a burst of new files): let waiting
		// FUSE requests run between them, as maintenance does.
		runtime.Gosched()
	}
}

// endSession commits what the kernel wrote last, closes the blob and
// settles the inode. f is no longer registered; the caller holds ino.
func (s *Store) endSession(f *openFile) error {
	f.mu.Lock()
	ev, err := s.commitLocked(f) // after ptSync: the kernel's last writes
	gen, fresh, temp := f.blobGen, f.blobNew && !f.ptTemp, f.ptTemp
	var content []byte
	if f.blob != nil && temp && err == nil && s.opts.Notify != nil {
		// Small content went to the KV (a session's unnamed file is
		// never larger): hand it to the kernel's page cache, which the
		// session's writes bypassed (prefill).
		content = make([]byte, min(f.ptSeen.size, ChunkSize))
		if readBlob(f.blob, content, 0) != nil {
			content = nil
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
	if !temp {
		// A linked blob: its hash may be left for later, a small one
		// goes back into the KV. (Unnamed files only ever commit small
		// content, into the KV, and never set the mark.)
		if err := s.settle(f.ino, f.ptMarked, false); err != nil {
			return err
		}
	}
	if content != nil {
		s.prefill(f.ino, content, version)
	} else {
		// Pages cached before the session (an appended log) miss what
		// the kernel wrote to the backing file.
		s.notifyContent(f.ino)
	}
	return nil
}

// hashNow settles ino at once if it was written in a passthrough session
// that has ended (or has lingered for ptLinger), so that its sha256 is
// known. It reports whether it did; if not, the caller hashes what the
// file holds now.
func (s *Store) hashNow(ino uint64) bool {
	s.filesMu.Lock()
	if wait := s.ending[ino]; wait != nil {
		s.filesMu.Unlock()
		<-wait // being settled
		return true
	}
	if s.files[ino] != nil {
		s.filesMu.Unlock()
		return false // being written: hashed when its session ends
	}
	f := s.lingering[ino]
	if f != nil && time.Since(f.lingerAt) < ptLinger {
		// Just released: the kernel may still hand the session's
		// backing file to the next open (passthrough.go).
		s.filesMu.Unlock()
		return false
	}
	delete(s.lingering, ino)
	release := s.holdLocked(ino)
	s.filesMu.Unlock()
	defer release()
	if f != nil {
		return s.endSession(f) == nil
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
// end of its new session. The caller holds ino.
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
	s.icMu.Lock()
	if recheck && i.Blob != 0 && s.blobs != nil {
		// What the kernel appended after the last commit (a deferred
		// flush, passthrough.go) was acknowledged to its writer: keep it.
		if fi, serr := os.Stat(s.blobs.path(ino, i.Blob)); serr == nil && uint64(fi.Size()) > i.Size {
			i.Size = uint64(fi.Size())
		}
	}
	size := i.Size
	s.icMu.Unlock()
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
		release := s.hold(ino)
		if release == nil {
			continue // open, or its session lingers: settled at its end
		}
		err := s.settle(ino, true, true)
		release()
		if err != nil {
			return err
		}
	}
	return nil
}
