package store

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// heldMax is how many descriptors the store may keep open for files its
// callers have open (internal/blobfs/held.go): half of what the process
// may open (its RLIMIT_NOFILE as the store opens: the mount raises it
// first, RaiseFileLimit), the other half left to the KV and everything
// else.
func heldMax() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 1 << 20
	}
	return max(16, int(rl.Cur/2))
}

// RaiseFileLimit raises the process's limit on open files as far as it
// may: the soft limit to the hard one (Go does that at start), and, with
// CAP_SYS_RESOURCE (root), both to the kernel's most (fs/nr_open). A
// mount's callers may open as many files on it as they like; each holds
// nothing of the process's until it writes a large file, and those are
// bounded (heldMax), but the bound is a share of this limit. It returns
// the soft limit now.
func RaiseFileLimit() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	if most := nrOpen(); most > rl.Max {
		up := syscall.Rlimit{Cur: most, Max: most}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up) == nil {
			return most
		}
	}
	if rl.Cur < rl.Max {
		up := syscall.Rlimit{Cur: rl.Max, Max: rl.Max}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up) == nil {
			return rl.Max
		}
	}
	return rl.Cur
}

// nrOpen is the kernel's ceiling on a process's open files (0 when it
// cannot be read).
func nrOpen() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
