package views

import (
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mnemofs/mnemofs/cache"
	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// indexMax is how much of a file is indexed for search.
const indexMax = 4 << 20

// Entry is what the views know about one memory, kept in memory. An Entry
// in the catalog is never changed: readers use it without a lock, and the
// worker replaces it with a new one.
type Entry struct {
	Ino      uint64
	Users    []string
	Type     string
	Tags     []string
	Created  time.Time
	Modified time.Time
	// nextLine: for logs, the line number after the last newline;
	// indexedSize: the bytes of the log indexed so far.
	nextLine    uint32
	indexedSize uint64
	// log: for a log, its lines' metadata (lines.go); Users and Tags then
	// also hold the union of its lines'.
	log *logLines
	// parent and name: where the memory sits (its first link), to decide
	// again whether it is hidden when a directory moves (facets.go).
	parent uint64
	name   string
	// ctime and size: the inode's when this Entry was made; a start from
	// a snapshot reads again only the metadata of a memory whose ctime
	// did not change (reconcile.go).
	ctime int64
	size  uint64
}

// Engine keeps the catalog of memories and the lexical index in step with
// the store. Its Handle is the store's OnChange: changes are queued and
// applied by one worker goroutine, so writers never wait for indexing, and
// every read (a search, a view listing) first waits for the queue to drain,
// so a file closed before the read is always seen by it.
type Engine struct {
	st  Store
	idx *search.Index
	log *log.Logger
	// scanned: how many memories the last build read by range scans
	// (store.ScanMemories), not one lookup at a time.
	scanned atomic.Int64
	// retry: memories to refresh again once the backend answers (retry.go).
	retry retries

	// mu guards cat, gen, the facets and the caches below. Only the
	// worker changes cat, hidden and facets.
	mu  sync.RWMutex
	cat catalog
	gen uint64
	// facets: the memories of each user, type, tag and day (facets.go);
	// hidden: the memories the unfiltered views leave out (archived).
	facets [nFields]facet
	hidden map[uint64]bool
	// recent: Recent(recentN, Filter{}) as of generation recentGen.
	recent    []uint64
	recentN   int
	recentGen uint64
	// scans counts walks over the whole catalog (CatalogScans).
	scans atomic.Uint64
	// dirMoved: a directory moved in the batch being applied, so which
	// memories are hidden is decided again after it. Worker only.
	dirMoved bool
	// movedDirs are the directories moved in that batch (rescanTree).
	movedDirs []uint64
	// listener hears of every change applied (SetListener).
	listener atomic.Pointer[func(ino uint64)]
	// dirsCache: for a filter key, the directories holding a match.
	dirsCache map[string]dirSet
	// red counts the redactions in what is indexed (redact.go).
	red redactCounts
	// qc caches search results by generation (qcache.go); nil: off.
	qc *cache.Sized[string, []Result]
	// afterSearch, if set, runs after every search (SetAfterSearch).
	afterSearch func()

	// pathMu guards paths, a memo of directory paths valid while no
	// move is applied: pathGen is the count of moves (moves) it is of.
	pathMu  sync.Mutex
	paths   map[uint64]string
	pathGen uint64
	moves   atomic.Uint64

	// qMu guards the queue of changes; qCond signals both new work and
	// progress. enq counts changes queued, done those applied.
	qMu       sync.Mutex
	qCond     *sync.Cond
	queue     []store.Change
	enq, done uint64
	stopped   bool
	// interrupted: the mount is going away, and readers no longer wait
	// for the worker (Interrupt).
	interrupted bool
	// waiters counts readers in Ready: the worker applies at once for them
	// and otherwise lets changes settle first (see settle).
	waiters int
	// rebuild: drop the catalog and index and build them again (Rebuild).
	rebuild  bool
	finished chan struct{}
	// loaded is closed once the catalog and index are first whole (read
	// from a snapshot or built), or the worker ended before.
	loaded     chan struct{}
	loadedOnce sync.Once

	// emb embeds memories for hybrid search (embed.go); nil: lexical only.
	emb *embedder
	// tuning replaces search.DefaultTuning when set (SetTuning).
	tuning *search.Tuning
	// snap: the catalog and index kept across starts (persist.go).
	snap snapState
	// background is called around work that takes seconds of CPU and
	// answers no request (a build, a snapshot write): SetBackground.
	background atomic.Pointer[func() (done func())]
	// meta makes the files of meta/ other packages write (SetMetaSources).
	meta MetaSources
}

type dirSet struct {
	gen  uint64
	dirs map[uint64]bool
}

// NewEngine returns an engine; pass Handle as the store's OnChange, then
// call Start once the store is open.
func NewEngine(logger *log.Logger) *Engine {
	if logger == nil {
		logger = log.Default()
	}
	e := &Engine{idx: search.NewIndex(), log: logger, dirsCache: map[string]dirSet{}, finished: make(chan struct{}), loaded: make(chan struct{})}
	e.resetCatalog()
	e.qCond = sync.NewCond(&e.qMu)
	_, q := cache.Split(cache.DefaultBytes)
	e.SetCacheBytes(q)
	// The initial build counts as one queued change, so reads wait for it.
	e.enq = 1
	return e
}

// Start builds the catalog and index from the store in the background,
// then applies changes as they come.
func (e *Engine) Start(st Store) {
	e.st = st
	e.startSnapshots()
	go e.run()
}

// Stop ends the worker once the queued changes are applied.
func (e *Engine) Stop() {
	m, mok := e.markForStop()
	e.qMu.Lock()
	e.stopped = true
	e.qCond.Broadcast()
	e.qMu.Unlock()
	<-e.finished
	e.stopSnapshots(m, mok)
	if e.emb != nil {
		close(e.emb.stop)
		<-e.emb.done
	}
}
