package store

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store/internal/blobfs"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/policy"
)

// Passthrough sessions. With FUSE passthrough (Linux >= 6.9, as root) the
// kernel reads and writes a file's content in a backing file itself, and the
// daemon never sees the data. The store runs such a session on a blob file
// (internal/blobfs) when fusefs asks at open time and it is safe:
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
// same session. (That gap is a few statements in go-fuse's Release; a
// goroutine stalled there for longer than ptLinger would hand a later open
// the old backing file.) A file reopened meanwhile (the next append to a
// log) joins it again. Then the session is settled: the sha256 of a large file is
// computed, a small file's content moves back into the KV, the mark goes.
// An open of the inode meanwhile waits for the end (passthrough_end.go):
// an inode never has two open states.

// PTKind says why an open may start a passthrough session.
type PTKind int

const (
	// PTNone joins a running session but never starts one.
	PTNone PTKind = iota
	// PTCreate is the open of a file just created.
	PTCreate
	// PTAppend is an open with O_APPEND for writing.
	PTAppend
	// PTRead is an open for reading only: a large file whose content is
	// one blob file is read by the kernel from that file (ptReadMin).
	PTRead
)

const (
	// ptLinger is how long a session outlives its last close.
	ptLinger = 100 * time.Millisecond
	// ptHashInline: a session's commit hashes content up to this size at
	// once; larger content is hashed when the session is settled.
	ptHashInline = 4 << 20
	// ptReadMin: a read-only open starts a session only for content this
	// large, where the kernel's copy from its own page cache of the
	// backing file (large folios) beats the FUSE inode's; below it the
	// session's start and end would cost more than they save.
	ptReadMin = 1 << 20
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
	if sess := f.sess.Load(); sess != nil {
		if writes && !appends {
			sess.appends = false // may write below the committed size
			sess.writers++
			s.markLive(f, sess)
		}
		return f.blob
	}
	if kind == PTNone || writes == (kind == PTRead) || (kind == PTRead && f.committedSize < ptReadMin) {
		return nil // (the size: most reads are of small files; spare them mu)
	}
	s.filesMu.Lock()
	refs := f.refs
	s.filesMu.Unlock()
	if refs != 1 || f.masked || f.modified || f.blob != nil || f.dirty != nil || f.truncFloor != math.MaxUint64 {
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
	gen, size, pack, flags := i.Blob, i.Size, i.Pack, i.Flags
	s.icMu.RUnlock()
	if pack != 0 || flags != 0 {
		return nil // (chattr: the store checks every write itself)
	}
	sess := &ptSession{}
	switch kind {
	case PTRead:
		if s.blobs.HoldSpare() != nil {
			return nil // the daemon carries the data (blobfs/held.go)
		}
		bf := s.ptReadable(ino, gen, size)
		if bf == nil {
			s.blobs.Unhold()
			return nil
		}
		f.blob, f.blobGen, f.blobNew = bf, gen, false
		sess.appends = true // no handle writes below the end (yet)
	case PTAppend:
		if gen == 0 || s.blobs.HoldSpare() != nil {
			return nil
		}
		bf, err := s.blobs.Open(ino, gen)
		if err != nil {
			s.blobs.Unhold()
			return nil
		}
		// Bytes past the committed size are not part of the file.
		if st, err := stampOf(bf); err != nil || (uint64(st.size) > size && bf.Truncate(int64(size)) != nil) {
			bf.Close()
			s.blobs.Unhold()
			return nil
		}
		f.blob, f.blobGen, f.blobNew = bf, gen, false
		sess.appends = true
	default:
		if size > 0 {
			return nil // not a new file after all
		}
		bf, err := s.blobs.TakeTemp()
		if err != nil {
			return nil
		}
		f.blob, f.blobGen, f.blobNew, sess.temp = bf, 0, true, true
		sess.appends = false
	}
	if writes && !appends {
		sess.writers++
	}
	f.hash, f.hashTried = nil, true
	sess.seen, _ = stampOf(f.blob)
	f.sess.Store(sess)
	s.tails.Forget(ino)
	return f.blob
}

// markLive sets the live mark of f's inode, unless set, before a handle
// that may write below the end joins a session on its committed blob (a
// read session, an append's): the kernel then changes that blob in place,
// and a store opened after a crash must take the blob as it is (its size
// and sha256, settle), not trust the record. Caller holds f.mu.
func (s *Store) markLive(f *openFile, sess *ptSession) {
	if sess.marked || sess.temp {
		return
	}
	if err := s.kv.Update(func(t backend.Txn) error { return t.Set(backend.LiveKey(f.ino), nil) }); err != nil {
		s.log.Printf("marking inode %d as written in place: %v (a crash now may leave its record behind its content; fsck --repair)", f.ino, err)
		return
	}
	sess.marked = true
}

// ptReadable opens the blob of ino for a read session (PTRead), or
// returns nil when the kernel must not read it directly: content smaller
// than ptReadMin, a blob that holds more than the committed size (an
// append after a crash, which a read must not adopt), a shared store
// (another host may change the file) or a log the store's user sees only
// part of (loglines.go). Caller holds mu.
func (s *Store) ptReadable(ino, gen, size uint64) *os.File {
	if gen == 0 || size < ptReadMin || s.shared {
		return nil
	}
	if s.opts.User != "" {
		if r, reg, err := s.memoryRecord(ino); err != nil || !reg || r.partial(s.opts.User) {
			return nil
		}
	}
	bf, err := s.blobs.Open(ino, gen)
	if err != nil {
		return nil
	}
	if st, err := stampOf(bf); err != nil || uint64(st.size) != size {
		bf.Close()
		return nil
	}
	return bf
}

// PassthroughClosed tells the session of ino that a handle for which
// Passthrough was called with writes and not appends is closing.
func (s *Store) PassthroughClosed(ino uint64) {
	if f := s.openState(ino); f != nil {
		f.mu.Lock()
		if sess := f.sess.Load(); sess != nil {
			sess.writers = max(0, sess.writers-1)
		}
		f.mu.Unlock()
	}
}

// ptCommitTemp gives the unnamed file of a session a place before its
// first commit: small content goes into the KV chunks (the file stays
// unnamed; a crash loses only what no commit took), larger content is
// linked as the next blob generation. It reports whether the content goes
// to the KV. Caller holds f.mu.
func (s *Store) ptCommitTemp(f *openFile, i *Inode, size uint64) (bool, error) {
	sess := f.sess.Load()
	if sess == nil || !sess.temp {
		return false, nil
	}
	if size <= ChunkSize {
		data := make([]byte, size)
		if err := blobfs.ReadFull(f.blob, data, 0); err != nil {
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
	gen := s.blobs.NextGen(f.ino, s.blobGenOf(i))
	if err := s.blobs.Link(f.blob, f.ino, gen); err != nil {
		return false, err
	}
	f.dropChunks = f.dropChunks || s.blobGenOf(i) == 0
	sess.temp, f.blobGen, f.blobNew = false, gen, true
	return false, nil
}

// ptDefer: in a session of appends whose blob carries the live mark, a
// close within ptDefer of the last commit does not commit; the next close
// after it, the end of the session, an fsync, a read of the xattrs or the
// store's ticker (commitDeferred) does. The bytes are in the content file
// at once (every reader sees them); after a crash, the start adopts what
// the kernel appended past the committed size of a marked blob (settle).
const ptDefer = 20 * time.Millisecond

// deferFlush reports whether the close of a handle of f may leave its
// commit for later.
func (s *Store) deferFlush(f *openFile) bool {
	if f.sess.Load() == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sess := f.sess.Load()
	if sess == nil || !sess.appends || !sess.marked || time.Since(sess.lastCommit) >= ptDefer {
		return false
	}
	s.ptSync(f)
	if !f.modified {
		return true
	}
	if !f.appendOnly {
		return false
	}
	if !sess.deferred {
		sess.deferred = true
		s.filesMu.Lock()
		s.schedule(sess.lastCommit.Add(ptDefer), f.ino, dueCommit)
		s.filesMu.Unlock()
	}
	return true
}

// commitDeferred makes the commit a close of ino left for later, if one
// did (the xattrs of a file must describe what it holds).
func (s *Store) commitDeferred(ino uint64) {
	s.filesMu.Lock()
	var f *openFile
	if w := s.writes[ino]; w != nil && w.phase != phaseEnding {
		f = w.f
	}
	s.filesMu.Unlock()
	if f == nil || f.sess.Load() == nil {
		return
	}
	// Not once the file is open again and rewritten (truncated, written
	// other than at its end): the commit would publish half of that
	// rewrite and make the rest of it look like appends, which a shared
	// store rebases onto another host's version. The rewriting handle's
	// own flush commits it whole.
	err := s.commitUnless(f, func() bool {
		if sess := f.sess.Load(); sess == nil || !sess.deferred {
			return true
		}
		s.filesMu.Lock()
		defer s.filesMu.Unlock()
		return !f.appendOnly && f.refs > 0
	})
	if err != nil {
		s.log.Printf("commit of inode %d: %v", f.ino, err)
	}
}

// runDue does what has fallen due (writestate.go): the end of sessions
// that have lingered ptLinger, the deferred commits ptDefer after the last.
func (s *Store) runDue(now time.Time) {
	for _, d := range s.takeDue(now) {
		switch d.kind {
		case dueEnd:
			s.endLingering(d.ino, ptLinger)
		case dueCommit:
			s.commitDeferred(d.ino)
		case dueSettle:
			s.settleInPlace(d.ino, now)
		}
		// A tick may end hundreds (a burst of new files): let waiting
		// FUSE requests run between them, as maintenance does.
		runtime.Gosched()
	}
}

// ptSync brings the inode of a session up to what the kernel wrote into
// its blob. Caller holds f.mu.
func (s *Store) ptSync(f *openFile) {
	sess := f.sess.Load()
	if sess == nil || f.blob == nil {
		return
	}
	st, err := stampOf(f.blob)
	if err != nil || st == sess.seen {
		return
	}
	sess.seen = st
	f.modified, f.hash = true, nil
	size := uint64(st.size)
	if !sess.appends || size < f.committedSize {
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

// ptTimes gives the content file of f's session the inode's times, so
// that ptSync takes them back as they are until the kernel writes again.
// Caller holds f.mu, not mu.
func (s *Store) ptTimes(f *openFile) {
	sess := f.sess.Load()
	if sess == nil || f.blob == nil || sess.flags != 0 {
		return // (a file chattr made append-only takes no given times)
	}
	s.icMu.RLock()
	i := s.inodes[f.ino]
	var at, mt int64
	if i != nil {
		at, mt = i.Atime, i.Mtime
	}
	s.icMu.RUnlock()
	if i == nil {
		return
	}
	ts := []unix.Timespec{unix.NsecToTimespec(at), unix.NsecToTimespec(mt)}
	// By its descriptor: a new file's content file has no name yet.
	fd := "/proc/self/fd/" + strconv.Itoa(int(f.blob.Fd()))
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, fd, ts, 0); err != nil {
		s.log.Printf("times of inode %d's content file: %v", f.ino, err)
		return
	}
	if st, err := stampOf(f.blob); err == nil {
		sess.seen = st
	}
}

// syncPT is ptSync for callers that hold no lock.
func (s *Store) syncPT(ino uint64) {
	if f := s.openState(ino); f != nil && f.sess.Load() != nil {
		f.mu.Lock()
		s.ptSync(f)
		f.mu.Unlock()
	}
}
