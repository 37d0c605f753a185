package views

import (
	"slices"
	"time"

	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// Loaded is closed once the catalog and index are first whole, from a
// snapshot or built from the store (or the engine stopped before).
func (e *Engine) Loaded() <-chan struct{} { return e.loaded }

func (e *Engine) markLoaded() { e.loadedOnce.Do(func() { close(e.loaded) }) }

// Interrupt ends every wait in Ready, now and later: the mount is going
// away, and a request waiting there would hold its unmount (and the
// process's exit) until the worker catches up, minutes while a million
// memories are first indexed. What such a request reads may miss
// memories not yet indexed. Changes are still applied until Stop.
func (e *Engine) Interrupt() {
	e.qMu.Lock()
	e.interrupted = true
	e.qCond.Broadcast()
	e.qMu.Unlock()
}

// Ready waits until every change queued so far is applied (or Interrupt).
func (e *Engine) Ready() {
	e.qMu.Lock()
	target := e.enq
	if e.done < target && !e.interrupted {
		e.waiters++
		e.qCond.Broadcast() // the worker stops settling
		for e.done < target && !e.interrupted {
			e.qCond.Wait()
		}
		e.waiters--
	}
	e.qMu.Unlock()
}

// Backlog is the number of changes queued and not yet applied.
func (e *Engine) Backlog() uint64 {
	e.qMu.Lock()
	defer e.qMu.Unlock()
	return e.enq - e.done
}

// settle is how long the worker lets changes gather before applying them
// when nobody waits for them: a burst of appends to one log, or of writes
// to one file, is then indexed once. Any reader (Ready) ends the wait, so
// a closed file is still found by the next search at once.
const settle = 20 * time.Millisecond

// Handle receives the store's change events.
func (e *Engine) Handle(ch []store.Change) {
	if l := e.listener.Load(); l != nil {
		for _, c := range ch {
			if c.Ino != 0 {
				(*l)(c.Ino)
			}
		}
	}
	if slices.ContainsFunc(ch, func(c store.Change) bool { return c.Kind == store.Reindexed }) {
		e.Rebuild() // which files are memories changed: everything again
		ch = slices.DeleteFunc(slices.Clone(ch), func(c store.Change) bool { return c.Kind == store.Reindexed })
	}
	e.qMu.Lock()
	if !e.stopped {
		idle := len(e.queue) == 0
		e.queue = append(e.queue, ch...)
		e.enq += uint64(len(ch))
		if idle {
			e.qCond.Broadcast() // wake the worker; later changes let it settle
		}
	}
	e.qMu.Unlock()
}

func (e *Engine) run() {
	defer func() {
		// Nothing more will be applied: release every waiter.
		e.qMu.Lock()
		e.done = e.enq
		e.qCond.Broadcast()
		e.qMu.Unlock()
		e.markLoaded()
		close(e.finished)
	}()
	go search.Warm() // the query expansion's data, while the rest loads
	if e.emb != nil {
		if err := e.emb.load(e.st); err != nil {
			e.log.Printf("views: loading embeddings: %v", err)
		}
		go e.emb.run(e)
	}
	if !e.loadSnapshot() {
		e.buildAll()
	}
	e.markLoaded()
	e.progress(1)
	for {
		e.qMu.Lock()
		for len(e.queue) == 0 && !e.stopped {
			e.qCond.Wait()
		}
		if e.waiters == 0 && !e.stopped {
			end := time.Now().Add(settle)
			t := time.AfterFunc(settle, func() {
				e.qMu.Lock()
				e.qCond.Broadcast()
				e.qMu.Unlock()
			})
			for e.waiters == 0 && !e.stopped && time.Now().Before(end) {
				e.qCond.Wait()
			}
			t.Stop()
		}
		batch := e.queue
		e.queue = nil
		rebuild := e.rebuild
		e.rebuild = false
		e.qMu.Unlock()
		if len(batch) == 0 {
			return // stopped
		}
		if rebuild {
			e.mu.Lock()
			e.resetCatalog()
			e.snap.built = false
			e.gen++
			e.mu.Unlock()
			e.idx.Reset()
			e.red.mu.Lock()
			e.red.byIno = nil
			e.red.mu.Unlock()
			e.buildAll()
		}
		e.applyBatch(merge(batch))
		e.progress(uint64(len(batch)))
	}
}

// SetListener has fn called with each memory that changed (its views may
// change), as the store reports it: before the call that changed it
// returns, with no lock held. A lookup that follows waits for the change
// to be applied (Ready).
func (e *Engine) SetListener(fn func(ino uint64)) { e.listener.Store(&fn) }

// SetBackground has fn called when the engine starts a long piece of work
// that answers no request (building the index, writing its snapshot), and
// the func it returns when that work ends; calls may nest and overlap. The
// mount uses it to give such work a scheduler thread of its own
// (cmd/mnemofs procs), so that requests do not wait behind it.
func (e *Engine) SetBackground(fn func() (done func())) { e.background.Store(&fn) }

func (e *Engine) inBackground() (done func()) {
	if fn := e.background.Load(); fn != nil {
		return (*fn)()
	}
	return func() {}
}

// Rebuild drops the catalog and the search index and builds them again
// from the store (fsck --repair on a mounted store); reads wait for it.
func (e *Engine) Rebuild() {
	e.qMu.Lock()
	if !e.stopped {
		e.rebuild = true
		e.queue = append(e.queue, store.Change{Kind: store.Changed}) // ino 0: only counts
		e.enq++
		e.qCond.Broadcast()
	}
	e.qMu.Unlock()
}

func (e *Engine) isStopped() bool {
	e.qMu.Lock()
	defer e.qMu.Unlock()
	return e.stopped
}

func (e *Engine) progress(n uint64) {
	e.qMu.Lock()
	e.done += n
	e.qCond.Broadcast()
	e.qMu.Unlock()
}

// idle reports that every change queued has been applied.
func (e *Engine) idle() bool {
	e.qMu.Lock()
	defer e.qMu.Unlock()
	return e.done == e.enq && len(e.queue) == 0 && !e.rebuild
}
