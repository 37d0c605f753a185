package backend

import (
	"testing"
	"time"
)

// TestBackgroundSync: committed writes are synced by the store's own
// ticker without anyone calling Sync, and only when there are some.
func TestBackgroundSync(t *testing.T) {
	kv, err := OpenBadger(t.TempDir(), Options{SyncEvery: 20 * time.Millisecond})
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
		bt := kv.NewBatch()
		bt.Set([]byte("b"), []byte("v"))
		if err := bt.Flush(); err != nil {
			t.Fatal(err)
		}
		if !b.Unsynced() {
			t.Fatal("writes not counted")
		}
		deadline := time.Now().Add(10 * time.Second)
		for b.Unsynced() {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: writes still unsynced after 10 s", round)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// TestSyncClearsAndNoBackgroundWhenOff: with the ticker off, writes stay
// unsynced until Sync.
func TestSyncClearsAndNoBackgroundWhenOff(t *testing.T) {
	kv, err := OpenBadger(t.TempDir(), Options{SyncEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	b := kv.(*badgerKV)
	if err := kv.Update(func(tx Txn) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if !b.Unsynced() {
		t.Fatal("synced with the background sync off")
	}
	if err := kv.Sync(); err != nil {
		t.Fatal(err)
	}
	if b.Unsynced() {
		t.Fatal("Sync left writes unsynced")
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
