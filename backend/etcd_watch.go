package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	mvccpb "go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// The watch (Watcher on etcd). One etcd watch on the whole prefix P/, with
// previous values, from the revision the store was opened at. Its events
// are grouped by ModRevision, so one group is one transaction; a group
// holding one of this client's commit markers (P/x/txn/<client>/) is this
// client's own commit and is not reported. Batches have no marker: their
// keys are reported to their own client too, which costs that client a
// cache refill and nothing else.
//
// The watch survives the cluster's faults: the client moves it to another
// member on its own; when it ends anyway (every member down, the leader
// lost: it is made with WithRequireLeader) it is made again from the last
// revision seen, after a short wait. When that revision has been compacted
// meanwhile, the events in between are lost: fn gets one Reset event and
// the watch goes on from the present.

// Event is a change of one key by another client (Watcher).
type Event struct {
	// Key is the KV's key; Val its new value (nil when Deleted); Prev its
	// value before the change (nil when it was created or is unknown).
	Key, Val, Prev []byte
	Deleted        bool
	// Reset: changes may have been missed; every cached value is suspect.
	// Key is nil.
	Reset bool
}

// Watcher is implemented by KVs that other processes change too (etcd).
type Watcher interface {
	// Watch calls fn, in commit order and from one goroutine, with the keys
	// each transaction of another client changed, from the moment the KV
	// was opened, until stop is called (stop waits for fn to return).
	Watch(fn func([]Event)) (stop func())
}

func (e *etcdKV) Watch(fn func([]Event)) (stop func()) {
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.watchLoop(ctx, fn)
	}()
	return func() { cancel(); <-done }
}

func (e *etcdKV) watchLoop(ctx context.Context, fn func([]Event)) {
	next := e.openRev + 1
	for ctx.Err() == nil {
		wch := e.cli.Watch(clientv3.WithRequireLeader(ctx), e.o.Prefix+"/",
			clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(next))
		for resp := range wch {
			if resp.CompactRevision != 0 {
				fn([]Event{{Reset: true}})
				next = resp.CompactRevision
				break
			}
			if resp.Err() != nil {
				break
			}
			e.deliver(resp.Events, fn)
			if n := len(resp.Events); n > 0 {
				next = resp.Events[n-1].Kv.ModRevision + 1
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// deliver hands fn the events of other clients, one transaction a call.
func (e *etcdKV) deliver(evs []*clientv3.Event, fn func([]Event)) {
	for len(evs) > 0 {
		rev := evs[0].Kv.ModRevision
		n := 1
		for n < len(evs) && evs[n].Kv.ModRevision == rev {
			n++
		}
		group := evs[:n]
		evs = evs[n:]
		var out []Event
		own := false
		for _, ev := range group {
			k := string(ev.Kv.Key)
			if strings.HasPrefix(k, e.markers) {
				own = true
				break
			}
			if !strings.HasPrefix(k, e.data) {
				continue
			}
			key := []byte(k[len(e.data):])
			out = append(out, Event{Key: key, Deleted: ev.Type == mvccpb.DELETE,
				Val: e.openOrNil(key, ev.Kv.Value, ev.Type == mvccpb.DELETE), Prev: e.prev(key, ev.PrevKv)})
		}
		if !own && len(out) > 0 {
			fn(out)
		}
		e.progress.advance(rev)
	}
}

func (e *etcdKV) prev(key []byte, kv *mvccpb.KeyValue) []byte {
	if kv == nil {
		return nil
	}
	return e.openOrNil(key, kv.Value, false)
}

// openOrNil opens a watched value; nil when deleted or when it does not
// open (the receiver then re-reads the key).
func (e *etcdKV) openOrNil(key, raw []byte, deleted bool) []byte {
	if deleted {
		return nil
	}
	v, err := e.open(key, raw)
	if err != nil {
		return nil
	}
	return v
}

// SharedValue returns the value named name kept beside the store under
// prefix in the cluster (outside the KV's keys, never encrypted: the
// encryption key's salt lives there): the one already there, or value,
// which it puts when there is none (atomically: two hosts asking at once
// get the same answer).
func SharedValue(o EtcdOptions, name string, value []byte) ([]byte, error) {
	if o.Prefix == "" || len(o.Endpoints) == 0 {
		return nil, errors.New("backend: etcd needs endpoints and a prefix")
	}
	timeout := o.RequestTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: o.Endpoints, DialTimeout: timeout, TLS: o.TLS,
		Username: o.Username, Password: o.Password, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("backend: etcd: %w", err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	k := o.Prefix + "/x/shared/" + name
	tr, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, string(value))).Else(clientv3.OpGet(k)).Commit()
	if err != nil {
		return nil, fmt.Errorf("backend: etcd: %w", err)
	}
	if tr.Succeeded {
		return value, nil
	}
	if r := tr.Responses[0].GetResponseRange(); r != nil && len(r.Kvs) == 1 {
		return r.Kvs[0].Value, nil
	}
	return nil, errors.New("backend: etcd: shared value vanished")
}
