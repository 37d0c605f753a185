package backend

import (
	"bytes"
	mvccpb "go.etcd.io/etcd/api/v3/mvccpb"
	"sort"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// One transaction on etcd (the design is in etcd.go): snapshot reads, a
// read set, buffered writes.

type etcdTxn struct {
	e     *etcdKV
	write bool  // an Update's (a View's refuses writes)
	rev   int64 // the snapshot's revision; 0 until the first read
	// reads maps the etcd key of every key read to the ModRevision seen
	// (0: absent); ranges are the scanned ranges (Update only).
	reads  map[string]int64
	ranges []keyRange
	// buf maps a key (the KV's, not etcd's) to its pending write.
	buf map[string]bufOp
	// got holds what Get read of a key (the stored value, or absent): at
	// the snapshot's revision a second Get reads the same, so it is not
	// asked again.
	got map[string]gotValue
	// bytes estimates the commit request's size.
	bytes int
}

type keyRange struct{ from, to string } // etcd keys, [from, to)

type gotValue struct {
	v  []byte // as stored (sealed)
	ok bool   // false: absent
}

type bufOp struct {
	plain, enc []byte // the value, and what goes to etcd (sealed or the same)
	del        bool
}

func (e *etcdKV) newTxn(write bool) *etcdTxn {
	t := &etcdTxn{e: e, write: write}
	if write {
		t.reads = map[string]int64{}
		t.buf = map[string]bufOp{}
		t.bytes = 2*opOverhead + cmpOverhead + 2*len(e.markers) + 32 // the marker
	}
	return t
}

// tooBig reports whether a commit of writes puts (or deletes) and bytes
// would pass etcd's limits, counting the marker's compare and put.
func (t *etcdTxn) tooBig(writes, bytes int) bool {
	return writes+1 > t.e.o.MaxTxnOps || len(t.reads)+len(t.ranges)+1 > t.e.o.MaxTxnOps ||
		bytes > t.e.o.MaxTxnBytes
}

// get reads from etcd at the snapshot, pinning it on the first read.
func (t *etcdTxn) get(key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if t.e.closed.Load() {
		return nil, ErrClosed
	}
	if t.rev > 0 {
		opts = append(opts, clientv3.WithRev(t.rev))
	}
	ctx, cancel := t.e.reqCtx()
	defer cancel()
	resp, err := t.e.cli.Get(ctx, key, opts...)
	if err != nil {
		return nil, t.e.mapErr(err)
	}
	if t.rev == 0 {
		t.rev = resp.Header.Revision
	}
	return resp, nil
}

// observe records that the etcd key k was seen at ModRevision rev.
func (t *etcdTxn) observe(k string, rev int64) {
	if !t.write {
		return
	}
	if _, ok := t.reads[k]; !ok {
		t.reads[k] = rev
		t.bytes += len(k) + cmpOverhead
	}
}

func (t *etcdTxn) Get(key []byte) ([]byte, error) {
	if len(key) == 0 {
		return nil, errEmptyKey
	}
	if op, ok := t.buf[string(key)]; ok {
		if op.del {
			return nil, ErrNotFound
		}
		return bytes.Clone(op.plain), nil
	}
	k := t.e.data + string(key)
	if g, ok := t.got[k]; ok {
		if !g.ok {
			return nil, ErrNotFound
		}
		return t.e.open(key, g.v)
	}
	resp, err := t.get(k)
	if err != nil {
		return nil, err
	}
	if t.got == nil {
		t.got = map[string]gotValue{}
	}
	if len(resp.Kvs) == 0 {
		t.observe(k, 0)
		t.got[k] = gotValue{}
		return nil, ErrNotFound
	}
	t.observe(k, resp.Kvs[0].ModRevision)
	t.got[k] = gotValue{resp.Kvs[0].Value, true}
	return t.e.open(key, resp.Kvs[0].Value)
}

func (t *etcdTxn) Set(key, val []byte) error {
	if !t.write {
		return ErrReadOnly
	}
	if len(key) == 0 {
		return errEmptyKey
	}
	return t.put(key, bufOp{plain: bytes.Clone(val), enc: t.e.seal(key, val)})
}

func (t *etcdTxn) Delete(key []byte) error {
	if !t.write {
		return ErrReadOnly
	}
	if len(key) == 0 {
		return errEmptyKey
	}
	return t.put(key, bufOp{del: true})
}

func (t *etcdTxn) put(key []byte, op bufOp) error {
	size := len(t.e.data) + len(key) + len(op.enc) + opOverhead
	n, b := len(t.buf)+1, t.bytes+size
	if old, ok := t.buf[string(key)]; ok {
		n--
		b -= len(t.e.data) + len(key) + len(old.enc) + opOverhead
	}
	if t.tooBig(n, b) {
		return ErrTxnTooBig
	}
	t.buf[string(key)] = op
	t.bytes = b
	return nil
}

// prefixEnd is the first key after every key with prefix p ("" for none).
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00" // etcd: no end
}

