package main

import (
	"runtime/debug"
	"syscall"
	"testing"
)

// TestBatchGC: the import's collector settings are GOGC 200 bounded by
// half the memory, and GOGC in the environment wins.
func TestBatchGC(t *testing.T) {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	total := physicalMemory()
	if total == 0 || total > uint64(si.Totalram)*uint64(si.Unit) {
		t.Fatalf("physicalMemory() = %d, the machine has %d", total, uint64(si.Totalram)*uint64(si.Unit))
	}
	oldGC, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() { debug.SetGCPercent(oldGC); debug.SetMemoryLimit(oldLimit) }()
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	batchGC()
	if got := debug.SetGCPercent(100); got != 200 {
		t.Errorf("GOGC after batchGC = %d, want 200", got)
	}
	if got := debug.SetMemoryLimit(-1); got != int64(total/2) {
		t.Errorf("memory limit after batchGC = %d, want %d", got, total/2)
	}
	t.Setenv("GOGC", "100")
	batchGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC=100 set, batchGC made it %d", got)
	}
}
