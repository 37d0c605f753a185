package views

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/store"
)

// The persisted index (SetSnapshot). At start the worker reads the
// snapshot file (snapshot.go) instead of every memory, if it was written
// by this program for this store and user, and brings it up to date with
// what the store says changed since (store.ChangedSince): the memories
// whose records were written after the snapshot's version are applied as
// changes, and those that are gone are dropped, through the same code as
// live changes. Anything else (no file, another program, the policy
// changed, a bad checksum) builds from the store as before.
//
// Writing: the snapshot is a capture of the catalog and the index made
// when every change the store delivered up to a version (store.Settled)
// has been applied, so its version never claims more than it holds;
// what the capture holds beyond that version (changes applied meanwhile)
// is applied again at the next start, which is harmless. The store is
// synced between the capture and the file's write, so that no power cut
// can leave a snapshot reflecting commits the store lost. It is written
// after a build or a start that changed anything, every SnapshotEvery while
// memories change, and when the engine stops; never for a read-only
// mount. A write that is due waits while searches are answered
// (snapYield), at most SnapshotEvery.

const (
	// SnapshotEvery: how often a changing catalog is written again
	// (SetSnapshot's default).
	SnapshotEvery = 5 * time.Minute
	// snapSettle: how long a capture waits for events in flight.
	snapSettle = 100 * time.Millisecond
	// snapYield: a snapshot waits until no search has been answered for
	// this long (its write takes seconds of CPU at a million memories,
	// which the searches would share), but not past every after it was
	// first due.
	snapYield = time.Second
)

type snapState struct {
	path     string // "": no snapshot
	writable bool
	every    time.Duration
	// mu: one capture and write at a time.
	mu       sync.Mutex
	savedGen uint64 // the catalog's generation of the last snapshot written or read
	lastSize int64
	// kick asks the writer goroutine for a snapshot now; quit ends it.
	kick, quit chan struct{}
	done       chan struct{}
	swap       swapState // swap.go
}

// buildAll builds the catalog and index from the store and marks them
// whole (for the snapshot) if the build was not cut short by a stop.
func (e *Engine) buildAll() {
	defer e.w.inBackground()()
	if e.ix.build() {
		e.cat.markBuilt()
		e.snap.swap.wanted.Store(true)
		e.snapSoon()
	}
}

// SetSnapshot has the engine keep its catalog and index in path across
// starts, written again every (0: SnapshotEvery) while memories change;
// writable false only reads it (a read-only mount). Call before Start.
// Only a store that can say what changed (store.Versioned) uses it.
func (e *Engine) SetSnapshot(path string, writable bool, every time.Duration) {
	if every <= 0 {
		every = SnapshotEvery
	}
	e.snap.path, e.snap.writable, e.snap.every = path, writable, every
}

// SnapshotPath is where the snapshot of a store for user is kept in the
// data directory dir.
func SnapshotPath(dir, user string) string {
	name := "views.snap"
	if user != "" {
		name = fmt.Sprintf("views-%x.snap", user)
	}
	return filepath.Join(dir, "index", name)
}

