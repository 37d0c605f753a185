package views

import (
	"log"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

// TestSnapshotYieldsToSearches: a snapshot due while searches are being
// answered waits until they stop, but not past its interval; with no
// search it is written at once.
func TestSnapshotYieldsToSearches(t *testing.T) {
	dir := t.TempDir()
	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	e := NewEngine(log.New(&lockedBuf{}, "", 0))
	snap := filepath.Join(dir, "index.snap")
	const every = 3 * time.Second
	e.SetSnapshot(snap, true, every)
	st, err := store.Open(kv, store.Options{OnChange: e.Handle})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e.Start(st)
	defer e.Stop()
	e.Ready()
	written := func() time.Time {
		fi, err := os.Stat(snap)
		if err != nil {
			return time.Time{}
		}
		return fi.ModTime()
	}
	// waitNew waits up to d for a snapshot newer than than.
	waitNew := func(than time.Time, d time.Duration) bool {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if w := written(); w.After(than) {
				return true
			}
		}
		return false
	}
	write := func(name string) {
		if err := st.WriteNew("/notes", name, []byte("the gondola booking for "+name+"\n"), ""); err != nil {
			t.Fatal(err)
		}
		e.Ready()
	}
	write("a.md")
	e.p.soon()
	if !waitNew(time.Time{}, 5*time.Second) {
		t.Fatal("no snapshot written with no search running")
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		q, _ := ParseQuery("gondola booking")
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				e.Search(q, Filter{})
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	before := written()
	write("b.md")
	e.p.soon()
	start := time.Now()
	if waitNew(before, every/3) {
		t.Fatalf("the snapshot was written %v after it was asked for, while searches ran", time.Since(start))
	}
	if !waitNew(before, 2*every) {
		t.Fatalf("the snapshot was not written %v after it was due, searches running", time.Since(start))
	}
	close(stop)
	wg.Wait()

	before = written()
	time.Sleep(snapYield + 100*time.Millisecond) // the last search is past
	write("c.md")
	e.p.soon()
	if !waitNew(before, every/2) {
		t.Fatal("the snapshot was not written soon after the searches stopped")
	}
}
