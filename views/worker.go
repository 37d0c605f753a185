package views

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mnemofs/mnemofs/store"
)

// worker is the queue of changes and the goroutine that applies them,
// one batch at a time and in order (run). Its lock, mu, guards the queue
// and its counts; nothing is applied under it, so it is never held while
// another lock of the views is taken.
type worker struct {
	// mu guards the queue of changes; cond signals both new work and
	// progress. enq counts changes queued, done those applied.
	mu        sync.Mutex
	cond      *sync.Cond
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
	// listener hears of every change applied (SetListener).
	listener atomic.Pointer[func(ino uint64)]
	// background is called around work that takes seconds of CPU and
	// answers no request (a build, a snapshot write): SetBackground.
	background atomic.Pointer[func() (done func())]
}

func newWorker() *worker {
	w := &worker{finished: make(chan struct{}), loaded: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	// The initial build counts as one queued change, so reads wait for it.
	w.enq = 1
	return w
}

// whenLoaded is closed once start returned (or the worker ended before).
func (w *worker) whenLoaded() <-chan struct{} { return w.loaded }

func (w *worker) markLoaded() { w.loadedOnce.Do(func() { close(w.loaded) }) }

// interrupt ends every wait in ready, now and later (Engine.Interrupt).
func (w *worker) interrupt() {
	w.mu.Lock()
	w.interrupted = true
	w.cond.Broadcast()
	w.mu.Unlock()
}

// ready waits until every change queued so far is applied (or interrupt).
func (w *worker) ready() {
	w.mu.Lock()
	target := w.enq
	if w.done < target && !w.interrupted {
		w.waiters++
		w.cond.Broadcast() // the worker stops settling
		for w.done < target && !w.interrupted {
			w.cond.Wait()
		}
		w.waiters--
	}
	w.mu.Unlock()
}

// backlog is the number of changes queued and not yet applied.
func (w *worker) backlog() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.enq - w.done
}

// settle is how long the worker lets changes gather before applying them
// when nobody waits for them: a burst of appends to one log, or of writes
// to one file, is then indexed once. Any reader (Ready) ends the wait, so
// a closed file is still found by the next search at once.
const settle = 20 * time.Millisecond

// handle queues the store's change events (Engine.Handle).
func (w *worker) handle(ch []store.Change) {
	if l := w.listener.Load(); l != nil {
		for _, c := range ch {
			if c.Ino != 0 {
				(*l)(c.Ino)
			}
		}
	}
	if slices.ContainsFunc(ch, func(c store.Change) bool { return c.Kind == store.Reindexed }) {
		w.requestRebuild() // which files are memories changed: everything again
		ch = slices.DeleteFunc(slices.Clone(ch), func(c store.Change) bool { return c.Kind == store.Reindexed })
	}
	w.mu.Lock()
	if !w.stopped {
		idle := len(w.queue) == 0
		w.queue = append(w.queue, ch...)
		w.enq += uint64(len(ch))
		if idle {
			w.cond.Broadcast() // wake the worker; later changes let it settle
		}
	}
	w.mu.Unlock()
}

// run is the worker's goroutine: start loads the catalog and index, then
// apply is given each batch of changes (and whether a rebuild was asked
// for before it), until stop.
func (w *worker) run(start func(), apply func(batch []store.Change, rebuild bool)) {
	defer func() {
		// Nothing more will be applied: release every waiter.
		w.mu.Lock()
		w.done = w.enq
		w.cond.Broadcast()
		w.mu.Unlock()
		w.markLoaded()
		close(w.finished)
	}()
	start()
	w.markLoaded()
	w.progress(1)
	for {
		batch, rebuild := w.next()
		if len(batch) == 0 {
			return // stopped
		}
		apply(batch, rebuild)
		w.progress(uint64(len(batch)))
	}
}

// next waits for changes, lets them settle unless a reader waits, and
// takes them; none once stopped.
func (w *worker) next() (batch []store.Change, rebuild bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.queue) == 0 && !w.stopped {
		w.cond.Wait()
	}
	if w.waiters == 0 && !w.stopped {
		end := time.Now().Add(settle)
		t := time.AfterFunc(settle, func() {
			w.mu.Lock()
			w.cond.Broadcast()
			w.mu.Unlock()
		})
		for w.waiters == 0 && !w.stopped && time.Now().Before(end) {
			w.cond.Wait()
		}
		t.Stop()
	}
	batch, rebuild = w.queue, w.rebuild
	w.queue, w.rebuild = nil, false
	return batch, rebuild
}

// stop has run end once the changes queued are applied, and waits for it.
func (w *worker) stop() {
	w.mu.Lock()
	w.stopped = true
	w.cond.Broadcast()
	w.mu.Unlock()
	<-w.finished
}

func (w *worker) setListener(fn func(ino uint64)) { w.listener.Store(&fn) }

func (w *worker) setBackground(fn func() (done func())) { w.background.Store(&fn) }

func (w *worker) inBackground() (done func()) {
	if fn := w.background.Load(); fn != nil {
		return (*fn)()
	}
	return func() {}
}

// requestRebuild has the next batch start with a rebuild (Engine.Rebuild).
func (w *worker) requestRebuild() {
	w.mu.Lock()
	if !w.stopped {
		w.rebuild = true
		w.queue = append(w.queue, store.Change{Kind: store.Changed}) // ino 0: only counts
		w.enq++
		w.cond.Broadcast()
	}
	w.mu.Unlock()
}

func (w *worker) isStopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

func (w *worker) progress(n uint64) {
	w.mu.Lock()
	w.done += n
	w.cond.Broadcast()
	w.mu.Unlock()
}

// idle reports that every change queued has been applied.
func (w *worker) idle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done == w.enq && len(w.queue) == 0 && !w.rebuild
}
