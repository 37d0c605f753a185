package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestMountRaisesFileLimit: the mount raises its limit on open files as
// far as it may (with CAP_SYS_RESOURCE, to the kernel's most; else to its
// hard limit), so that callers who open
// many files on it leave its store room: the store keeps at most half of
// them open for callers (store/internal/blobfs/held.go).
func TestMountRaisesFileLimit(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", m.cmd.Process.Pid))
	check(t, err)
	var soft, hard uint64
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, "Max open files")); strings.HasPrefix(l, "Max open files") && len(f) >= 2 {
			soft, _ = strconv.ParseUint(f[0], 10, 64)
			hard, _ = strconv.ParseUint(f[1], 10, 64)
		}
	}
	var mine syscall.Rlimit
	check(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &mine))
	want := mine.Max
	if canRaiseLimits(t) {
		nr, err := os.ReadFile("/proc/sys/fs/nr_open")
		check(t, err)
		want, _ = strconv.ParseUint(strings.TrimSpace(string(nr)), 10, 64)
	}
	if soft != want || hard < want {
		t.Errorf("the mount may open %d files (hard limit %d), want %d", soft, hard, want)
	}
}

// canRaiseLimits reports whether this process (and so the mount it
// starts) has CAP_SYS_RESOURCE, which raising a hard limit needs.
func canRaiseLimits(t *testing.T) bool {
	b, err := os.ReadFile("/proc/self/status")
	check(t, err)
	_, v, _ := strings.Cut(string(b), "\nCapEff:")
	caps, err := strconv.ParseUint(strings.TrimSpace(strings.SplitN(v, "\n", 2)[0]), 16, 64)
	const capSysResource = 24
	return err == nil && caps&(1<<capSysResource) != 0
}
