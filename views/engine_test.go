package views

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

func TestMerge(t *testing.T) {
	ch := func(k store.ChangeKind, ino, from uint64) store.Change {
		return store.Change{Kind: k, Ino: ino, From: from}
	}
	got := merge([]store.Change{
		ch(store.Changed, 1, 10), ch(store.Changed, 2, 0), ch(store.Changed, 1, 20),
		ch(store.Moved, 3, 0), ch(store.Changed, 3, 5), ch(store.Removed, 2, 0),
	})
	want := []store.Change{ch(store.Changed, 1, 10), ch(store.Changed, 3, 0), ch(store.Removed, 2, 0)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merge = %+v, want %+v", got, want)
	}
}

func TestRebuildDropsStaleIndex(t *testing.T) {
	e, st := engineStore(t)
	for i, text := range []string{"alpha memory", "beta memory"} {
		writeFile(t, st, store.RootIno, fmt.Sprintf("n%d.md", i), text)
	}
	q, _ := ParseQuery("memory")
	if n := len(e.Search(q, Filter{})); n != 2 {
		t.Fatalf("%d results before the rebuild, want 2", n)
	}
	e.idx.Put(999, []search.Part{{Text: "memory stale"}}, 1, "ghost") // not in the store
	if n := e.idx.Len(); n != 3 {
		t.Fatalf("index holds %d documents, want 3 with the stale one", n)
	}
	e.Rebuild()
	e.Ready()
	if n := e.idx.Len(); n != 2 {
		t.Fatalf("index holds %d documents after the rebuild, want 2", n)
	}
	if n := len(e.Search(q, Filter{})); n != 2 {
		t.Fatalf("%d results after the rebuild, want 2", n)
	}
}

// TestInterruptEndsReady: a reader waiting for the first build (a search
// in the mount's first minutes at a million memories) stops waiting when
// the mount is going away, rather than holding its unmount until the
// build ends; the build then ends at Stop.
func TestInterruptEndsReady(t *testing.T) {
	// Not parallel: the hook is the package's.
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	st, err := store.Open(kv, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 3 {
		writeFile(t, st, store.RootIno, fmt.Sprintf("n%d.md", i), "a memory")
	}
	gate, building := make(chan struct{}), make(chan struct{}, 1)
	hook := func() {
		select {
		case building <- struct{}{}:
		default:
		}
		<-gate
	}
	testHookBuilding.Store(&hook)
	defer testHookBuilding.Store(nil)
	e := NewEngine(nil)
	e.Start(st)
	<-building
	ready := make(chan struct{})
	go func() { e.Ready(); close(ready) }()
	select {
	case <-ready:
		t.Fatal("Ready returned while the build was held")
	case <-time.After(200 * time.Millisecond):
	}
	e.Interrupt()
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		t.Error("Ready still waits 5 s after Interrupt")
	}
	close(gate)
	e.Stop()
}
