package views

import (
	"log"
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
	// cat is the catalog of memories and its facets (catalog.go).
	cat *catalog
	// ix applies the changes to the catalog and the index (apply.go).
	ix *indexer
	// q answers searches and renders generated files (query.go).
	q *querier
	// red counts the redactions in what is indexed (redact.go).
	red *redactCounts
	// w queues the changes and applies them (worker.go).
	w *worker

	// emb embeds memories for hybrid search (embed.go); off: lexical only.
	emb *embedder
	// p keeps the catalog and index across starts (persist.go).
	p *persister
	// meta makes the files of meta/ other packages write (SetMetaSources).
	meta MetaSources
}

// NewEngine returns an engine; pass Handle as the store's OnChange, then
// call Start once the store is open.
func NewEngine(logger *log.Logger) *Engine {
	if logger == nil {
		logger = log.Default()
	}
	e := &Engine{idx: search.NewIndex(), w: newWorker(), cat: newCatalog(), emb: newEmbedder(logger), red: &redactCounts{}}
	e.ix = &indexer{idx: e.idx, log: logger, cat: e.cat, red: e.red, emb: e.emb, w: e.w, swap: func() { e.p.swapNow() }}
	e.q = &querier{idx: e.idx, cat: e.cat, w: e.w, red: e.red, emb: e.emb}
	e.p = &persister{log: logger, cat: e.cat, idx: e.idx, red: e.red, emb: e.emb, ix: e.ix, w: e.w, q: e.q}
	_, q := cache.Split(cache.DefaultBytes)
	e.SetCacheBytes(q)
	return e
}

// Start builds the catalog and index from the store in the background,
// then applies changes as they come.
func (e *Engine) Start(st Store) {
	e.st = st
	e.cat.bind(st)
	e.emb.bind(st)
	e.ix.bind(st)
	e.q.bind(st)
	e.p.bind(st)
	e.p.start()
	go e.w.run(e.start, e.applyQueued)
}

// Stop ends the worker once the queued changes are applied.
func (e *Engine) Stop() {
	m, mok := e.p.markForStop()
	e.w.stop()
	e.p.stop(m, mok)
	e.emb.end()
}

// start loads the catalog and index, from the snapshot or the store: the
// worker's first job.
func (e *Engine) start() {
	go search.Warm() // the query expansion's data, while the rest loads
	e.emb.start()
	if !e.p.load() {
		e.buildAll()
	}
}

// applyQueued applies a batch of the worker's, after a rebuild if one was
// asked for.
func (e *Engine) applyQueued(batch []store.Change, rebuild bool) {
	if rebuild {
		e.cat.reset()
		e.idx.Reset()
		e.red.restore(nil)
		e.buildAll()
	}
	e.ix.applyBatch(merge(batch))
}

// Loaded is closed once the catalog and index are first whole, from a
// snapshot or built from the store (or the engine stopped before).
func (e *Engine) Loaded() <-chan struct{} { return e.w.whenLoaded() }

// Interrupt ends every wait in Ready, now and later: the mount is going
// away, and a request waiting there would hold its unmount (and the
// process's exit) until the worker catches up, minutes while a million
// memories are first indexed. What such a request reads may miss
// memories not yet indexed. Changes are still applied until Stop.
func (e *Engine) Interrupt() { e.w.interrupt() }

// Ready waits until every change queued so far is applied (or Interrupt).
func (e *Engine) Ready() { e.w.ready() }

// Backlog is the number of changes queued and not yet applied.
func (e *Engine) Backlog() uint64 { return e.w.backlog() }

// Handle receives the store's change events.
func (e *Engine) Handle(ch []store.Change) { e.w.handle(ch) }

// SetListener has fn called with each memory that changed (its views may
// change), as the store reports it: before the call that changed it
// returns, with no lock held. A lookup that follows waits for the change
// to be applied (Ready).
func (e *Engine) SetListener(fn func(ino uint64)) { e.w.setListener(fn) }

// SetBackground has fn called when the engine starts a long piece of work
// that answers no request (building the index, writing its snapshot), and
// the func it returns when that work ends; calls may nest and overlap. The
// mount uses it to give such work a scheduler thread of its own
// (cmd/mnemofs procs), so that requests do not wait behind it.
func (e *Engine) SetBackground(fn func() (done func())) { e.w.setBackground(fn) }

// Rebuild drops the catalog and the search index and builds them again
// from the store (fsck --repair on a mounted store); reads wait for it.
func (e *Engine) Rebuild() { e.w.requestRebuild() }

// buildAll builds the catalog and index from the store and marks them
// whole (for the snapshot) if the build was not cut short by a stop.
func (e *Engine) buildAll() {
	defer e.w.inBackground()()
	if e.ix.build() {
		e.cat.markBuilt()
		e.p.built()
	}
}

// SetSnapshot has the engine keep its catalog and index in path across
// starts, written again every (0: SnapshotEvery) while memories change;
// writable false only reads it (a read-only mount). Call before Start.
// Only a store that can say what changed (store.Versioned) uses it.
func (e *Engine) SetSnapshot(path string, writable bool, every time.Duration) {
	e.p.configure(path, writable, every)
}

// KeepsSnapshot reports whether the engine, once started, keeps its
// catalog and index in a snapshot it writes (SetSnapshot, writable).
func (e *Engine) KeepsSnapshot() bool { return e.p.keeps() }
