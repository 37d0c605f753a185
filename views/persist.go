package views

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/search"
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

// persister keeps the catalog and the index in the snapshot file: it
// loads them at start (in the worker), writes them from its own
// goroutine, and swaps a build's for the file's (swap.go). Its lock, mu,
// is held through a whole capture and write: it comes before the
// catalog's, the index's and the worker's, which a capture takes.
type persister struct {
	src Store // set by Engine.Start
	log *log.Logger
	// What a snapshot holds and a load fills: the catalog, the index,
	// the redaction counts; the embedder is told of every memory loaded.
	cat *catalog
	idx *search.Index
	red *redactCounts
	emb *embedder
	// ix applies what changed since a snapshot; w says whether changes
	// wait, and takes the swap; q says whether searches are answered.
	ix *indexer
	w  *worker
	q  *querier

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

// bind gives the persister the store it checks snapshots against.
func (p *persister) bind(src Store) { p.src = src }

// configure sets where and how often snapshots are kept (Engine.SetSnapshot).
func (p *persister) configure(path string, writable bool, every time.Duration) {
	if every <= 0 {
		every = SnapshotEvery
	}
	p.path, p.writable, p.every = path, writable, every
}

// on reports a snapshot to read: a path, and a store that says what
// changed since a version.
func (p *persister) on() bool { return p.path != "" && p.src.Versioned() }

// keeps reports a snapshot written (Engine.KeepsSnapshot).
func (p *persister) keeps() bool { return p.path != "" && p.writable }

// built notes a build finished: its snapshot is wanted soon, and once
// written swapped in.
func (p *persister) built() {
	p.swap.wanted.Store(true)
	p.soon()
}

// start runs the writer goroutine.
func (p *persister) start() {
	if !p.on() || !p.writable {
		return
	}
	// A write cut short by a crash leaves its temporary file: the data
	// directory is this process's (its lock), so none is being written.
	if old, _ := filepath.Glob(p.path + ".tmp*"); len(old) > 0 {
		for _, p := range old {
			os.Remove(p)
		}
	}
	p.kick, p.quit, p.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		tick := time.NewTicker(p.every)
		defer tick.Stop()
		var again <-chan time.Time // a busy moment: try again shortly
		var due time.Time          // when the pending snapshot was first due
		for {
			select {
			case <-p.quit:
				return
			case <-p.kick:
			case <-tick.C:
			case <-again:
			}
			again = nil
			if !p.dirty() {
				continue
			}
			if due.IsZero() {
				due = time.Now()
			}
			if !p.w.idle() || p.q.searching(snapYield) && time.Since(due) < p.every { // before markNow, which walks every entry
				again = time.After(time.Second)
				continue
			}
			if m, ok := p.markNow(); !ok || !p.save(m, false) {
				again = time.After(time.Second)
				continue
			}
			due = time.Time{}
		}
	}()
}

// dirty reports a catalog changed since the last snapshot.
func (p *persister) dirty() bool {
	p.mu.Lock()
	saved := p.savedGen
	p.mu.Unlock()
	gen, built := p.cat.genBuilt()
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

func (p *persister) markNow() (snapMark, bool) {
	dirs, err := p.src.DirLinks()
	if err != nil {
		return snapMark{}, false
	}
	v, ok := p.src.Settled(snapSettle)
	return snapMark{Version: v, Dirs: dirs}, ok
}

// soon asks for a snapshot once the worker is idle.
func (p *persister) soon() {
	if p.kick != nil {
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

// markForStop is the mark a last snapshot may claim, taken before the
// worker stops: events delivered after the stop are not applied, so a
// version read later could claim changes the catalog never saw.
func (p *persister) markForStop() (snapMark, bool) {
	if p.quit == nil || !p.dirty() && p.w.idle() {
		// Nothing new: what changes from now on is after the last
		// snapshot's version, and the next start applies it.
		return snapMark{}, false
	}
	return p.markNow()
}

// stop ends the writer and, when m is usable, writes a last
// snapshot if anything changed since the last one. The worker has stopped
// after applying everything delivered before m was taken.
func (p *persister) stop(m snapMark, ok bool) {
	if p.quit == nil {
		return
	}
	close(p.quit)
	<-p.done
	if ok {
		p.save(m, true)
	}
}

// save captures and writes a snapshot at mark m if the catalog
// changed since the last one and every change delivered up to m is
// applied. final: the worker has stopped (nothing is applied meanwhile,
// and what was queued is done). It reports false when it should be tried
// again soon (the worker was busy).
func (p *persister) save(m snapMark, final bool) bool {
	s := p
	s.mu.Lock()
	defer s.mu.Unlock()
	gen, built := p.cat.genBuilt()
	if gen == s.savedGen || !built {
		return true
	}
	if (!final && !p.w.idle()) || p.ix.retrying() {
		return false // what the store delivered is not all applied
	}
	if !p.roomFor(s.lastSize) {
		p.log.Printf("views: not writing the index snapshot: the disk is nearly full")
		return true
	}
	defer p.w.inBackground()()
	t0 := time.Now()
	im, gen, err := p.capture(m)
	if err != nil {
		p.log.Printf("views: not writing the index snapshot: %v", err)
		return true
	}
	// What the capture reflects must outlive a power cut before the
	// snapshot does: a commit lost with it would be reflected and, its
	// version given again to another write, never read again.
	if err := p.src.Sync(); err != nil {
		p.log.Printf("views: not writing the index snapshot: syncing the store: %v", err)
		return true
	}
	size, err := writeSnap(s.path, im)
	if err != nil {
		p.log.Printf("views: writing the index snapshot %s: %v", s.path, err)
		return true
	}
	s.savedGen, s.lastSize = gen, size
	n := im.head.Entries
	if !final && s.swap.wanted.CompareAndSwap(true, false) {
		if err := p.prepareSwap(im, gen); err != nil {
			p.log.Printf("views: not reading the index snapshot just written: %v", err)
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
		p.log.Printf("views: wrote the index snapshot (%d memories, %d MiB) in %v", n, size>>20, d.Round(time.Millisecond))
	}
	return true
}

// roomFor reports whether the disk has room for a snapshot of about size
// bytes, with margin: the store's own reserve must not pay for it.
func (p *persister) roomFor(size int64) bool {
	var fs syscall.Statfs_t
	dir := filepath.Dir(p.path)
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
func (p *persister) capture(m snapMark) (*snapImage, uint64, error) {
	id, err := p.src.ID()
	if err != nil {
		return nil, 0, err
	}
	im := &snapImage{head: snapHeader{Format: snapFormat, Program: programID(), Store: id, User: p.src.User(),
		Version: m.Version, Written: time.Now().UTC()}}
	im.cat.Dirs = m.Dirs
	gen, err := p.cat.capture(im)
	if err != nil {
		return nil, 0, err
	}
	im.idx = p.idx.Image()
	im.cat.Redact = p.red.capture()
	return im, gen, nil
}
