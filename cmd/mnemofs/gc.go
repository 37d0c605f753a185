package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// batchGC has the collector run half as often in a batch command that
// allocates much and keeps much (import, which builds the index): GOGC 200
// instead of 100, the heap bounded to half the memory the machine (or the
// process's cgroup) has, as GOMEMLIMIT would. A million memories of
// about 1 KiB imported in 45 s instead of 49.6 (BENCHMARKS.md, "The import
// of longer memories at a million"). GOGC or GOMEMLIMIT set in the
// environment are obeyed instead.
func batchGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	total := physicalMemory()
	if total == 0 {
		return
	}
	debug.SetMemoryLimit(int64(total / 2))
	debug.SetGCPercent(200)
}

// physicalMemory is the machine's memory, or the cgroup's limit when
// lower; 0 when neither can be read.
func physicalMemory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	total := uint64(si.Totalram) * uint64(si.Unit)
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n < total {
			total = n
		}
	}
	return total
}
