package store

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// slowWatch is an etcd KV whose watch hands each transaction on late (a
// host whose watch lags the cluster).
type slowWatch struct {
	backend.KV
	delay time.Duration
}

func (s slowWatch) Watch(fn func([]backend.Event)) func() {
	return s.KV.(backend.Watcher).Watch(func(evs []backend.Event) {
		time.Sleep(s.delay)
		fn(evs)
	})
}
func (s slowWatch) Version() uint64 { return s.KV.(backend.Versioned).Version() }
func (s slowWatch) KeysSince(p []byte, since uint64, fn func([]byte, uint64) error) error {
	return s.KV.(backend.Versioned).KeysSince(p, since, fn)
}
func (s slowWatch) Mark() (uint64, error) { return s.KV.(backend.Settler).Mark() }
func (s slowWatch) Delivered(v uint64, d time.Time) bool {
	return s.KV.(backend.Settler).Delivered(v, d)
}

// TestSettledShared: on a store other hosts change (etcd), a settled
// version is one whose commits, the other hosts' included, have all been
// handed to OnChange, however late the watch brings them; and what
// changed after a version is found by ChangedSince, on another host too.
func TestSettledShared(t *testing.T) {
	t.Parallel()
	eps, prefix := testetcd.Shared(t), testetcd.Prefix(t)
	inner, err := backend.OpenEtcd(backend.EtcdOptions{Endpoints: eps, Prefix: prefix})
	must(t, err)
	var mu sync.Mutex
	got := map[uint64]bool{}
	a, err := Open(slowWatch{inner, 300 * time.Millisecond}, Options{ScratchAge: -1, OnChange: func(cs []Change) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range cs {
			got[c.Ino] = true
		}
	}})
	must(t, err)
	t.Cleanup(func() { a.Close(); inner.Close() })
	if !a.Versioned() {
		t.Fatal("a store on etcd is not Versioned")
	}
	b, _ := openEtcdStore(t, eps, prefix)
	v0, ok := a.Settled(5 * time.Second)
	if !ok {
		t.Fatal("not settled")
	}
	for round := range 3 {
		ino := writeFile(t, b, RootIno, "from-b-"+string(rune('a'+round))+".md", []byte("a memory of the other host\n"))
		v, ok := a.Settled(5 * time.Second)
		if !ok {
			t.Fatal("not settled")
		}
		mu.Lock()
		seen := got[ino]
		mu.Unlock()
		if !seen {
			t.Fatalf("settled at version %d, but the other host's memory %d (committed before) has not reached OnChange", v, ino)
		}
		since, err := a.ChangedSince(v0)
		must(t, err)
		if !slices.Contains(since.Changed, ino) || since.Version < v {
			t.Errorf("ChangedSince(%d) = version %d, changed %v: want %d in it, at %d or later", v0, since.Version, since.Changed, ino, v)
		}
		if again, err := b.ChangedSince(v); err != nil || slices.Contains(again.Changed, ino) {
			t.Errorf("on the other host, ChangedSince(%d) = %v, %v: %d changed before", v, again.Changed, err, ino)
		}
	}
}

// TestChangedSinceSettings: a day's size sample (stats, a maintenance
// pass) is no change of setting, so a saved index stays usable; a new
// policy is one.
func TestChangedSinceSettings(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{})
	v, ok := s.Settled(time.Second)
	if !ok {
		t.Fatal("no version of the store")
	}
	s.SampleSize(time.Now(), 12345)
	got, err := s.ChangedSince(v)
	must(t, err)
	if got.Settings {
		t.Errorf("a size sample reads as a change of setting")
	}
	must(t, s.PutSetting(policySetting, []byte("version: 1\n")))
	if got, err = s.ChangedSince(v); err != nil || !got.Settings {
		t.Errorf("a new policy is not a change of setting: %+v, %v", got, err)
	}
}
