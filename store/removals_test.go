package store

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store/changes"
)

// TestRemovalLog: removals since a version are read from the log, across
// a clean close; a store written meanwhile by a program that keeps no log
// (here: an inode deleted behind the store's back, as an older mnemofs
// would), or not closed cleanly, falls back to the walk of every inode,
// which still finds the removals.
func TestRemovalLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	open := func() (*Store, backend.KV) {
		kv, err := backend.OpenBadger(dir, backend.Options{})
		must(t, err)
		s, err := Open(kv, Options{ScratchAge: time.Hour})
		must(t, err)
		return s, kv
	}
	closeBoth := func(s *Store, kv backend.KV) {
		must(t, s.Close())
		must(t, kv.Close())
	}
	s, kv := open()
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	inos := map[string]uint64{}
	for _, n := range []string{"a", "b", "c", "d"} {
		i, err := s.Create(w.Ino, n, 0o644, Owner{})
		must(t, err)
		inos[n] = i.Ino
	}
	v, ok := s.Settled(time.Second)
	if !ok {
		t.Fatal("not settled")
	}
	_, err = s.Remove(w.Ino, "a")
	must(t, err)
	check := func(s *Store, logged bool, removed ...string) {
		t.Helper()
		got, err := s.ChangedSince(v)
		must(t, err)
		if got.Logged != logged {
			t.Fatalf("Logged = %v, want %v", got.Logged, logged)
		}
		var want []uint64
		for _, n := range removed {
			want = append(want, inos[n])
		}
		slices.Sort(want)
		if logged && !slices.Equal(got.Removed, want) {
			t.Errorf("Removed = %v, want %v", got.Removed, want)
		}
		if !logged {
			for _, n := range removed {
				if _, found := slices.BinarySearch(got.Live, inos[n]); found {
					t.Errorf("%s (%d) is live in the walk", n, inos[n])
				}
			}
			if _, found := slices.BinarySearch(got.Live, inos["d"]); !found {
				t.Errorf("d is not live in the walk: %v", got.Live)
			}
		}
		if slices.Contains(got.Changed, inos["d"]) {
			t.Errorf("d did not change, yet it is in Changed %v", got.Changed)
		}
		if len(removed) > 0 && !slices.Contains(got.Changed, w.Ino) {
			t.Errorf("the directory of the removals is not in Changed %v", got.Changed)
		}
	}
	check(s, true, "a")
	closeBoth(s, kv)

	s, kv = open()
	check(s, true, "a")
	_, err = s.Remove(w.Ino, "b")
	must(t, err)
	check(s, true, "a", "b")
	closeBoth(s, kv)

	// Another program removes c and keeps no log.
	kv, err = backend.OpenBadger(dir, backend.Options{})
	must(t, err)
	must(t, kv.Update(func(t backend.Txn) error {
		if err := t.Delete(backend.DirentKey(w.Ino, "c")); err != nil {
			return err
		}
		return t.Delete(backend.InodeKey(inos["c"]))
	}))
	must(t, kv.Close())
	s, kv = open()
	check(s, false, "a", "b", "c")
	closeBoth(s, kv)

	// A new version to start from, and then a start after a crash (the
	// close's mark missing): the walk again.
	s, kv = open()
	v, _ = s.Settled(time.Second)
	check(s, true)
	closeBoth(s, kv)
	kv, err = backend.OpenBadger(dir, backend.Options{})
	must(t, err)
	must(t, kv.Update(func(t backend.Txn) error { return t.Delete(changes.ClosedKey()) }))
	must(t, kv.Close())
	s, kv = open()
	check(s, false)
	closeBoth(s, kv)
}
