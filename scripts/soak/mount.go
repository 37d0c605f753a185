package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// For scripts/bench-maintain.sh, which times a pass inside a real mount:
// -gen writes the tree that -pass imports, and -probe measures the
// latency of a small write and read-back through the mount.

// genTree writes n memories under src: a tenth idle scratchpads, a tenth
// low-importance session turns in 2,000 sessions, the rest notes with many
// duplicates.
func genTree(src string, n int) error {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range n {
		var p, body string
		switch i % 10 {
		case 0:
			p = fmt.Sprintf("working/task-%d/notes-%d.md", i%500, i)
			body = "scratch notes"
		case 1:
			p = fmt.Sprintf("episodic/sessions/s%d/turn-%d.md", i%2000, i)
			body = "---\nimportance: 0.1\n---\nsmall talk"
		default:
			p = fmt.Sprintf("semantic/notes/d%d/note-%d.md", i%1000, i)
			body = fmt.Sprintf("note %d about %s", i%(n/20+1), words[r.IntN(len(words))])
		}
		full := filepath.Join(src, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(body+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// probeMount creates, writes, closes and reads back a small file in dir
// every millisecond until interrupted (SIGINT, SIGTERM) or d has passed,
// then prints the latency percentiles of one create+write+close+read.
func probeMount(dir string, d time.Duration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	var lat []time.Duration
	end := time.Now().Add(d)
loop:
	for k := 0; time.Now().Before(end); k++ {
		select {
		case <-stop:
			break loop
		default:
		}
		t := time.Now()
		p := filepath.Join(dir, fmt.Sprintf("p-%d-%d.md", t.UnixNano(), k))
		want := []byte(p + "\n") // unique: never a duplicate
		if err := os.WriteFile(p, want, 0o644); err != nil {
			return err
		}
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if string(got) != string(want) {
			return fmt.Errorf("%s: read %q", p, got)
		}
		lat = append(lat, time.Since(t))
		time.Sleep(time.Millisecond)
	}
	if len(lat) == 0 {
		return fmt.Errorf("no samples")
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	q := func(f float64) time.Duration { return lat[int(f*float64(len(lat)-1))].Round(time.Microsecond) }
	fmt.Printf("%d samples, p50 %v, p95 %v, p99 %v, max %v\n", len(lat), q(0.5), q(0.95), q(0.99), lat[len(lat)-1].Round(time.Microsecond))
	return nil
}
