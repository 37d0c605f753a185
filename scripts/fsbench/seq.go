// Sequential throughput, and the daemon's CPU time.

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// daemonCPU is the CPU time used so far by the threads of the daemon -pid
// (the sum of /proc/PID/task/*/schedstat), or 0 without -pid.
func daemonCPU() time.Duration {
	if *pid <= 0 {
		return 0
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", *pid))
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += ns
		}
	}
	return time.Duration(sum)
}

// sequential writes then reads a seq-mib file with 1 MiB requests.
func sequential(p string, buf []byte) []Result {
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	size := int64(*seqMiB) << 20
	mibps := func(d time.Duration) float64 { return float64(*seqMiB) / d.Seconds() }
	t := time.Now()
	fd, err := unix.Open(p, unix.O_CREAT|unix.O_TRUNC|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	check(err, "create big file")
	for off := int64(0); off < size; off += int64(len(buf)) {
		_, err := unix.Write(fd, buf)
		check(err, "write")
	}
	check(unix.Fsync(fd), "fsync")
	check(unix.Close(fd), "close")
	w := Result{Name: fmt.Sprintf("seq write %d MiB (1 MiB writes, fsync)", *seqMiB), Unit: "MiB/s", N: 1, Median: mibps(time.Since(t))}

	note := "page cache dropped"
	// Let the daemon finish what a close sets off (mnemofs hashes a
	// large file written through passthrough just after its session
	// ends, which reads it back into the page cache) before dropping
	// the cache, so that the cold read is cold for every target.
	time.Sleep(time.Second)
	unix.Sync()
	if !*dropCache || os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0) != nil {
		note = "page cache NOT dropped"
	}
	read := func(name, note string) Result {
		t := time.Now()
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		check(err, "open big file")
		var got int64
		for {
			m, err := unix.Read(fd, buf)
			check(err, "read")
			if m == 0 {
				break
			}
			got += int64(m)
		}
		unix.Close(fd)
		if got != size {
			fatal(fmt.Errorf("read %d bytes of %s, want %d", got, p, size))
		}
		return Result{Name: name, Unit: "MiB/s", N: 1, Median: mibps(time.Since(t)), Note: note}
	}
	cold := read(fmt.Sprintf("seq read %d MiB (cold)", *seqMiB), note)
	warm := read(fmt.Sprintf("seq read %d MiB (warm)", *seqMiB), "")
	return []Result{w, cold, warm}
}
