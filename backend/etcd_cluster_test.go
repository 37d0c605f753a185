package backend

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Faults: a 3-member cluster that loses its leader mid-workload, and a
// cluster that goes away entirely and comes back.

// TestEtcdLeaderLoss: four writers on two clients (two hosts) commit
// transactions (a new key and a shared counter each) while the leader is
// killed. Every acknowledged write is there afterwards, the counter equals
// the keys (each transaction applied whole, none twice), no writer saw an
// error, and writes go on after the pause.
func TestEtcdLeaderLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member cluster")
	}
	c := startCluster(t, 3)
	prefix := testPrefix(t)
	hosts := []KV{
		openEtcdKV(t, c.Endpoints(), prefix, nil),
		openEtcdKV(t, c.Endpoints(), prefix, nil),
	}
	var (
		stop      atomic.Bool
		killedAt  atomic.Int64 // unix nanos
		wg        sync.WaitGroup
		mu        sync.Mutex
		acked     []string
		afterKill atomic.Int64
		errs      []error
		maxPause  atomic.Int64
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int, kv KV) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k := fmt.Sprintf("w/%d/%05d", w, i)
				start := time.Now()
				err := kv.Update(func(tx Txn) error {
					if err := tx.Set([]byte(k), []byte("v")); err != nil {
						return err
					}
					return incr(tx, "n")
				})
				if d := int64(time.Since(start)); d > maxPause.Load() {
					maxPause.Store(d)
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", k, err))
				} else {
					acked = append(acked, k)
				}
				mu.Unlock()
				if err == nil && killedAt.Load() != 0 && start.UnixNano() > killedAt.Load() {
					afterKill.Add(1)
				}
			}
		}(w, hosts[w%2])
	}
	time.Sleep(time.Second)
	leader := c.Leader()
	if leader < 0 {
		t.Fatal("no leader")
	}
	killedAt.Store(time.Now().UnixNano())
	c.Kill(leader)
	t.Logf("killed the leader, member %d", leader)
	deadline := time.Now().Add(20 * time.Second)
	for afterKill.Load() < 50 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if afterKill.Load() < 50 {
		t.Fatalf("only %d writes after the leader was killed", afterKill.Load())
	}
	for _, err := range errs {
		t.Errorf("a writer saw an error: %v", err)
	}
	keys := map[string]bool{}
	for _, p := range scanAll(t, hosts[1], []byte("w/"), nil, true, 0) {
		keys[p.k] = true
	}
	for _, k := range acked {
		if !keys[k] {
			t.Errorf("acknowledged write %s is lost", k)
		}
	}
	if n := counter(t, hosts[0], "n"); n != uint64(len(keys)) {
		t.Errorf("counter %d, keys %d: a transaction applied in part or twice", n, len(keys))
	}
	t.Logf("%d writes acknowledged (%d after the kill), %d errors, longest Update %v, %d answers lost and fenced",
		len(acked), afterKill.Load(), len(errs), time.Duration(maxPause.Load()),
		hosts[0].(*etcdKV).fences.Load()+hosts[1].(*etcdKV).fences.Load())
	// The killed member comes back and catches up.
	if err := c.Start(leader); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(leader, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	solo := openEtcdKV(t, c.Endpoints()[leader:leader+1], prefix, nil)
	if n := counter(t, solo, "n"); n != uint64(len(keys)) {
		t.Errorf("the restarted member reads counter %d, want %d", n, len(keys))
	}
}

// TestEtcdOutage: with every member down, reads and writes fail within the
// bounded wait (not a hang); when etcd is back, the KV works again by
// itself and nothing acknowledged before is lost.
func TestEtcdOutage(t *testing.T) {
	c := startCluster(t, 1)
	const timeout = time.Second
	kv := openEtcdKV(t, c.Endpoints(), testPrefix(t), func(o *EtcdOptions) { o.RequestTimeout = timeout })
	for i := 0; i < 10; i++ {
		mustUpdate(t, kv, func(tx Txn) error { return incr(tx, "n") })
	}
	c.Kill(0)
	// A read: one request timeout. A write whose reads fail: the same; a
	// write whose commit is lost: the commit and the fences (3 timeouts).
	for _, op := range []struct {
		name  string
		run   func() error
		bound time.Duration
	}{
		{"View", func() error { _, err := getVal(t, kv, "n"); return err }, 2 * timeout},
		{"Update", func() error { return kv.Update(func(tx Txn) error { return incr(tx, "n") }) }, 2 * timeout},
		{"blind Update", func() error { return kv.Update(func(tx Txn) error { return tx.Set([]byte("b"), nil) }) }, 4 * timeout},
		{"Batch", func() error { b := kv.NewBatch(); b.Set([]byte("b"), nil); return b.Flush() }, 5 * timeout},
	} {
		start := time.Now()
		err := op.run()
		d := time.Since(start)
		if err == nil || errors.Is(err, ErrNotFound) {
			t.Fatalf("%s with etcd down: %v", op.name, err)
		}
		if d > op.bound {
			t.Fatalf("%s with etcd down took %v, bound %v", op.name, d, op.bound)
		}
		t.Logf("%s with etcd down: error after %v: %v", op.name, d.Round(time.Millisecond), err)
	}
	if err := c.Start(0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var err error
	for time.Since(start) < 30*time.Second {
		if err = kv.Update(func(tx Txn) error { return incr(tx, "n") }); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("no recovery within 30s of etcd's return: %v", err)
	}
	t.Logf("recovered %v after etcd's restart", time.Since(start).Round(time.Millisecond))
	if n := counter(t, kv, "n"); n != 11 {
		t.Fatalf("counter %d after the outage, want 11 (10 before it, 1 after)", n)
	}
}
