package store

import (
	"container/heap"
	"time"
)

// The write state of an inode: one map (Store.writes, under filesMu), one
// entry per inode that has any, with one of three phases, and one queue of
// what falls due (Store.due). The shared per-open state itself (dirty
// chunks, hash, blob) is the openFile; a FUSE passthrough session on it is
// its ptSession, nil when none runs.
//
//	                  Open                 Open (joins)
//	   (no entry) ──────────▶ open ◀───────────────────┐
//	      ▲  ▲                  │ last Release          │
//	      │  │   no session     │                       │
//	      │  └──────────────────┤                       │
//	      │                     │ a session runs        │
//	      │                     ▼                       │
//	      │                 lingering ──────────────────┘
//	      │                     │ ptLinger after the last Release (due: end)
//	      │                     ▼
//	      └──────────────── ending ◀──── enterEnding (settle: start, fsck, hashNow)
//	        session ended,
//	        inode settled
//
//   - open: handles are open (openFile.refs), or the last one is being
//     released. A close may leave its commit for later (a passthrough
//     session of appends, deferFlush): the commit falls due ptDefer after
//     the last one (due: commit), or at the next close, fsync, xattr read or
//     the session's end.
//   - lingering: a passthrough session outlives its last close for
//     ptLinger (passthrough.go says why); an Open joins it again.
//   - ending: the session is being ended, or the inode settled (its hash
//     computed, small content folded into the KV, the live mark dropped);
//     an Open waits for done, so that an inode never has two open states.
//
// The due queue holds (time, inode, what) entries; the store's ticker
// takes those whose time has come (runDue). An entry whose inode has moved
// on since (reopened, committed, ended) is dropped when it comes up: the
// state map, not the queue, says what is true.

// phase is where an inode's write state is.
type phase uint8

const (
	phaseOpen phase = iota + 1
	phaseLingering
	phaseEnding
)

// writeState is one inode's entry in Store.writes.
type writeState struct {
	phase phase
	f     *openFile     // open, lingering
	done  chan struct{} // ending: closed when it is over
}

// ptSession is the passthrough session of an open file (passthrough.go),
// guarded by openFile.mu.
type ptSession struct {
	// seen is what fstat said of the blob when last looked at.
	seen ptStamp
	// appends: every handle of the session appends (the committed bytes
	// stay as they are).
	appends bool
	// marked: the live mark is set (backend.LiveKey).
	marked bool
	// temp: the blob is an unnamed file (O_TMPFILE) not yet linked.
	temp bool
	// writers counts the open handles that may write below the end.
	writers int
	// lingerAt: when the last handle went (lingering).
	lingerAt time.Time
	// lastCommit: when the session was last committed; deferred: a close
	// since did not commit (deferFlush).
	lastCommit time.Time
	deferred   bool
	// flags: the inode flags given to the blob (mirrorFlags).
	flags uint32
}

// openState returns the open state of ino (nil when it has none: not
// open, lingering or ending).
func (s *Store) openState(ino uint64) *openFile {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	if w := s.writes[ino]; w != nil && w.phase == phaseOpen {
		return w.f
	}
	return nil
}

// quiet reports whether ino has no write state at all: no handle, no
// lingering session, no session end or settling. Caller holds no
// openFile.mu.
func (s *Store) quiet(ino uint64) bool {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	return s.writes[ino] == nil
}

// enterEndingLocked puts ino in the ending phase until the returned func is
// called. Caller holds filesMu; ino has no entry, or a lingering one
// whose session the caller takes to end.
func (s *Store) enterEndingLocked(ino uint64) (release func()) {
	ch := make(chan struct{})
	s.writes[ino] = &writeState{phase: phaseEnding, done: ch}
	return func() {
		s.filesMu.Lock()
		if w := s.writes[ino]; w != nil && w.done == ch {
			delete(s.writes, ino)
		}
		s.filesMu.Unlock()
		close(ch)
	}
}

// hold puts ino in the ending phase when it has no write state; else it
// returns nil.
func (s *Store) enterEnding(ino uint64) (release func()) {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	if s.writes[ino] != nil {
		return nil
	}
	return s.enterEndingLocked(ino)
}

// linger moves f (just released by its last handle, with a session) to
// the lingering phase, its end due after ptLinger. Caller holds f.mu and
// filesMu.
func (s *Store) linger(f *openFile, sess *ptSession) {
	sess.lingerAt = time.Now()
	s.writes[f.ino] = &writeState{phase: phaseLingering, f: f}
	s.schedule(sess.lingerAt.Add(ptLinger), f.ino, dueEnd)
}

// lingering returns the lingering session of ino, nil if none. Caller
// holds filesMu.
func (s *Store) lingeringLocked(ino uint64) *openFile {
	if w := s.writes[ino]; w != nil && w.phase == phaseLingering {
		return w.f
	}
	return nil
}

// lingers reports whether the passthrough session of ino lingers.
func (s *Store) lingers(ino uint64) bool {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	return s.lingeringLocked(ino) != nil
}

// What falls due.
type dueKind uint8

const (
	dueEnd    dueKind = iota + 1 // a lingering session ends
	dueCommit                    // a deferred commit is made
	dueSettle                    // an inode rewritten in place is settled (inplace.go)
)

type dueItem struct {
	at   time.Time
	ino  uint64
	kind dueKind
}

// dueQueue is a min-heap of dueItems by time.
type dueQueue []dueItem

func (q dueQueue) Len() int           { return len(q) }
func (q dueQueue) Less(a, b int) bool { return q[a].at.Before(q[b].at) }
func (q dueQueue) Swap(a, b int)      { q[a], q[b] = q[b], q[a] }
func (q *dueQueue) Push(x any)        { *q = append(*q, x.(dueItem)) }
func (q *dueQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// schedule queues what for ino at at. Caller holds filesMu.
func (s *Store) schedule(at time.Time, ino uint64, kind dueKind) {
	heap.Push(&s.due, dueItem{at, ino, kind})
}

// takeDue returns the queued items whose time has come. Caller holds no
// lock.
func (s *Store) takeDue(now time.Time) []dueItem {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	var out []dueItem
	for len(s.due) > 0 && !s.due[0].at.After(now) {
		out = append(out, heap.Pop(&s.due).(dueItem))
	}
	return out
}
