package backend

import (
	"fmt"
	"testing"
)

// TestUnsyncedCounts: committed writes (transactions and batches) leave
// the store unsynced until Sync.
func TestUnsyncedCounts(t *testing.T) {
	kv, err := OpenBadger(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	b := kv.(*badgerKV)
	if b.Unsynced() {
		t.Fatal("a fresh store has unsynced writes")
	}
	for round := 0; round < 2; round++ {
		if err := kv.Update(func(tx Txn) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
			t.Fatal(err)
		}
		if !b.Unsynced() {
			t.Fatal("a transaction not counted")
		}
		if err := kv.Sync(); err != nil {
			t.Fatal(err)
		}
		if b.Unsynced() {
			t.Fatal("Sync left writes unsynced")
		}
		bt := kv.NewBatch()
		bt.Set([]byte("b"), []byte("v"))
		if err := bt.Flush(); err != nil {
			t.Fatal(err)
		}
		if !b.Unsynced() {
			t.Fatal("a batch not counted")
		}
		if err := kv.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSyncAfterClose: a Sync that comes after Close (a store's clock
// racing its shutdown) gets an error, not a panic.
func TestSyncAfterClose(t *testing.T) {
	kv, err := OpenBadger(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Update(func(tx Txn) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := kv.Sync(); err != ErrClosed {
		t.Fatalf("Sync after Close: %v, want ErrClosed", err)
	}
}

// TestBulkThenNormal: a store written with the bulk tuning (larger
// memtables and levels) opens again without it, every key there.
func TestBulkThenNormal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kv, err := OpenBadger(dir, Options{Bulk: true})
	if err != nil {
		t.Fatal(err)
	}
	val := make([]byte, 1000)
	const n = 20000 // ~20 MB: more than a normal memtable holds
	for i := 0; i < n; i += 1000 {
		b := kv.NewBatch()
		for j := i; j < i+1000; j++ {
			v := make([]byte, len(val)) // a batch keeps what it is given
			v[0], v[1] = byte(j), byte(j>>8)
			if err := b.Set([]byte(fmt.Sprintf("k%06d", j)), v); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	kv, err = OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	for j := 0; j < n; j += 7 {
		err := kv.View(func(tx Txn) error {
			v, err := tx.Get([]byte(fmt.Sprintf("k%06d", j)))
			if err == nil && (len(v) != len(val) || v[0] != byte(j) || v[1] != byte(j>>8)) {
				err = fmt.Errorf("value of k%06d is wrong", j)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
