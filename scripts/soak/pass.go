package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/transfer"
)

// -pass: one maintenance pass over many imported memories, in process and
// timed, with the latency of a small write and read while it runs (probe);
// bench-maintain.sh times the same pass inside a mount (mount.go).

// timePass imports n memories (a tenth of them idle scratchpads, a tenth
// cold low-importance session turns, some duplicates) and times one
// maintenance pass over them, a month later.
func timePass(work string, n int) error {
	src := filepath.Join(work, "src")
	if err := genTree(src, n); err != nil {
		return err
	}
	clock := time.Now()
	kv, err := backend.OpenBadger(filepath.Join(work, "db"), backend.Options{})
	if err != nil {
		return err
	}
	defer kv.Close()
	st, err := store.Open(kv, store.Options{Now: func() time.Time { return clock }, BlobDir: filepath.Join(work, "blobs")})
	if err != nil {
		return err
	}
	defer st.Close()
	t0 := time.Now()
	if _, err := transfer.Import(st, src, "/", nil); err != nil {
		return err
	}
	fmt.Printf("imported %d memories in %v\n", n, time.Since(t0).Round(time.Millisecond))
	clock = clock.Add(31 * 24 * time.Hour)
	quiet := probe(st, 2*time.Second, nil)
	fmt.Printf("write+read of a memory, idle store: %s\n", quiet)
	t0 = time.Now()
	rep, err := lifecycle.Maintain(st, lifecycle.Options{DryRun: true})
	if err != nil {
		return err
	}
	fmt.Printf("dry run: %d actions in %v\n", len(rep.Actions), time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	passDone := make(chan struct{})
	during := make(chan string)
	go func() { during <- probe(st, time.Hour, passDone) }()
	rep, err = lifecycle.Maintain(st, lifecycle.Options{})
	close(passDone)
	fmt.Printf("write+read of a memory during the pass: %s\n", <-during)
	if err != nil {
		return err
	}
	kinds := map[string]int{}
	for _, a := range rep.Actions {
		kinds[a.Kind]++
	}
	fmt.Printf("pass: %d actions %v, %d errors in %v\n", len(rep.Actions), kinds, len(rep.Errors), time.Since(t0).Round(time.Millisecond))
	for _, e := range rep.Errors[:min(3, len(rep.Errors))] {
		fmt.Println("  error:", e)
	}
	t0 = time.Now()
	rep, err = lifecycle.Maintain(st, lifecycle.Options{})
	if err != nil {
		return err
	}
	fmt.Printf("second pass: %d actions in %v\n", len(rep.Actions), time.Since(t0).Round(time.Millisecond))
	return nil
}

// probe writes and reads back a small memory in a loop for d (or until
// stop closes) and returns the latency percentiles of one write+read.
func probe(st *store.Store, d time.Duration, stop chan struct{}) string {
	dir, err := mkdirs(st, "/semantic/probe")
	if err != nil {
		return err.Error()
	}
	var lat []time.Duration
	end := time.Now().Add(d)
	for k := 0; time.Now().Before(end); k++ {
		if stop != nil {
			select {
			case <-stop:
				end = time.Now()
				continue
			default:
			}
		}
		t := time.Now()
		name := fmt.Sprintf("p-%d-%d.md", time.Now().UnixNano(), k)
		i, err := st.Create(dir, name, 0o644, store.Owner{})
		if err == nil {
			err = st.Open(i.Ino, false)
		}
		if err == nil {
			_, err = st.WriteAt(i.Ino, []byte(name+"\n"), 0) // unique: no duplicates
			st.Release(i.Ino)
		}
		if err == nil {
			_, err = readIno(st, i.Ino)
		}
		if err != nil {
			return err.Error()
		}
		lat = append(lat, time.Since(t))
		time.Sleep(time.Millisecond)
	}
	if len(lat) == 0 {
		return "no samples"
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	q := func(f float64) time.Duration { return lat[int(f*float64(len(lat)-1))].Round(time.Microsecond) }
	return fmt.Sprintf("%d samples, p50 %v, p95 %v, p99 %v, max %v", len(lat), q(0.5), q(0.95), q(0.99), lat[len(lat)-1].Round(time.Microsecond))
}
