package backend

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// The KV contract, held once against every backend: Badger (in memory)
// and etcd (a real server on loopback).

func forEachKV(t *testing.T, fn func(t *testing.T, kv KV)) {
	t.Run("badger", func(t *testing.T) {
		kv, err := OpenBadger("", Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		defer kv.Close()
		fn(t, kv)
	})
	t.Run("etcd", func(t *testing.T) {
		eps := sharedEtcd(t)
		fn(t, openEtcdKV(t, eps, testPrefix(t), nil))
	})
}

func mustUpdate(t *testing.T, kv KV, fn func(Txn) error) {
	t.Helper()
	if err := kv.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func getVal(t *testing.T, kv KV, k string) ([]byte, error) {
	t.Helper()
	var v []byte
	err := kv.View(func(tx Txn) error {
		var err error
		v, err = tx.Get([]byte(k))
		return err
	})
	return v, err
}

type kvPair struct{ k, v string }

func scanAll(t *testing.T, kv KV, prefix, start []byte, keysOnly bool, limit int) []kvPair {
	t.Helper()
	var got []kvPair
	err := kv.View(func(tx Txn) error {
		return tx.Scan(prefix, start, keysOnly, func(k, v []byte) bool {
			got = append(got, kvPair{string(k), string(v)})
			return limit <= 0 || len(got) < limit
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// scanRefAll is scanAll through ScanRef (values copied in the call).
func scanRefAll(t *testing.T, kv KV, prefix, start []byte, limit int) []kvPair {
	t.Helper()
	var got []kvPair
	err := kv.View(func(tx Txn) error {
		return ScanRef(tx, prefix, start, func(k, v []byte) bool {
			got = append(got, kvPair{string(k), string(v)})
			return limit <= 0 || len(got) < limit
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestKVGetSetDelete(t *testing.T) {
	forEachKV(t, func(t *testing.T, kv KV) {
		if _, err := getVal(t, kv, "missing"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get of a missing key: %v, want ErrNotFound", err)
		}
		mustUpdate(t, kv, func(tx Txn) error { return tx.Set([]byte("k"), []byte("v1")) })
		mustUpdate(t, kv, func(tx Txn) error { return tx.Set([]byte("k"), []byte("v2")) })
		mustUpdate(t, kv, func(tx Txn) error { return tx.Set([]byte("empty"), nil) })
		if v, err := getVal(t, kv, "k"); err != nil || string(v) != "v2" {
			t.Fatalf("Get k = %q, %v; want v2", v, err)
		}
		if v, err := getVal(t, kv, "empty"); err != nil || len(v) != 0 {
			t.Fatalf("Get empty = %q, %v; want an empty value", v, err)
		}
		mustUpdate(t, kv, func(tx Txn) error { return tx.Delete([]byte("k")) })
		mustUpdate(t, kv, func(tx Txn) error { return tx.Delete([]byte("never-there")) })
		if _, err := getVal(t, kv, "k"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
		}
		if err := kv.View(func(tx Txn) error { return tx.Set([]byte("x"), []byte("y")) }); err == nil {
			t.Fatal("a write in View succeeded")
		}
		sentinel := errors.New("abort")
		err := kv.Update(func(tx Txn) error {
			tx.Set([]byte("aborted"), []byte("v"))
			return sentinel
		})
		if !errors.Is(err, sentinel) {
			t.Fatalf("Update returned %v, want the function's error", err)
		}
		if _, err := getVal(t, kv, "aborted"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a failed Update's write is visible: %v", err)
		}
	})
}

// scanKeys are binary keys under two prefixes, bytes 0x00 and 0xff among
// them, and the prefix itself as a key.
func scanKeys() map[string]string {
	r := rand.New(rand.NewPCG(1, 2))
	m := map[string]string{"a": "va", "b": "vb", "a\x00": "v0", "a\xff\xff": "vff"}
	for i := 0; i < 300; i++ {
		n := 1 + r.IntN(6)
		k := make([]byte, n)
		for j := range k {
			k[j] = byte(r.IntN(256))
		}
		p := "a"
		if i%3 == 0 {
			p = "b"
		}
		m[p+string(k)] = fmt.Sprintf("v%d", i)
	}
	return m
}

func sortedWith(m map[string]string, prefix, start string) []kvPair {
	var out []kvPair
	for k, v := range m {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix && k >= start {
			out = append(out, kvPair{k, v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].k < out[j].k })
	return out
}

func samePairs(t *testing.T, what string, got, want []kvPair, keysOnly bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d keys, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i].k != want[i].k || (!keysOnly && got[i].v != want[i].v) || (keysOnly && got[i].v != "") {
			t.Fatalf("%s: #%d is %q=%q, want %q=%q", what, i, got[i].k, got[i].v, want[i].k, want[i].v)
		}
	}
}

func TestKVScan(t *testing.T) {
	forEachKV(t, func(t *testing.T, kv KV) {
		m := scanKeys()
		b := kv.NewBatch()
		for k, v := range m {
			if err := b.Set([]byte(k), []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
		samePairs(t, "prefix a", scanAll(t, kv, []byte("a"), nil, false, 0), sortedWith(m, "a", ""), false)
		samePairs(t, "prefix b, keys only", scanAll(t, kv, []byte("b"), nil, true, 0), sortedWith(m, "b", ""), true)
		samePairs(t, "everything", scanAll(t, kv, nil, nil, false, 0), sortedWith(m, "", ""), false)
		mid := sortedWith(m, "a", "")[100].k
		samePairs(t, "from the middle", scanAll(t, kv, []byte("a"), []byte(mid), false, 0), sortedWith(m, "a", mid), false)
		samePairs(t, "start not a key", scanAll(t, kv, []byte("a"), []byte(mid+"\x00"), false, 0), sortedWith(m, "a", mid+"\x00"), false)
		samePairs(t, "stopped at 10", scanAll(t, kv, []byte("a"), nil, false, 10), sortedWith(m, "a", "")[:10], false)
		samePairs(t, "ScanRef, prefix a", scanRefAll(t, kv, []byte("a"), nil, 0), sortedWith(m, "a", ""), false)
		samePairs(t, "ScanRef from the middle", scanRefAll(t, kv, []byte("a"), []byte(mid), 0), sortedWith(m, "a", mid), false)
		samePairs(t, "ScanRef stopped at 10", scanRefAll(t, kv, []byte("a"), nil, 10), sortedWith(m, "a", "")[:10], false)
		if got := scanAll(t, kv, []byte("c"), nil, false, 0); len(got) != 0 {
			t.Fatalf("empty prefix range gave %d keys", len(got))
		}
		if got := scanAll(t, kv, []byte("a"), []byte("b"), false, 0); len(got) != 0 {
			t.Fatalf("start past the prefix gave %d keys", len(got))
		}
	})
}

func TestKVReadYourWrites(t *testing.T) {
	forEachKV(t, func(t *testing.T, kv KV) {
		mustUpdate(t, kv, func(tx Txn) error {
			for _, k := range []string{"p1", "p3", "p5", "p7"} {
				if err := tx.Set([]byte(k), []byte("old"+k)); err != nil {
					return err
				}
			}
			return nil
		})
		want := []kvPair{{"p1", "oldp1"}, {"p2", "new"}, {"p5", "newp5"}, {"p6", "new"}, {"p7", "oldp7"}, {"p8", "new"}}
		mustUpdate(t, kv, func(tx Txn) error {
			for _, w := range []kvPair{{"p2", "new"}, {"p5", "newp5"}, {"p6", "new"}, {"p8", "new"}, {"q", "out"}} {
				if err := tx.Set([]byte(w.k), []byte(w.v)); err != nil {
					return err
				}
			}
			if err := tx.Delete([]byte("p3")); err != nil {
				return err
			}
			if _, err := tx.Get([]byte("p3")); !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("Get of a key deleted in the txn: %v", err)
			}
			if v, err := tx.Get([]byte("p5")); err != nil || string(v) != "newp5" {
				return fmt.Errorf("Get of a key set in the txn: %q, %v", v, err)
			}
			var got []kvPair
			err := tx.Scan([]byte("p"), nil, false, func(k, v []byte) bool {
				got = append(got, kvPair{string(k), string(v)})
				return true
			})
			if err != nil {
				return err
			}
			samePairs(t, "scan in the txn", got, want, false)
			got = nil
			if err := ScanRef(tx, []byte("p"), nil, func(k, v []byte) bool {
				got = append(got, kvPair{string(k), string(v)})
				return true
			}); err != nil {
				return err
			}
			samePairs(t, "ScanRef in the txn", got, want, false)
			got = nil
			tx.Scan([]byte("p"), []byte("p4"), true, func(k, v []byte) bool {
				got = append(got, kvPair{string(k), string(v)})
				return len(got) < 2
			})
			samePairs(t, "keys-only scan from p4, stopped at 2", got, []kvPair{{"p5", ""}, {"p6", ""}}, true)
			return nil
		})
		samePairs(t, "after commit", scanAll(t, kv, []byte("p"), nil, false, 0), want, false)
	})
}

// TestKVViewSnapshot: a View reads one snapshot; a commit made meanwhile
// is not in it.
func TestKVViewSnapshot(t *testing.T) {
	forEachKV(t, func(t *testing.T, kv KV) {
		mustUpdate(t, kv, func(tx Txn) error { return tx.Set([]byte("s1"), []byte("before")) })
		err := kv.View(func(tx Txn) error {
			if v, err := tx.Get([]byte("s1")); err != nil || string(v) != "before" {
				return fmt.Errorf("s1 = %q, %v", v, err)
			}
			mustUpdate(t, kv, func(tx Txn) error {
				tx.Set([]byte("s1"), []byte("after"))
				return tx.Set([]byte("s2"), []byte("after"))
			})
			if v, err := tx.Get([]byte("s1")); err != nil || string(v) != "before" {
				return fmt.Errorf("s1 in the snapshot = %q, %v; want before", v, err)
			}
			if _, err := tx.Get([]byte("s2")); !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("s2, written after the snapshot, is visible: %v", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := getVal(t, kv, "s1"); string(v) != "after" {
			t.Fatalf("s1 after the View = %q", v)
		}
	})
}

func TestKVBatch(t *testing.T) {
	forEachKV(t, func(t *testing.T, kv KV) {
		val := bytes.Repeat([]byte("x"), 1000)
		b := kv.NewBatch()
		for i := 0; i < 1000; i++ {
			if err := b.Set([]byte(fmt.Sprintf("b%04d", i)), val); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 1000; i += 2 {
			if err := b.Delete([]byte(fmt.Sprintf("b%04d", i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
		got := scanAll(t, kv, []byte("b"), nil, false, 0)
		if len(got) != 500 || got[0].k != "b0001" || got[0].v != string(val) {
			t.Fatalf("after the batch: %d keys, first %q", len(got), got[0].k)
		}
		c := kv.NewBatch()
		c.Set([]byte("cancelled"), val)
		c.Cancel()
		if _, err := getVal(t, kv, "cancelled"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a cancelled batch wrote: %v", err)
		}
	})
}

// TestKVKeysSince: the keys written after a version are those KeysSince
// gives, in key order, with versions past it (a rewrite counts, a delete
// removes); since 0 gives every live key. On etcd also with pages of 64
// keys, past the first page that etcd filters.
func TestKVKeysSince(t *testing.T) {
	run := func(t *testing.T, kv KV) {
		vkv, ok := kv.(Versioned)
		if !ok {
			t.Fatal("not Versioned")
		}
		put := func(from, to, step int, tag string) {
			for i := from; i < to; i += step * 50 {
				mustUpdate(t, kv, func(tx Txn) error {
					for j := i; j < min(to, i+step*50); j += step {
						if err := tx.Set([]byte(fmt.Sprintf("v/%03d", j)), []byte(tag)); err != nil {
							return err
						}
					}
					return nil
				})
			}
		}
		put(0, 300, 1, "a")
		v1 := vkv.Version()
		want := map[string]bool{}
		put(0, 300, 3, "b") // rewrites, all along the range
		put(300, 350, 1, "c")
		mustUpdate(t, kv, func(tx Txn) error {
			for j := 0; j < 350; j += 30 {
				if err := tx.Delete([]byte(fmt.Sprintf("v/%03d", j))); err != nil {
					return err
				}
			}
			return nil
		})
		for j := 0; j < 350; j++ {
			if (j < 300 && j%3 == 0 || j >= 300) && j%30 != 0 {
				want[fmt.Sprintf("v/%03d", j)] = true
			}
		}
		v2 := vkv.Version()
		var got []string
		err := vkv.KeysSince([]byte("v/"), v1, func(k []byte, v uint64) error {
			if v <= v1 || v > v2 {
				t.Errorf("%s at version %d, not in (%d, %d]", k, v, v1, v2)
			}
			got = append(got, string(k))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(got) || len(got) != len(want) {
			t.Fatalf("KeysSince(%d): %d keys (sorted %v), want %d", v1, len(got), slices.IsSorted(got), len(want))
		}
		for _, k := range got {
			if !want[k] {
				t.Errorf("KeysSince(%d) gave %s, not written after it", v1, k)
			}
		}
		n := 0
		if err := vkv.KeysSince([]byte("v/"), 0, func([]byte, uint64) error { n++; return nil }); err != nil || n != 338 {
			t.Errorf("KeysSince(0): %d keys, %v; want 338", n, err)
		}
	}
	forEachKV(t, run)
	t.Run("etcd pages", func(t *testing.T) {
		run(t, openEtcdKV(t, sharedEtcd(t), testPrefix(t), func(o *EtcdOptions) { o.PageSize = 2 }))
	})
}

// TestKVScanRefTo: a scan with an end gives the keys from start up to
// (not including) end, the transaction's own writes merged in.
func TestKVScanRefTo(t *testing.T) {
	forEachKV(t, func(t *testing.T, kv KV) {
		mustUpdate(t, kv, func(tx Txn) error {
			for i := range 60 {
				if err := tx.Set([]byte(fmt.Sprintf("r/%02d", i)), []byte{byte(i)}); err != nil {
					return err
				}
			}
			return nil
		})
		collect := func(tx Txn, end []byte) (keys []string) {
			err := ScanRefTo(tx, []byte("r/"), []byte("r/10"), end, func(k, v []byte) bool {
				keys = append(keys, string(k))
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			return keys
		}
		check := func(what string, got []string, want ...string) {
			if !slices.Equal(got, want) {
				t.Errorf("%s: %q, want %q", what, got, want)
			}
		}
		if err := kv.View(func(tx Txn) error {
			check("to r/14", collect(tx, []byte("r/14")), "r/10", "r/11", "r/12", "r/13")
			if n := len(collect(tx, nil)); n != 50 {
				t.Errorf("to the prefix's end: %d keys, want 50", n)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		mustUpdate(t, kv, func(tx Txn) error {
			if err := tx.Delete([]byte("r/11")); err != nil {
				return err
			}
			for _, k := range []string{"r/12a", "r/14", "r/14a"} {
				if err := tx.Set([]byte(k), []byte("x")); err != nil {
					return err
				}
			}
			check("to r/14, with the transaction's writes", collect(tx, []byte("r/14")), "r/10", "r/12", "r/12a", "r/13")
			return nil
		})
	})
}
