package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// What the mount process costs: its CPU time and memory, read from /proc.

// quiesce waits until the mount process uses under 5% of a CPU for a
// second (15 minutes at most), and returns how long that took and the CPU
// time it used.
func quiesce() (time.Duration, time.Duration) {
	t := time.Now()
	start := cpuTime()
	prev := start
	for time.Since(t) < 15*time.Minute { // an index build on etcd takes minutes
		time.Sleep(time.Second)
		now := cpuTime()
		if now-prev < 50*time.Millisecond {
			return time.Since(t) - time.Second, now - start
		}
		prev = now
	}
	return time.Since(t), prev - start
}

// cpuTime is the user+system CPU time of the mount process.
func cpuTime() time.Duration {
	if mountCmd == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", mountCmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces): utime is
	// the 14th field of the line, stime the 15th; both in clock ticks.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

// rss reads VmRSS and VmHWM of the mount process.
func rss() string {
	if mountCmd == nil {
		return "?"
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", mountCmd.Process.Pid))
	if err != nil {
		return "?"
	}
	var rss, hwm, anon, file string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss = kib(f[1])
		case "VmHWM:":
			hwm = kib(f[1])
		case "RssAnon:":
			anon = kib(f[1])
		case "RssFile:":
			file = kib(f[1])
		}
	}
	return fmt.Sprintf("VmRSS %s (anonymous %s, file-backed %s; peak VmHWM %s)", rss, anon, file, hwm)
}

func kib(s string) string {
	v, _ := strconv.ParseInt(s, 10, 64)
	return mib(v)
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
