package changes

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRemovalLogPruned: past its bound the log loses its older half, and
// a version before what is left is answered by the walk.
func TestRemovalLogPruned(t *testing.T) {
	old := removalLogMax
	removalLogMax = 8
	defer func() { removalLogMax = old }()
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	must(t, err)
	defer kv.Close()
	l := New(kv, Options{Settings: backend.StoreKey("setting/")})
	var inos []uint64
	must(t, kv.Update(func(t backend.Txn) error {
		for n := range 12 {
			ino := uint64(100 + n)
			inos = append(inos, ino)
			if err := t.Set(backend.InodeKey(ino), binary.BigEndian.AppendUint64(nil, ino)); err != nil {
				return err
			}
		}
		return nil
	}))
	must(t, l.OpenRemovals())
	vkv, ok := l.versioned()
	if !ok {
		t.Fatal("Badger does not number its commits")
	}
	var versions []uint64
	for _, ino := range inos {
		versions = append(versions, vkv.Version())
		must(t, kv.Update(func(t backend.Txn) error { return l.DeleteInode(t, ino) }))
	}
	must(t, l.PruneRemovals())
	count := 0
	must(t, vkv.KeysSince([]byte{backend.PrefixRemoved}, 0, func([]byte, uint64) error { count++; return nil }))
	if count != 4 {
		t.Errorf("%d entries left in the log, want 4", count)
	}
	got, err := l.ChangedSince(versions[0])
	must(t, err)
	if got.Logged {
		t.Error("a version before the pruned part is answered from the log")
	}
	if len(got.Live) != 0 {
		t.Errorf("live after every removal: %v", got.Live)
	}
	got, err = l.ChangedSince(versions[9])
	must(t, err)
	if !got.Logged || !slices.Equal(got.Removed, inos[9:]) {
		t.Errorf("from the part kept: logged %v, removed %v, want %v", got.Logged, got.Removed, inos[9:])
	}
}
