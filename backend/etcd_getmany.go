package backend

import (
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ManyGetter is a Txn that reads several keys in one request (etcd: one
// round trip for what would be one a key).
type ManyGetter interface {
	// GetMany returns the stored value of each key and whether it is
	// there, as the transaction's snapshot has them: not its own pending
	// writes.
	GetMany(keys [][]byte) (vals [][]byte, found []bool, err error)
}

// getManyOps bounds the reads of one request (etcd's --max-txn-ops).
const getManyOps = 64

func (t *etcdTxn) GetMany(keys [][]byte) ([][]byte, []bool, error) {
	out, found := make([][]byte, len(keys)), make([]bool, len(keys))
	var ops []clientv3.Op
	var at []int
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		if t.e.closed.Load() {
			return ErrClosed
		}
		if t.rev > 0 {
			for i := range ops {
				ops[i] = clientv3.OpGet(string(ops[i].KeyBytes()), clientv3.WithRev(t.rev))
			}
		}
		ctx, cancel := t.e.reqCtx()
		defer cancel()
		resp, err := t.e.cli.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return t.e.mapErr(err)
		}
		if t.rev == 0 {
			t.rev = resp.Header.Revision
		}
		if t.got == nil {
			t.got = map[string]gotValue{}
		}
		for j, r := range resp.Responses {
			k := string(ops[j].KeyBytes())
			kvs := r.GetResponseRange().Kvs
			if len(kvs) == 0 {
				t.observe(k, 0)
				t.got[k] = gotValue{}
				continue
			}
			t.observe(k, kvs[0].ModRevision)
			t.got[k] = gotValue{kvs[0].Value, true}
			out[at[j]], found[at[j]] = kvs[0].Value, true
		}
		ops, at = ops[:0], at[:0]
		return nil
	}
	for i, key := range keys {
		k := t.e.data + string(key)
		if g, ok := t.got[k]; ok {
			out[i], found[i] = g.v, g.ok
			continue
		}
		ops = append(ops, clientv3.OpGet(k))
		at = append(at, i)
		if len(ops) == getManyOps {
			if err := flush(); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, nil, err
	}
	for i, v := range out {
		if !found[i] {
			continue
		}
		p, err := t.e.open(keys[i], v)
		if err != nil {
			return nil, nil, err
		}
		out[i] = p
	}
	return out, found, nil
}
