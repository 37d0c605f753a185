package backend

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func mustKV(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func getKey(t *testing.T, kv KV, k string) (string, error) {
	t.Helper()
	v, err := getVal(t, kv, k)
	return string(v), err
}

// TestBadgerLoad: a load's keys, in several families and over keys written
// before it (a newer version of one), are read back after Flush and after
// a reopen; they are newer than everything before them (KeysSince); the
// KV takes ordinary writes again after it and a second load over the
// first; keys out of order are refused without a panic; a KV not opened
// for a bulk load takes none.
func TestBadgerLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kv, err := OpenBadger(dir, Options{Bulk: true})
	mustKV(t, err)
	mustKV(t, kv.Update(func(tx Txn) error {
		if err := tx.Set([]byte("a1"), []byte("old")); err != nil {
			return err
		}
		return tx.Set([]byte("z"), []byte("before"))
	}))
	before := kv.(Versioned).Version()
	l, err := kv.(Loader).NewLoad()
	mustKV(t, err)
	if err := kv.Update(func(tx Txn) error { return tx.Set([]byte("q"), nil) }); err == nil {
		t.Fatal("a write during a load was taken")
	}
	const n = 20000
	for i := range n { // two families interleaved, each in order
		mustKV(t, l.Set([]byte(fmt.Sprintf("a%06d", i)), bytes.Repeat([]byte{byte(i)}, 100+i%900)))
		mustKV(t, l.Set([]byte(fmt.Sprintf("b%06d", i)), []byte(fmt.Sprint(i))))
	}
	mustKV(t, l.Set([]byte("a1"), []byte("new"))) // "a1" sorts after "a0…"
	mustKV(t, l.Flush())

	check := func(kv KV, z string) {
		t.Helper()
		for _, i := range []int{0, 1, n / 2, n - 1} {
			v, err := getKey(t, kv, fmt.Sprintf("a%06d", i))
			if err != nil || !bytes.Equal([]byte(v), bytes.Repeat([]byte{byte(i)}, 100+i%900)) {
				t.Fatalf("a%06d: %d bytes, %v", i, len(v), err)
			}
			if v, err := getKey(t, kv, fmt.Sprintf("b%06d", i)); v != fmt.Sprint(i) || err != nil {
				t.Fatalf("b%06d: %q %v", i, v, err)
			}
		}
		if v, _ := getKey(t, kv, "a1"); v != "new" {
			t.Fatalf("a1 = %q: the load's version is not the newer", v)
		}
		if v, _ := getKey(t, kv, "z"); v != z {
			t.Fatalf("z = %q, want %q", v, z)
		}
	}
	check(kv, "before")
	var since int
	mustKV(t, kv.(Versioned).KeysSince([]byte("b"), before, func(_ []byte, v uint64) error {
		since++
		if v <= before {
			return fmt.Errorf("version %d not after %d", v, before)
		}
		return nil
	}))
	if since != n {
		t.Fatalf("%d keys since the load, want %d", since, n)
	}
	mustKV(t, kv.Update(func(tx Txn) error { return tx.Set([]byte("z"), []byte("after")) }))

	// A second load, over the first and a write after it.
	l, err = kv.(Loader).NewLoad()
	mustKV(t, err)
	mustKV(t, l.Set([]byte("c1"), []byte("second")))
	mustKV(t, l.Set([]byte("c2"), []byte("second")))
	if err := l.Set([]byte("c0"), nil); err == nil {
		t.Fatal("a key out of order was taken")
	}
	if err := l.Flush(); err == nil {
		t.Fatal("a spoilt load flushed")
	}
	l, err = kv.(Loader).NewLoad()
	mustKV(t, err)
	mustKV(t, l.Set([]byte("c1"), []byte("third")))
	mustKV(t, l.Flush())
	mustKV(t, kv.Close())

	kv, err = OpenBadger(dir, Options{})
	mustKV(t, err)
	defer kv.Close()
	check(kv, "after")
	if v, _ := getKey(t, kv, "c1"); v != "third" {
		t.Fatalf("c1 = %q", v)
	}
	if _, err := kv.(Loader).NewLoad(); !errors.Is(err, ErrNoLoad) {
		t.Fatalf("a KV opened without Bulk started a load: %v", err)
	}
}

// TestBadgerLoadOpenAtClose: a KV closed with a load open cancels it
// (Badger's Close would wait for the writes the load blocks); the store
// opens again with what was committed before it.
func TestBadgerLoadOpenAtClose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kv, err := OpenBadger(dir, Options{Bulk: true})
	mustKV(t, err)
	mustKV(t, kv.Update(func(tx Txn) error { return tx.Set([]byte("k"), []byte("v")) }))
	l, err := kv.(Loader).NewLoad()
	mustKV(t, err)
	mustKV(t, l.Set([]byte("n"), []byte("never flushed")))
	mustKV(t, kv.Close())
	l.Cancel() // after Close: nothing left to do
	kv, err = OpenBadger(dir, Options{})
	mustKV(t, err)
	defer kv.Close()
	if v, err := getKey(t, kv, "k"); v != "v" || err != nil {
		t.Fatalf("k = %q, %v", v, err)
	}
	if _, err := getKey(t, kv, "n"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a cancelled load's key: %v", err)
	}
	mustKV(t, kv.Update(func(tx Txn) error { return tx.Set([]byte("k"), []byte("w")) }))
}