// RemoveSnapshots deletes every snapshot kept in the data directory dir
// (fsck --reindex): the next start builds from the store.
func RemoveSnapshots(dir string) error {
	err := os.RemoveAll(filepath.Join(dir, "index"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func (e *Engine) snapOn() bool { return e.snap.path != "" && e.st.Versioned() }

// KeepsSnapshot reports whether the engine, once started, keeps its
// catalog and index in a snapshot it writes (SetSnapshot, writable).
func (e *Engine) KeepsSnapshot() bool { return e.snap.path != "" && e.snap.writable }

// startSnapshots runs the writer goroutine.
func (e *Engine) startSnapshots() {
	if !e.snapOn() || !e.snap.writable {
		return
	}
	// A write cut short by a crash leaves its temporary file: the data
	// directory is this process's (its lock), so none is being written.
	if old, _ := filepath.Glob(e.snap.path + ".tmp*"); len(old) > 0 {
		for _, p := range old {
			os.Remove(p)
		}
	}
	e.snap.kick, e.snap.quit, e.snap.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(e.snap.done)
		tick := time.NewTicker(e.snap.every)
		defer tick.Stop()
		var again <-chan time.Time // a busy moment: try again shortly
		var due time.Time          // when the pending snapshot was first due
		for {
			select {
			case <-e.snap.quit:
				return
			case <-e.snap.kick:
			case <-tick.C:
			case <-again:
			}
			again = nil
			if !e.snapDirty() {
				continue
			}
			if due.IsZero() {
				due = time.Now()
			}
			if !e.w.idle() || e.q.searching(snapYield) && time.Since(due) < e.snap.every { // before markNow, which walks every entry
				again = time.After(time.Second)
				continue
			}
			if m, ok := e.markNow(); !ok || !e.saveSnapshot(m, false) {
				again = time.After(time.Second)
				continue
			}
			due = time.Time{}
		}
	}()
}

// snapDirty reports a catalog changed since the last snapshot.
func (e *Engine) snapDirty() bool {
	e.snap.mu.Lock()
	saved := e.snap.savedGen
	e.snap.mu.Unlock()
	gen, built := e.cat.genBuilt()
	return built && gen != saved
}

// snapMark is what a snapshot may claim: every change up to Version is
// applied (store.Settled), and the directories were where Dirs says at or
// before that version (read first: a directory moved after it is seen
// moved at the next start).
type snapMark struct {
	Version uint64
	Dirs    map[uint64]store.Link
}

func (e *Engine) markNow() (snapMark, bool) {
	dirs, err := e.st.DirLinks()
	if err != nil {
		return snapMark{}, false
	}
	v, ok := e.st.Settled(snapSettle)
	return snapMark{Version: v, Dirs: dirs}, ok
}

// snapSoon asks for a snapshot once the worker is idle.
func (e *Engine) snapSoon() {
	if e.snap.kick != nil {
		select {
		case e.snap.kick <- struct{}{}:
		default:
		}
	}
}

// markForStop is the mark a last snapshot may claim, taken before the
// worker stops: events delivered after the stop are not applied, so a
// version read later could claim changes the catalog never saw.
func (e *Engine) markForStop() (snapMark, bool) {
	if e.snap.quit == nil || !e.snapDirty() && e.w.idle() {
		// Nothing new: what changes from now on is after the last
		// snapshot's version, and the next start applies it.
		return snapMark{}, false
	}
	return e.markNow()
}

// stopSnapshots ends the writer and, when m is usable, writes a last
// snapshot if anything changed since the last one. The worker has stopped
// after applying everything delivered before m was taken.
func (e *Engine) stopSnapshots(m snapMark, ok bool) {
	if e.snap.quit == nil {
		return
	}
	close(e.snap.quit)
	<-e.snap.done
	if ok {
		e.saveSnapshot(m, true)
	}
}

// saveSnapshot captures and writes a snapshot at mark m if the catalog
// changed since the last one and every change delivered up to m is
// applied. final: the worker has stopped (nothing is applied meanwhile,
// and what was queued is done). It reports false when it should be tried
// again soon (the worker was busy).
func (e *Engine) saveSnapshot(m snapMark, final bool) bool {
	s := &e.snap
	s.mu.Lock()
	defer s.mu.Unlock()
	gen, built := e.cat.genBuilt()
	if gen == s.savedGen || !built {
		return true
	}
	if (!final && !e.w.idle()) || e.ix.retrying() {
		return false // what the store delivered is not all applied
	}
	if !e.roomFor(s.lastSize) {
		e.log.Printf("views: not writing the index snapshot: the disk is nearly full")
		return true
	}
	defer e.w.inBackground()()
	t0 := time.Now()
	im, gen, err := e.capture(m)
	if err != nil {
		e.log.Printf("views: not writing the index snapshot: %v", err)
		return true
	}
	// What the capture reflects must outlive a power cut before the
	// snapshot does: a commit lost with it would be reflected and, its
	// version given again to another write, never read again.
	if err := e.st.Sync(); err != nil {
		e.log.Printf("views: not writing the index snapshot: syncing the store: %v", err)
		return true
	}
	size, err := writeSnap(s.path, im)
	if err != nil {
		e.log.Printf("views: writing the index snapshot %s: %v", s.path, err)
		return true
	}
	s.savedGen, s.lastSize = gen, size
	n := im.head.Entries
	if !final && s.swap.wanted.CompareAndSwap(true, false) {
		if err := e.prepareSwap(im, gen); err != nil {
			e.log.Printf("views: not reading the index snapshot just written: %v", err)
		}
	}
	im = nil
	if size > 32<<20 && !final { // final: the process is about to end
		// The capture's copies and the encoder's buffers are garbage
		// now, about the snapshot's size again: hand them back (as
		// after a build) instead of letting the heap keep them.
		debug.FreeOSMemory()
	}
	if d := time.Since(t0); d > time.Second {
		e.log.Printf("views: wrote the index snapshot (%d memories, %d MiB) in %v", n, size>>20, d.Round(time.Millisecond))
	}
	return true
}

// roomFor reports whether the disk has room for a snapshot of about size
// bytes, with margin: the store's own reserve must not pay for it.
func (e *Engine) roomFor(size int64) bool {
	var fs syscall.Statfs_t
	dir := filepath.Dir(e.snap.path)
	for ; ; dir = filepath.Dir(dir) {
		if err := syscall.Statfs(dir, &fs); err == nil || dir == filepath.Dir(dir) {
			break
		}
	}
	free := int64(fs.Bavail) * int64(fs.Bsize)
	return free > 2*size+256<<20
}

// capture copies what a snapshot holds, at mark m: the catalog's base
// and the entries put since (entries are never changed in place), the
// facets' bitmaps, the index's image.
func (e *Engine) capture(m snapMark) (*snapImage, uint64, error) {
	id, err := e.st.ID()
	if err != nil {
		return nil, 0, err
	}
	im := &snapImage{head: snapHeader{Format: snapFormat, Program: programID(), Store: id, User: e.st.User(),
		Version: m.Version, Written: time.Now().UTC()}}
	im.cat.Dirs = m.Dirs
	gen, err := e.cat.capture(im)
	if err != nil {
		return nil, 0, err
	}
	im.idx = e.idx.Image()
	im.cat.Redact = e.red.capture()
	return im, gen, nil
}
