package backend

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// View, Update and the commit of an Update (the design is in etcd.go).

func (e *etcdKV) View(fn func(Txn) error) error {
	if e.closed.Load() {
		return ErrClosed
	}
	if err := e.down(); err != nil {
		return err
	}
	return fn(e.newTxn(false))
}

func (e *etcdKV) Update(fn func(Txn) error) error {
	for attempt := 0; ; attempt++ {
		if e.closed.Load() {
			return ErrClosed
		}
		if err := e.down(); err != nil {
			return err
		}
		t := e.newTxn(true)
		err := fn(t)
		if err == nil {
			if len(t.buf) == 0 {
				return nil // read only: the snapshot was consistent
			}
			if err = e.commit(t); err == nil {
				return nil
			}
		}
		if !errors.Is(err, errConflict) && !errors.Is(err, errSnapshotGone) {
			return err
		}
		if attempt >= e.o.Retries {
			return fmt.Errorf("%w (%d attempts)", ErrConflict, attempt+1)
		}
		backoff(attempt)
	}
}

// backoff sleeps a random time in [d/2, d), d doubling from 1 ms to 128 ms.
func backoff(attempt int) {
	d := time.Millisecond << min(attempt, 7)
	time.Sleep(d/2 + time.Duration(mrand.Int64N(int64(d/2))))
}

func (e *etcdKV) takeSlot() *slot {
	e.slotMu.Lock()
	defer e.slotMu.Unlock()
	if n := len(e.free); n > 0 {
		s := e.free[n-1]
		e.free = e.free[:n-1]
		return s
	}
	e.slots++
	return &slot{key: e.markers + strconv.Itoa(e.slots)} // a fresh marker: absent, rev 0
}

func (e *etcdKV) putSlot(s *slot) {
	e.slotMu.Lock()
	e.free = append(e.free, s)
	e.slotMu.Unlock()
}

// commit sends t's transaction: nil, errConflict (run fn again) or an error.
func (e *etcdKV) commit(t *etcdTxn) error {
	if t.tooBig(len(t.buf), t.bytes) {
		return ErrTxnTooBig
	}
	s := e.takeSlot()
	defer e.putSlot(s)
	if s.rev < 0 {
		ctx, cancel := e.reqCtx()
		resp, err := e.cli.Get(ctx, s.key)
		cancel()
		if err != nil {
			return e.mapErr(err)
		}
		s.rev = 0
		if len(resp.Kvs) > 0 {
			s.rev = resp.Kvs[0].ModRevision
		}
	}
	seq := strconv.FormatUint(e.seq.Add(1), 10)
	cmps := make([]clientv3.Cmp, 0, len(t.reads)+len(t.ranges)+1)
	for k, r := range t.reads {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", r))
	}
	for _, r := range t.ranges {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(r.from), "<", t.rev+1).WithRange(r.to))
	}
	cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(s.key), "=", s.rev))
	ops := make([]clientv3.Op, 0, len(t.buf)+1)
	for k, op := range t.buf {
		if op.del {
			ops = append(ops, clientv3.OpDelete(e.data+k))
		} else {
			ops = append(ops, clientv3.OpPut(e.data+k, string(op.enc)))
		}
	}
	ops = append(ops, clientv3.OpPut(s.key, seq))
	ctx, cancel := e.reqCtx()
	resp, err := e.cli.Txn(ctx).If(cmps...).Then(ops...).Else(clientv3.OpGet(s.key)).Commit()
	cancel()
	if e.loseAnswer != nil && e.loseAnswer() {
		resp, err = nil, context.DeadlineExceeded // tests: the answer lost on the way
	}
	switch {
	case err == nil && resp.Succeeded:
		s.rev = resp.Header.Revision
		return nil
	case err == nil:
		s.rev = markerRev(resp)
		return errConflict
	case definite(err) || e.closed.Load():
		s.rev = -1
		return e.mapErr(err)
	}
	return e.fence(s, seq, err)
}

// markerRev is the marker's ModRevision in the Else branch's Get.
func markerRev(resp *clientv3.TxnResponse) int64 {
	if len(resp.Responses) == 1 {
		if r := resp.Responses[0].GetResponseRange(); r != nil && len(r.Kvs) == 1 {
			return r.Kvs[0].ModRevision
		}
	}
	return 0
}

// fence settles a commit whose answer was lost (cause): nil if it applied,
// errConflict if it did not and never will, an error if etcd could not be
// reached within twice the request timeout.
func (e *etcdKV) fence(s *slot, seq string, cause error) error {
	e.fences.Add(1)
	deadline := time.Now().Add(2 * e.o.RequestTimeout)
	wait := 50 * time.Millisecond
	for {
		ctx, cancel := e.reqCtx()
		resp, err := e.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(s.key), "=", s.rev)).
			Then(clientv3.OpPut(s.key, markerValue)).
			Else(clientv3.OpGet(s.key)).Commit()
		cancel()
		if err == nil {
			if resp.Succeeded {
				s.rev = resp.Header.Revision
				return errConflict
			}
			s.rev = markerRev(resp)
			r := resp.Responses[0].GetResponseRange()
			if r != nil && len(r.Kvs) == 1 && string(r.Kvs[0].Value) == seq {
				return nil
			}
			return errConflict
		}
		if e.closed.Load() || time.Now().Add(wait).After(deadline) {
			s.rev = -1
			return fmt.Errorf("%w: %v (then %v)", ErrOutcomeUnknown, cause, e.mapErr(err))
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}
