package backend

import "testing"

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
