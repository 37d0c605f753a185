package store

import (
	"errors"
	"math"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/store/internal/blobfs"

	"github.com/mnemofs/mnemofs/backend"
)

// The end of passthrough sessions (passthrough.go): lingering, settling
// (the deferred hash, small content back into the KV, the live mark) and
// the page cache prefill.

// Ending a session, and settling an inode, happen while it has no open
// state: Open waits for them (the ending phase, writestate.go). An open state made from the
// committed inode meanwhile would be a second one for the same inode, and
// the ending session's commit, of its own blob generation, could undo the
// other's (and point the inode at a generation the other had replaced and
// deleted).

// testHookEnding, when set by a test, runs as a session starts ending.
var testHookEnding atomic.Pointer[func(ino uint64)]

// endSessions ends every session that has lingered for at least age (0:
// every one, at Close; fsck: ptLinger); the ticker ends each as it falls
// due (runDue).
func (s *Store) endSessions(age time.Duration) {
	var inos []uint64
	s.filesMu.Lock()
	for ino, w := range s.writes {
		if w.phase == phaseLingering {
			inos = append(inos, ino)
		}
	}
	s.filesMu.Unlock()
	for _, ino := range inos {
		s.endLingering(ino, age)
	}
}

// endLingering ends the session of ino if it lingers and has for at least
// age (one reopened and released since lingers on: its own end is due
// later).
func (s *Store) endLingering(ino uint64, age time.Duration) {
	s.filesMu.Lock()
	f := s.lingeringLocked(ino)
	var sess *ptSession
	if f != nil {
		sess = f.sess.Load()
	}
	if sess == nil || time.Since(sess.lingerAt) < age {
		s.filesMu.Unlock()
		return
	}
	release := s.enterEndingLocked(ino) // lingering → ending
	s.filesMu.Unlock()
	if hook := testHookEnding.Load(); hook != nil {
		(*hook)(ino)
	}
	if err := s.endSession(f); err != nil {
		s.log.Printf("ending the passthrough session of inode %d: %v", f.ino, err)
	}
	release()
}

// endSession commits what the kernel wrote last, closes the blob and
// settles the inode. ino is in the ending phase, entered by the caller.
func (s *Store) endSession(f *openFile) error {
	f.mu.Lock()
	if sess := f.sess.Load(); sess.flags != 0 && f.blob != nil {
		// The inode's flags, given to the content file (mirrorFlags):
		// the kernel has let go of it.
		if err := blobfs.SetFlags(f.blob, 0); err != nil {
			s.log.Printf("flags of inode %d's content file: %v", f.ino, err)
		}
		sess.flags = 0
	}
	ev, err := s.commitLocked(f) // after ptSync: the kernel's last writes
	sess := f.sess.Load()
	gen, fresh, temp := f.blobGen, f.blobNew && !sess.temp, sess.temp
	var content []byte
	if f.blob != nil && temp && err == nil && s.opts.Notify != nil {
		// Small content went to the KV (a session's unnamed file is
		// never larger): hand it to the kernel's page cache, which the
		// session's writes bypassed (prefill).
		content = make([]byte, min(sess.seen.size, ChunkSize))
		if blobfs.ReadFull(f.blob, content, 0) != nil {
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
	if f.blob != nil && sess.temp {
		s.blobs.GiveTemp(f.blob) // the kernel let go of it ptLinger ago
	} else if f.blob != nil {
		f.blob.Close()
		s.blobs.Unhold()
	}
	f.blob = nil
	f.sess.Store(nil)
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
			s.blobs.RemoveGen(f.ino, gen)
		}
		s.unlock()
	}
	if !temp {
		// A linked blob: its hash may be left for later, a small one
		// goes back into the KV. (Unnamed files only ever commit small
		// content, into the KV, and never set the mark.)
		if err := s.settle(f.ino, sess.marked, false); err != nil {
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
	w := s.writes[ino]
	switch {
	case w != nil && w.phase == phaseEnding:
		s.filesMu.Unlock()
		<-w.done // being settled
		return true
	case w != nil && w.phase == phaseOpen:
		s.filesMu.Unlock()
		return false // being written: hashed when its session ends
	}
	var f *openFile
	if w != nil { // lingering
		f = w.f
		if sess := f.sess.Load(); sess != nil && time.Since(sess.lingerAt) < ptLinger {
			// Just released: the kernel may still hand the session's
			// backing file to the next open (passthrough.go).
			s.filesMu.Unlock()
			return false
		}
	}
	release := s.enterEndingLocked(ino)
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
// cache, unless ino was opened or changed meanwhile. The caller holds ino
// in the ending phase, so no kernel file of ino is open (Open waits for
// the phase), and no read of it is in flight. No store lock is held while
// the kernel is told: the kernel may be waiting for a request of this
// mount (a rename, a lookup) that needs one. On a shared store, another
// host's commit meanwhile is seen by a check after, which drops what was
// put (on this host a change needs an open, which waits for the phase).
func (s *Store) prefill(ino uint64, data []byte, version int) {
	p, ok := s.opts.Notify.(Prefiller)
	if !ok || !s.holds(ino, data, version) {
		return
	}
	p.Prefill(ino, data)
	if s.Shared() && !s.holds(ino, data, version) {
		s.notifyContent(ino)
	}
}

// holds reports whether data is still the committed content of ino, at
// version, with no open state.
func (s *Store) holds(ino uint64, data []byte, version int) bool {
	s.mu.Lock()
	defer s.unlock()
	i, err := s.inode(ino)
	if err != nil || s.openState(ino) != nil {
		return false
	}
	s.icMu.RLock()
	same := i.Size == uint64(len(data)) && i.Blob == 0
	s.icMu.RUnlock()
	rec, err := s.storedRecord(ino)
	return same && err == nil && rec.Version == version
}

// settle makes the committed state of ino canonical after a session: the
// sha256 computed when it was left for later (or, after a crash, checked
// against what the blob holds), a small file's content moved back into
// the KV, and the live mark dropped. An inode open again is left to the
// end of its new session. ino is in the ending phase, entered by the caller.
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
			s.settledInPlace(ino)
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
		// A marked blob the kernel rewrote or truncated in place is the
		// content as it is now: its size too, not the record's.
		if fi, serr := os.Stat(s.blobs.Path(ino, i.Blob)); serr == nil && (uint64(fi.Size()) > i.Size || marked) {
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
		f := &openFile{ino: ino, truncFloor: math.MaxUint64, committedSize: size, storedEnd: size, modified: true, rehash: !recheck}
		if err := s.commit(f); err != nil {
			return err
		}
	}
	return s.foldIntoKV(ino, marked)
}

// fold moves the content of a small file out of its blob into the KV and
// drops the live mark, in one transaction.
func (s *Store) foldIntoKV(ino uint64, marked bool) error {
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
		bf, err := s.blobs.Open(ino, snap.Blob)
		if err != nil {
			return err
		}
		data = make([]byte, snap.Size)
		err = blobfs.ReadFull(bf, data, 0)
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
			return t.Set(backend.ChunkKey(snap.chunkID(), 0), data)
		}
		return nil
	}, snap)
	if err == nil && marked {
		s.settledInPlace(ino)
	}
	if err != nil || !move {
		return err
	}
	s.tails.Forget(ino)
	s.blobs.Retire(ino, old)
	return nil
}

// settleLiveMarks settles every inode that carries a live mark and is not
// open: at start (the store stopped with sessions running) and by fsck.
func (s *Store) settleLiveMarks() error {
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
		release := s.enterEnding(ino)
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
