package backend

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The etcd KV's own behaviour: etcd's limits, batches, pagination,
// encryption at rest (conflicts: etcd_conflict_test.go; faults:
// etcd_cluster_test.go).

func incr(tx Txn, key string) error {
	var n uint64
	v, err := tx.Get([]byte(key))
	if err == nil {
		n = binary.BigEndian.Uint64(v)
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	return tx.Set([]byte(key), binary.BigEndian.AppendUint64(nil, n+1))
}

func counter(t *testing.T, kv KV, key string) uint64 {
	t.Helper()
	v, err := getVal(t, kv, key)
	if err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.Uint64(v)
}

// TestEtcdTxnTooBig: past 128 operations (the marker's included), 128
// compares, or the request size, the transaction gives ErrTxnTooBig, and
// etcd's own limits are what the KV assumes.
func TestEtcdTxnTooBig(t *testing.T) {
	eps := sharedEtcd(t)
	prefix := testPrefix(t)
	kv := openEtcdKV(t, eps, prefix, nil)
	sets := func(n, size int) func(Txn) error {
		return func(tx Txn) error {
			for i := 0; i < n; i++ {
				if err := tx.Set([]byte(fmt.Sprintf("t%04d", i)), make([]byte, size)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err := kv.Update(sets(127, 10)); err != nil {
		t.Fatalf("127 writes (128 with the marker): %v", err)
	}
	if err := kv.Update(sets(128, 10)); !errors.Is(err, ErrTxnTooBig) {
		t.Fatalf("128 writes: %v, want ErrTxnTooBig", err)
	}
	if err := kv.Update(sets(44, 32<<10)); err != nil {
		t.Fatalf("44 chunks of 32 KiB (1.4 MiB): %v", err)
	}
	if err := kv.Update(sets(47, 32<<10)); !errors.Is(err, ErrTxnTooBig) {
		t.Fatalf("47 chunks of 32 KiB (1.5 MiB): %v, want ErrTxnTooBig", err)
	}
	err := kv.Update(func(tx Txn) error {
		for i := 0; i < 128; i++ {
			tx.Get([]byte(fmt.Sprintf("t%04d", i)))
		}
		return tx.Set([]byte("after-reads"), nil)
	})
	if !errors.Is(err, ErrTxnTooBig) {
		t.Fatalf("128 reads and a write: %v, want ErrTxnTooBig", err)
	}
	// The server's limit is real: told that it may send 200, the KV gets
	// etcd's refusal, mapped.
	loose := openEtcdKV(t, eps, prefix, func(o *EtcdOptions) { o.MaxTxnOps = 200 })
	if err := loose.Update(sets(150, 10)); !errors.Is(err, ErrTxnTooBig) {
		t.Fatalf("150 writes sent to etcd: %v, want ErrTxnTooBig from the server", err)
	}
	if err := kv.NewBatch().Set([]byte("huge"), make([]byte, 2<<20)); !errors.Is(err, ErrTxnTooBig) {
		t.Fatalf("a 2 MiB value in a batch: %v, want ErrTxnTooBig", err)
	}
}

// TestEtcdBigBatch: a batch far past one transaction's limits (8 MiB in
// 1000 keys, then 3000 deletes and sets of small keys) lands whole.
func TestEtcdBigBatch(t *testing.T) {
	kv := openEtcdKV(t, sharedEtcd(t), testPrefix(t), nil)
	b := kv.NewBatch()
	val := bytes.Repeat([]byte("c"), 8<<10)
	for i := 0; i < 1000; i++ {
		if err := b.Set([]byte(fmt.Sprintf("c%05d", i)), val); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 1500; i++ {
		b.Delete([]byte(fmt.Sprintf("c%05d", i))) // 500 of them were never there
		b.Set([]byte(fmt.Sprintf("d%05d", i)), []byte("small"))
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(scanAll(t, kv, []byte("c"), nil, true, 0)); n != 0 {
		t.Fatalf("%d c keys left", n)
	}
	if n := len(scanAll(t, kv, []byte("d"), nil, false, 0)); n != 1500 {
		t.Fatalf("%d d keys, want 1500", n)
	}
}

// TestEtcdScanPagination: 5,000 keys scanned 100 to a request, in order,
// in a View and in an Update (which may read them but not commit on them
// all: too many compares).
func TestEtcdScanPagination(t *testing.T) {
	kv := openEtcdKV(t, sharedEtcd(t), testPrefix(t), func(o *EtcdOptions) { o.PageSize = 100 })
	b := kv.NewBatch()
	for i := 0; i < 5000; i++ {
		b.Set([]byte(fmt.Sprintf("s%05d", i)), []byte(fmt.Sprint(i)))
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, keysOnly := range []bool{false, true} {
		got := scanAll(t, kv, []byte("s"), nil, keysOnly, 0)
		if len(got) != 5000 {
			t.Fatalf("keysOnly=%v: %d keys, want 5000", keysOnly, len(got))
		}
		for i, p := range got {
			if p.k != fmt.Sprintf("s%05d", i) || (!keysOnly && p.v != fmt.Sprint(i)) {
				t.Fatalf("keysOnly=%v: #%d is %q=%q", keysOnly, i, p.k, p.v)
			}
		}
	}
	n := 0
	err := kv.Update(func(tx Txn) error {
		tx.Set([]byte("s02500x"), []byte("new")) // merged in its place
		return tx.Scan([]byte("s"), nil, true, func(k, _ []byte) bool { n++; return true })
	})
	if n != 5001 || !errors.Is(err, ErrTxnTooBig) {
		t.Fatalf("an Update scanning 5,000 keys: saw %d, returned %v; want 5001 and ErrTxnTooBig", n, err)
	}
	var last string
	mustUpdate(t, kv, func(tx Txn) error {
		n = 0
		return tx.Scan([]byte("s"), []byte("s04990"), false, func(k, _ []byte) bool { n++; last = string(k); return true })
	})
	if n != 10 || last != "s04999" {
		t.Fatalf("a read-only Update's scan: %d keys, last %q", n, last)
	}
}

// TestEtcdEncryption: with a key, etcd holds no plaintext; a wrong key, no
// key, and a key for a plain store are refused.
func TestEtcdEncryption(t *testing.T) {
	eps := sharedEtcd(t)
	prefix := testPrefix(t)
	key := bytes.Repeat([]byte{7}, 32)
	secret := "the agent's secret memory: launch code 0000"
	kv := openEtcdKV(t, eps, prefix, func(o *EtcdOptions) { o.EncryptionKey = key })
	mustUpdate(t, kv, func(tx Txn) error { return tx.Set([]byte("m1"), []byte(secret)) })
	b := kv.NewBatch()
	b.Set([]byte("m2"), []byte(secret))
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"m1", "m2"} {
		if v, err := getVal(t, kv, k); err != nil || string(v) != secret {
			t.Fatalf("%s = %q, %v", k, v, err)
		}
	}
	if got := scanAll(t, kv, []byte("m"), nil, false, 0); len(got) != 2 || got[1].v != secret {
		t.Fatalf("scan of sealed values: %v", got)
	}
	cli := rawClient(t, eps)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, prefix+"/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, p := range resp.Kvs {
		if bytes.Contains(p.Value, []byte("secret")) || bytes.Contains(p.Value, []byte(secret[:10])) {
			t.Fatalf("etcd holds plaintext under %q: %q", p.Key, p.Value)
		}
		if k := string(p.Key); k == prefix+"/k/m1" || k == prefix+"/k/m2" {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("found %d of the 2 sealed values in etcd", found)
	}
	// A value moved to another key does not open there.
	if _, err := cli.Put(ctx, prefix+"/k/m3", string(resp.Kvs[0].Value)); err != nil {
		t.Fatal(err)
	}
	if _, err := getVal(t, kv, "m3"); !errors.Is(err, ErrBadKey) {
		t.Fatalf("a value moved to another key: %v, want ErrBadKey", err)
	}
	for name, o := range map[string]EtcdOptions{
		"wrong key": {Endpoints: eps, Prefix: prefix, EncryptionKey: bytes.Repeat([]byte{8}, 32)},
		"no key":    {Endpoints: eps, Prefix: prefix},
		"short key": {Endpoints: eps, Prefix: prefix, EncryptionKey: []byte("short")},
	} {
		if kv, err := OpenEtcd(o); !errors.Is(err, ErrBadKey) {
			if err == nil {
				kv.Close()
			}
			t.Fatalf("%s: %v, want ErrBadKey", name, err)
		}
	}
	plain := testPrefix(t)
	pkv := openEtcdKV(t, eps, plain, nil)
	mustUpdate(t, pkv, func(tx Txn) error { return tx.Set([]byte("k"), []byte("plain")) })
	if _, err := OpenEtcd(EtcdOptions{Endpoints: eps, Prefix: plain, EncryptionKey: key}); !errors.Is(err, ErrBadKey) {
		t.Fatalf("a key for a plain store: %v, want ErrBadKey", err)
	}
}

// TestEtcdSizeSyncClose: Size reports etcd's database, Sync is a no-op
// that fails after Close, Close removes the commit markers.
func TestEtcdSizeSyncClose(t *testing.T) {
	eps := sharedEtcd(t)
	prefix := testPrefix(t)
	kv, err := OpenEtcd(EtcdOptions{Endpoints: eps, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, kv, func(tx Txn) error { return tx.Set([]byte("k"), make([]byte, 1000)) })
	if lsm, _ := kv.Size(); lsm <= 0 {
		t.Fatalf("Size: lsm = %d", lsm)
	}
	if err := kv.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := kv.Sync(); err != ErrClosed {
		t.Fatalf("Sync after Close: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := rawClient(t, eps).Get(ctx, prefix+"/x/txn/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("commit markers after Close: %d, %v", len(resp.Kvs), err)
	}
}

// TestEtcdGetMany: one request reads several keys at the transaction's
// snapshot, not its pending writes, and they join its read set: a change
// by another client before the commit makes the body run again.
func TestEtcdGetMany(t *testing.T) {
	t.Parallel()
	kv := openEtcdKV(t, sharedEtcd(t), testPrefix(t), nil)
	if err := kv.Update(func(tx Txn) error {
		if err := tx.Set([]byte("a"), []byte("1")); err != nil {
			return err
		}
		return tx.Set([]byte("e"), nil)
	}); err != nil {
		t.Fatal(err)
	}
	runs := 0
	err := kv.Update(func(tx Txn) error {
		runs++
		if _, err := tx.Get([]byte("a")); err != nil { // the snapshot's revision
			return err
		}
		if err := tx.Set([]byte("a"), []byte("pending")); err != nil {
			return err
		}
		vals, found, err := tx.(ManyGetter).GetMany([][]byte{[]byte("a"), []byte("missing"), []byte("e")})
		if err != nil {
			return err
		}
		want := map[int]string{1: "", 2: "x"}[runs]
		if string(vals[0]) != "1" || !found[0] || found[1] || !found[2] || string(vals[2]) != want {
			t.Errorf("run %d: GetMany: %q %v", runs, vals, found)
		}
		if runs == 1 { // another client changes a key read: a conflict
			return kv.Update(func(o Txn) error { return o.Set([]byte("e"), []byte("x")) })
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs < 2 {
		t.Fatalf("the body ran %d times: the keys GetMany read are not in the read set", runs)
	}
}
