package backend

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Conflicts between clients (as between hosts) and commits whose answer
// was lost.

// TestEtcdConcurrentCounter: 8 writers on 4 clients increment one counter
// 50 times each; no increment is lost.
func TestEtcdConcurrentCounter(t *testing.T) {
	eps := sharedEtcd(t)
	prefix := testPrefix(t)
	kvs := make([]KV, 4)
	for i := range kvs {
		kvs[i] = openEtcdKV(t, eps, prefix, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(kv KV) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := kv.Update(func(tx Txn) error { return incr(tx, "n") }); err != nil {
					errs <- err
					return
				}
			}
		}(kvs[g%4])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := counter(t, kvs[0], "n"); n != 400 {
		t.Fatalf("counter = %d, want 400", n)
	}
}

// TestEtcdAppendList: two clients append to one list key at once; every
// element is there exactly once.
func TestEtcdAppendList(t *testing.T) {
	eps := sharedEtcd(t)
	prefix := testPrefix(t)
	a, b := openEtcdKV(t, eps, prefix, nil), openEtcdKV(t, eps, prefix, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, w := range []struct {
		kv   KV
		name string
	}{{a, "A"}, {b, "B"}} {
		wg.Add(1)
		go func(kv KV, name string) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				err := kv.Update(func(tx Txn) error {
					v, err := tx.Get([]byte("list"))
					if err != nil && !errors.Is(err, ErrNotFound) {
						return err
					}
					return tx.Set([]byte("list"), fmt.Appendf(v, "%s%d\n", name, i))
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}(w.kv, w.name)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	v, err := getVal(t, a, "list")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(v)), "\n") {
		seen[l]++
	}
	for _, name := range []string{"A", "B"} {
		for i := 0; i < 100; i++ {
			if n := seen[fmt.Sprintf("%s%d", name, i)]; n != 1 {
				t.Fatalf("%s%d is in the list %d times", name, i, n)
			}
		}
	}
	if len(seen) != 200 {
		t.Fatalf("%d distinct elements, want 200", len(seen))
	}
}

// TestEtcdScanConflicts: a transaction that scanned a range conflicts
// with a key created, changed or deleted in it by another client before
// its commit, and runs again on the new state.
func TestEtcdScanConflicts(t *testing.T) {
	eps := sharedEtcd(t)
	prefix := testPrefix(t)
	kv, other := openEtcdKV(t, eps, prefix, nil), openEtcdKV(t, eps, prefix, nil)
	mustUpdate(t, kv, func(tx Txn) error { tx.Set([]byte("r/1"), []byte("x")); return tx.Set([]byte("r/2"), []byte("x")) })
	for _, c := range []struct {
		name   string
		meddle func(Txn) error
		want   int
	}{
		{"create", func(tx Txn) error { return tx.Set([]byte("r/3"), []byte("x")) }, 3},
		{"change", func(tx Txn) error { return tx.Set([]byte("r/1"), []byte("y")) }, 3},
		{"delete", func(tx Txn) error { return tx.Delete([]byte("r/2")) }, 2},
	} {
		runs := 0
		err := kv.Update(func(tx Txn) error {
			runs++
			n := 0
			if err := tx.Scan([]byte("r/"), nil, true, func(k, _ []byte) bool { n++; return true }); err != nil {
				return err
			}
			if runs == 1 {
				mustUpdate(t, other, c.meddle)
			}
			return tx.Set([]byte("count"), []byte(fmt.Sprint(n)))
		})
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := getVal(t, kv, "count"); runs != 2 || string(v) != fmt.Sprint(c.want) {
			t.Fatalf("%s: ran %d times, count %s; want 2 runs and %d", c.name, runs, v, c.want)
		}
	}
	// A key outside the part of the range that was read does not conflict.
	runs := 0
	mustUpdate(t, kv, func(tx Txn) error {
		runs++
		tx.Scan([]byte("r/"), nil, true, func(k, _ []byte) bool { return false }) // reads r/1 only
		if runs == 1 {
			mustUpdate(t, other, func(tx Txn) error { return tx.Set([]byte("r/9"), []byte("x")) })
		}
		return tx.Set([]byte("first"), []byte("r/1"))
	})
	if runs != 1 {
		t.Fatalf("a write past the scanned part made %d runs", runs)
	}
}

// TestEtcdLostAnswer: a commit whose answer is lost is settled by the
// fence: applied, it counts once and the function does not run again; not
// applied (it conflicted), the function runs again.
func TestEtcdLostAnswer(t *testing.T) {
	eps := sharedEtcd(t)
	prefix := testPrefix(t)
	kv, other := openEtcdKV(t, eps, prefix, nil), openEtcdKV(t, eps, prefix, nil)
	var lose atomic.Int32
	kv.(*etcdKV).loseAnswer = func() bool { return lose.Add(-1) >= 0 }
	for i := 0; i < 3; i++ {
		lose.Store(1)
		runs := 0
		mustUpdate(t, kv, func(tx Txn) error { runs++; return incr(tx, "n") })
		if runs != 1 {
			t.Fatalf("applied, answer lost: the function ran %d times", runs)
		}
	}
	if n := counter(t, kv, "n"); n != 3 {
		t.Fatalf("counter %d after 3 commits with lost answers, want 3", n)
	}
	lose.Store(1)
	runs := 0
	mustUpdate(t, kv, func(tx Txn) error {
		runs++
		if err := incr(tx, "n"); err != nil {
			return err
		}
		if runs == 1 {
			mustUpdate(t, other, func(tx Txn) error { return incr(tx, "n") })
		}
		return nil
	})
	if n := counter(t, kv, "n"); runs != 2 || n != 5 {
		t.Fatalf("conflicted, answer lost: %d runs, counter %d; want 2 runs and 5", runs, n)
	}
}
