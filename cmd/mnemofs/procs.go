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
// 2-4x the write+read tail: BENCHMARKS.md).
//
// A large index (bigIndex documents or more) is served on every CPU too:
// there a search takes milliseconds of CPU and its garbage collection
// seconds, and on one P the search tail was 2-4x that of two (at 1M
// memories, settled, p95 25-28 ms on one P against 11 ms on two; at 100k,
// 14-21 ms against 6-7: BENCHMARKS.md, "The search tail at 1M"), while
// the handoffs one P saves are tens of microseconds.
//
// GOMAXPROCS in the environment fixes the setting: procs changes nothing.
type procs struct {
	mu         sync.Mutex
	all, serve int
	fixed      bool
	loaded     bool
	big        bool // the index holds bigIndex documents or more
	busy       int  // background jobs running
}

// bigIndex is the index size (documents) from which the mount serves on
// every CPU. Measured: 1M and 100k gain (above); 10k and below were not
// measured, and there a search takes well under a millisecond.
const bigIndex = 50_000

// indexSize tells procs how many documents the index holds (at load, and
// again now and then: the store grows while mounted).
func (p *procs) indexSize(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.big = n >= bigIndex
	p.apply()
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
	if p.loaded && p.busy == 0 && !p.big {
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