// Scan merges etcd's keys at the snapshot, a page at a time, with the
// transaction's pending writes, in key order.
func (t *etcdTxn) Scan(prefix, start []byte, keysOnly bool, fn func(key, val []byte) bool) error {
	return t.scan(prefix, start, nil, keysOnly, fn)
}

// ScanRefTo is Scan with values, ending before end (backend.ScanRefTo):
// the pages asked for stop there too. etcd walks its index from a page's
// first key to the range's end for every page, whatever its limit (to
// count the range: etcd-io/etcd#11057, #16510), so a scan of a few keys
// at the start of a large prefix that runs to the prefix's end costs as
// much as reading all of it.
func (t *etcdTxn) ScanRefTo(prefix, start, end []byte, fn func(key, val []byte) bool) error {
	return t.scan(prefix, start, end, false, fn)
}

func (t *etcdTxn) scan(prefix, start, end []byte, keysOnly bool, fn func(key, val []byte) bool) error {
	lo := prefix
	if bytes.Compare(start, prefix) > 0 {
		lo = start
	}
	from := t.e.data + string(lo)
	to := prefixEnd(t.e.data + string(prefix))
	if end != nil && t.e.data+string(end) < to {
		to = t.e.data + string(end)
	}
	if from >= to {
		return nil
	}
	var pend []string // pending writes in range, in order
	for k := range t.buf {
		if bytes.HasPrefix([]byte(k), prefix) && k >= string(lo) && (end == nil || k < string(end)) {
			pend = append(pend, k)
		}
	}
	sort.Strings(pend)
	// emit hands fn the pending write of pend[0]; false when fn stops.
	emit := func() bool {
		k, op := pend[0], t.buf[pend[0]]
		pend = pend[1:]
		if op.del {
			return true
		}
		var v []byte
		if !keysOnly {
			v = op.plain
		}
		return fn([]byte(k), v)
	}
	// stop records the range up to the key (KV's) where fn stopped.
	stop := func(k string) error {
		if t.write {
			t.ranges = append(t.ranges, keyRange{from, t.e.data + k + "\x00"})
			t.bytes += len(from) + len(t.e.data) + len(k) + 1 + cmpOverhead
		}
		return nil
	}
	// Pages of PageSize keys, growing (up to 32 times) while the values
	// are small: every page costs etcd a walk of its index to the
	// range's end (ScanRefTo), and a scan of small values (directory
	// entries, inodes) in pages of a few hundred keys was quadratic.
	page := int64(t.e.o.PageSize)
	if keysOnly {
		page *= 32
	}
	next := from
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(to), clientv3.WithLimit(page)}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		resp, err := t.get(next, opts...)
		if err != nil {
			return err
		}
		if size := respBytes(resp.Kvs); size < scanPageBytes/2 && page < 32*int64(t.e.o.PageSize) {
			page *= 2
		}
		for _, kv := range resp.Kvs {
			k := string(kv.Key[len(t.e.data):])
			for len(pend) > 0 && pend[0] < k {
				if kk := pend[0]; !emit() {
					return stop(kk)
				}
			}
			t.observe(string(kv.Key), kv.ModRevision)
			if len(pend) > 0 && pend[0] == k {
				if !emit() {
					return stop(k)
				}
				continue
			}
			var v []byte
			if !keysOnly {
				if v, err = t.e.open([]byte(k), kv.Value); err != nil {
					return err
				}
			}
			if !fn(kv.Key[len(t.e.data):], v) {
				return stop(k)
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		next = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	for len(pend) > 0 {
		if kk := pend[0]; !emit() {
			return stop(kk)
		}
	}
	if t.write {
		t.ranges = append(t.ranges, keyRange{from, to})
		t.bytes += len(from) + len(to) + cmpOverhead
	}
	return nil
}

// scanPageBytes is about the most a scan's page grows to hold.
const scanPageBytes = 1 << 20

// respBytes is the size of a page's keys and values.
func respBytes(kvs []*mvccpb.KeyValue) int {
	n := 0
	for _, kv := range kvs {
		n += len(kv.Key) + len(kv.Value)
	}
	return n
}
