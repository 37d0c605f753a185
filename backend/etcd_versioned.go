package backend

import (
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The KV on etcd as a Versioned (versioned.go): a version is an etcd
// revision, which every commit of the cluster raises. Version asks the
// cluster for its revision; KeysSince pages through a prefix's keys
// without their values, those last written after since (WithMinModRev:
// etcd filters them on its side), all at one revision.
//
// What another client changes reaches this one through the watch, later
// than the commit: a version is settled for this client only once the
// watch has delivered every commit up to it. A store puts a key of this
// client's (P/x/txn/<client>/settle, beside its commit markers: Mark) and
// waits until the watch has handed on the event of that put (Delivered):
// the watch delivers in revision order, so every commit before it has
// been delivered then. (etcd's own progress notifications would do
// without the put, but a 3.4.23 server, Debian's, may send one with a
// revision its stream has not reached: etcd-io/etcd#15220, fixed in
// later 3.4 releases.)

// Settler is implemented by a Versioned KV that other clients change too
// (etcd): Mark writes a key of this client's and returns the version of
// that write; once Delivered(v) reports true, the Watch has delivered the
// changes of every other client's commit at or below v.
type Settler interface {
	Mark() (uint64, error)
	Delivered(v uint64, deadline time.Time) bool
}

// delivered is the watch's progress: the highest revision whose
// transaction the watch has handed on (or skipped, as one of this
// client's own), with a condition to wait on it.
type delivered struct {
	mu   sync.Mutex
	cond *sync.Cond
	rev  int64
}

func (d *delivered) advance(rev int64) {
	d.mu.Lock()
	if rev > d.rev {
		d.rev = rev
		if d.cond != nil {
			d.cond.Broadcast()
		}
	}
	d.mu.Unlock()
}

// wait waits until rev is delivered or the deadline passes.
func (d *delivered) wait(rev int64, deadline time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cond == nil {
		d.cond = sync.NewCond(&d.mu)
	}
	stop := time.AfterFunc(time.Until(deadline), func() {
		d.mu.Lock()
		d.cond.Broadcast()
		d.mu.Unlock()
	})
	defer stop.Stop()
	for d.rev < rev && time.Now().Before(deadline) {
		d.cond.Wait()
	}
	return d.rev >= rev
}

// Version is the cluster's revision; 0 when the cluster does not answer.
func (e *etcdKV) Version() uint64 {
	ctx, cancel := e.reqCtx()
	defer cancel()
	resp, err := e.cli.Get(ctx, e.meta+"version", clientv3.WithCountOnly())
	if err != nil {
		e.mapErr(err) // for its record of an outage (etcd_health.go)
		return 0
	}
	return uint64(resp.Header.Revision)
}

// KeysSince calls fn with the keys under prefix last written after since,
// in key order, with the revision of that write. The first request has
// etcd filter them (it reads the whole range to do so, and again for each
// page); when they fill more than that page, the rest of the range is
// paged through plainly and filtered here.
func (e *etcdKV) KeysSince(prefix []byte, since uint64, fn func(key []byte, version uint64) error) error {
	if e.closed.Load() {
		return ErrClosed
	}
	from := e.data + string(prefix)
	end := clientv3.GetPrefixRangeEnd(from)
	page := int64(e.o.PageSize) * 32 // keys alone are small: 8192 by default
	filter := since > 0
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(page)}
		if filter {
			opts = append(opts, clientv3.WithMinModRev(int64(since)+1))
		}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		ctx, cancel := e.reqCtx()
		resp, err := e.cli.Get(ctx, from, opts...)
		cancel()
		if err != nil {
			return e.mapErr(err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			if uint64(kv.ModRevision) <= since {
				continue
			}
			if err := fn(kv.Key[len(e.data):], uint64(kv.ModRevision)); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from, filter = string(resp.Kvs[len(resp.Kvs)-1].Key)+"\x00", false
	}
}

// Mark puts this client's settle key, beside its commit markers (deleted
// with them at Close), and returns the put's revision.
func (e *etcdKV) Mark() (uint64, error) {
	if e.closed.Load() {
		return 0, ErrClosed
	}
	ctx, cancel := e.reqCtx()
	resp, err := e.cli.Put(ctx, e.markers+"settle", "")
	cancel()
	if err != nil {
		return 0, e.mapErr(err)
	}
	return uint64(resp.Header.Revision), nil
}

// Delivered waits until the watch has delivered revision v, or deadline.
// The caller must be watching (Watch).
func (e *etcdKV) Delivered(v uint64, deadline time.Time) bool {
	return e.progress.wait(int64(v), deadline)
}
