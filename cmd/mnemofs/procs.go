package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// procs decides how many scheduler threads (Go Ps) the mount runs on.
//
// Serving requests, it runs on one CPU less than the machine has: a FUSE
// request is a chain of goroutine handoffs (go-fuse's reader, the
// handler, Badger's writer), and with a spare P each handoff wakes
// another thread, which spins on the CPU the calling process needs. On 2
// CPUs that halves the median unlink (BENCHMARKS.md, "One CPU less for
// the mount").
//
// Loading the index, and whenever work that answers no request runs
// (building the index again, writing its snapshot, a maintenance pass),
// it runs on every CPU: on a single P that work holds the only thread
// for up to a preemption slice at a time, and a request arriving then
// waits behind it (a maintenance pass took twice as long on one P, with
// 2-4x the write+read tail: BENCHMARKS.md). One P still costs search
// latency when nothing else runs: the garbage collector shares that P
// (BENCHMARKS.md, "One P and the search tail").
//
// Before it drops to fewer Ps, it collects the garbage of the work that
// ends (a load, a build or a snapshot write leaves hundreds of MiB at a
// million memories) while every P is there: collected later, on the one
// P that serves requests, that cycle would take seconds of wall time and
// slow every request meanwhile. It also gives the freed memory back.
//
// GOMAXPROCS in the environment fixes the setting: procs changes nothing.
type procs struct {
	mu         sync.Mutex
	all, serve int
	fixed      bool
	loaded     bool
	busy       int    // background jobs running
	collect    func() // a full collection (debug.FreeOSMemory)
	collecting atomic.Bool
}

func newProcs() *procs {
	n := runtime.GOMAXPROCS(0)
	return &procs{all: n, serve: max(1, n-1), fixed: os.Getenv("GOMAXPROCS") != "", collect: debug.FreeOSMemory}
}

// loadedIndex is called once the index is loaded: from then on the mount
// serves requests on one P less, unless background work runs.
func (p *procs) loadedIndex() {
	p.mu.Lock()
	p.loaded = true
	p.mu.Unlock()
	p.settle()
}

// background marks the start of a piece of background work; the func it
// returns marks its end (call it once).
func (p *procs) background() (done func()) {
	p.mu.Lock()
	p.busy++
	p.apply()
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.busy--
			p.mu.Unlock()
			p.settle()
		})
	}
}

// settle applies the current state, collecting first (on every P, not
// holding mu: it takes seconds on a large heap) when that drops Ps. A
// settle that finds a collection running leaves it to that one.
func (p *procs) settle() {
	p.mu.Lock()
	drop := !p.fixed && p.want() < runtime.GOMAXPROCS(0)
	p.mu.Unlock()
	if drop && p.collect != nil && p.collecting.CompareAndSwap(false, true) {
		p.collect()
		p.collecting.Store(false)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.apply()
}

// want is the number of Ps for the current state.
func (p *procs) want() int {
	if p.loaded && p.busy == 0 {
		return p.serve
	}
	return p.all
}

func (p *procs) apply() {
	if p.fixed {
		return
	}
	if n := p.want(); runtime.GOMAXPROCS(0) != n {
		runtime.GOMAXPROCS(n)
	}
}
