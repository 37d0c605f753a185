package main

import (
	"runtime"
	"testing"
)

// TestProcsGivesBackgroundWorkACPU: one P less once loaded, every P while
// background work runs (nested and overlapping), one less again after,
// with a collection on every P just before each drop and at no other time.
func TestProcsGivesBackgroundWorkACPU(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var collected []int // GOMAXPROCS at each collection
	collect := func() { collected = append(collected, runtime.GOMAXPROCS(0)) }
	p := &procs{all: 3, serve: 2, collect: collect}
	runtime.GOMAXPROCS(3)
	check := func(when string, want, collections int) {
		t.Helper()
		if got := runtime.GOMAXPROCS(0); got != want {
			t.Fatalf("%s: GOMAXPROCS %d, want %d", when, got, want)
		}
		if len(collected) != collections {
			t.Fatalf("%s: %d collections, want %d", when, len(collected), collections)
		}
		for _, n := range collected {
			if n != 3 {
				t.Fatalf("%s: a collection ran on %d Ps, want 3", when, n)
			}
		}
	}
	a := p.background() // the build, before the index is loaded
	check("building", 3, 0)
	p.loadedIndex()
	check("loaded, still building", 3, 0)
	a()
	check("loaded, idle", 2, 1)
	b, c := p.background(), p.background()
	check("two jobs", 3, 1)
	b()
	b() // a second call does nothing
	check("one job left", 3, 1)
	c()
	check("idle again", 2, 2)
	c()
	check("a second call", 2, 2)

	fixed := &procs{all: 3, serve: 2, fixed: true, collect: collect}
	fixed.loadedIndex()
	check("GOMAXPROCS set in the environment", 2, 2)
	runtime.GOMAXPROCS(3)
	fixed.background()()
	check("GOMAXPROCS set in the environment, after a job", 3, 2)
}
