package lifecycle

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/testetcd"
	"github.com/mnemofs/mnemofs/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testetcd.StopShared()
	os.Exit(code)
}

// teamStores opens n stores on one etcd prefix, as n hosts would.
func teamStores(t *testing.T, n int) []*store.Store {
	t.Helper()
	eps, prefix := testetcd.Shared(t), testetcd.Prefix(t)
	var out []*store.Store
	for i := 0; i < n; i++ {
		kv, err := backend.OpenEtcd(backend.EtcdOptions{Endpoints: eps, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(kv, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close(); kv.Close() })
		out = append(out, st)
	}
	return out
}

// TestOnePassAtATime: on a shared store a pass skips while another host
// holds the maintenance lease, and runs (logging this host) once it is
// given up; of many hosts taking it at once exactly one gets it.
func TestOnePassAtATime(t *testing.T) {
	t.Parallel()
	sts := teamStores(t, 2)
	a, b := sts[0], sts[1]
	if !a.Shared() {
		t.Fatal("a store on etcd does not say it is shared")
	}
	ok, _, err := a.TakeLease("maintenance", "host-a/1", time.Minute)
	if err != nil || !ok {
		t.Fatalf("take: %v %v", ok, err)
	}
	r, err := Maintain(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Skipped != "host-a/1" {
		t.Fatalf("B's pass while A holds the lease: skipped %q, want host-a/1", r.Skipped)
	}
	if err := a.DropLease("maintenance", "host-a/1"); err != nil {
		t.Fatal(err)
	}
	if r, err = Maintain(b, Options{}); err != nil || r.Skipped != "" {
		t.Fatalf("B's pass after A gave up: %+v %v", r, err)
	}
	log, err := Log(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), hostID()) {
		t.Errorf("the pass log does not say which host ran it (%s):\n%s", hostID(), log)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, _, err := sts[i%2].TakeLease("race", "h"+string(rune('0'+i)), time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d of 8 hosts took the lease at once, want 1", won)
	}
}
