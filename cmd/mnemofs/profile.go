package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// startProfile writes a CPU profile of the mount to $MNEMOFS_CPUPROFILE and
// an execution trace to $MNEMOFS_TRACE when those are set, and the heap
// as it is at the end to $MNEMOFS_MEMPROFILE (diagnosis aids for the
// benchmarks; see BENCHMARKS.md).
func startProfile() (stop func()) {
	cpu := diagnose("MNEMOFS_CPUPROFILE", "CPU profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
	tr := diagnose("MNEMOFS_TRACE", "execution trace", trace.Start, trace.Stop)
	var heap io.Writer
	mem := diagnose("MNEMOFS_MEMPROFILE", "heap profile", func(w io.Writer) error { heap = w; return nil }, func() {
		runtime.GC()
		if err := pprof.WriteHeapProfile(heap); err != nil {
			fmt.Fprintf(os.Stderr, "mnemofs: warning: no heap profile: %v\n", err)
		}
	})
	every := periodicHeap()
	return func() { every(); cpu(); tr(); mem() }
}

// periodicHeap writes the heap profile to $MNEMOFS_MEMPROFILE.<n> every
// $MNEMOFS_MEMPROFILE_EVERY (a duration) while the command runs: the
// live heap at a build's peak, which the profile at the end does not show.
func periodicHeap() (stop func()) {
	base, every := os.Getenv("MNEMOFS_MEMPROFILE"), os.Getenv("MNEMOFS_MEMPROFILE_EVERY")
	d, err := time.ParseDuration(every)
	if base == "" || every == "" || err != nil || d <= 0 {
		return func() {}
	}
	quit := make(chan struct{})
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if f, err := os.Create(fmt.Sprintf("%s.%d", base, n)); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}()
	return func() { close(quit) }
}

// diagnose starts a recording into the file named by $env, if set, and
// returns what stops it.
func diagnose(env, what string, start func(io.Writer) error, end func()) (stop func()) {
	path := os.Getenv(env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = start(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mnemofs: warning: no %s: %v\n", what, err)
		return func() {}
	}
	return func() { end(); f.Close() }
}
