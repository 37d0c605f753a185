package main

import (
	"os"
	"runtime"
	"sync"
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
// GOMAXPROCS in the environment fixes the setting: procs changes nothing.
type procs struct {
	mu         sync.Mutex
	all, serve int
	fixed      bool
	loaded     bool
	busy       int // background jobs running
}

func newProcs() *procs {
	n := runtime.GOMAXPROCS(0)
	return &procs{all: n, serve: max(1, n-1), fixed: os.Getenv("GOMAXPROCS") != ""}
}

// loadedIndex is called once the index is loaded: from then on the mount
// serves requests on one P less, unless background work runs.
func (p *procs) loadedIndex() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loaded = true
	p.apply()
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
			p.apply()
			p.mu.Unlock()
		})
	}
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
