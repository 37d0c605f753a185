package main

import (
	"runtime"
	"testing"
)

// TestProcsGivesBackgroundWorkACPU: one P less once loaded, every P while
// background work runs (nested and overlapping) or the index is large,
// one less again after.
func TestProcsGivesBackgroundWorkACPU(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	p := &procs{all: 3, serve: 2}
	runtime.GOMAXPROCS(3)
	check := func(when string, want int) {
		t.Helper()
		if got := runtime.GOMAXPROCS(0); got != want {
			t.Fatalf("%s: GOMAXPROCS %d, want %d", when, got, want)
		}
	}
	a := p.background() // the build, before the index is loaded
	check("building", 3)
	p.loadedIndex()
	check("loaded, still building", 3)
	a()
	check("loaded, idle", 2)
	b, c := p.background(), p.background()
	check("two jobs", 3)
	b()
	b() // a second call does nothing
	check("one job left", 3)
	c()
	check("idle again", 2)
	p.indexSize(bigIndex)
	check("a large index", 3)
	d := p.background()
	d()
	check("a large index, after a job", 3)
	p.indexSize(bigIndex - 1)
	check("a small index again", 2)

	fixed := &procs{all: 3, serve: 2, fixed: true}
	fixed.loadedIndex()
	check("GOMAXPROCS set in the environment", 2)
	runtime.GOMAXPROCS(3)
	fixed.background()()
	check("GOMAXPROCS set in the environment, after a job", 3)
}
