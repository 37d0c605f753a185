package backend

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Encryption at rest on etcd, and batches.
//
// Badger encrypts its own files (Options.EncryptionKey); etcd cannot, so
// with EtcdOptions.EncryptionKey the KV seals every value before it leaves
// the process: AES-GCM with the key, a random 96-bit nonce per value, and
// the KV key as additional data, so that a value moved to another key does
// not open. A sealed value is 0x01 | nonce (12) | ciphertext | tag (16).
// P/x/enc holds a sealed known text: Open checks the key against it (wrong
// key, or no key for an encrypted store: ErrBadKey), and writes it when a
// key opens a store that has no data yet. A key given for a store that
// holds plain values is refused (ErrBadKey).

const (
	sealVersion  = 1
	nonceLen     = 12
	keyCheckText = "mnemofs: the encryption key of this store"
	keyCheckAD   = "\x00keycheck"
)

func newAEAD(key []byte) (cipher.AEAD, error) {
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, fmt.Errorf("%w: %d bytes (want 16, 24 or 32)", ErrBadKey, len(key))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	return cipher.NewGCM(b)
}

// seal returns what etcd stores for val under key (a copy).
func (e *etcdKV) seal(key, val []byte) []byte {
	if e.aead == nil {
		return bytes.Clone(val)
	}
	out := make([]byte, 1+nonceLen, 1+nonceLen+len(val)+e.aead.Overhead())
	out[0] = sealVersion
	rand.Read(out[1:])
	return e.aead.Seal(out, out[1:1+nonceLen], val, key)
}

// open returns the value of key from what etcd stored.
func (e *etcdKV) open(key, raw []byte) ([]byte, error) {
	if e.aead == nil {
		return raw, nil
	}
	if len(raw) < 1+nonceLen+e.aead.Overhead() || raw[0] != sealVersion {
		return nil, fmt.Errorf("%w: the value of %q is not sealed", ErrBadKey, key)
	}
	v, err := e.aead.Open(nil, raw[1:1+nonceLen], raw[1+nonceLen:], key)
	if err != nil {
		return nil, fmt.Errorf("%w: the value of %q does not open", ErrBadKey, key)
	}
	return v, nil
}

// checkKey checks the key against the store's key check (see above).
func (e *etcdKV) checkKey() error {
	check := e.meta + "enc"
	ctx, cancel := e.reqCtx()
	defer cancel()
	resp, err := e.cli.Get(ctx, check)
	if err != nil {
		return e.mapErr(err)
	}
	e.openRev = resp.Header.Revision // the watch starts after it
	verify := func(raw []byte) error {
		if e.aead == nil {
			return fmt.Errorf("%w: the store is encrypted and no key was given", ErrBadKey)
		}
		if v, err := e.open([]byte(keyCheckAD), raw); err != nil || string(v) != keyCheckText {
			return fmt.Errorf("%w: the key does not open this store", ErrBadKey)
		}
		return nil
	}
	if len(resp.Kvs) > 0 {
		return verify(resp.Kvs[0].Value)
	}
	if e.aead == nil {
		return nil
	}
	plain, err := e.cli.Get(ctx, e.data, clientv3.WithPrefix(), clientv3.WithLimit(1), clientv3.WithKeysOnly())
	if err != nil {
		return e.mapErr(err)
	}
	if len(plain.Kvs) > 0 {
		return fmt.Errorf("%w: the store holds unencrypted values", ErrBadKey)
	}
	sealed := string(e.seal([]byte(keyCheckAD), []byte(keyCheckText)))
	tr, err := e.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(check), "=", 0)).
		Then(clientv3.OpPut(check, sealed)).Else(clientv3.OpGet(check)).Commit()
	if err != nil {
		return e.mapErr(err)
	}
	if !tr.Succeeded { // another host made it first
		if r := tr.Responses[0].GetResponseRange(); r != nil && len(r.Kvs) == 1 {
			return verify(r.Kvs[0].Value)
		}
	}
	return nil
}

// etcdBatch groups writes into transactions under etcd's limits.
type etcdBatch struct {
	e     *etcdKV
	buf   map[string]bufOp
	bytes int
}

func (e *etcdKV) NewBatch() Batch { return &etcdBatch{e: e, buf: map[string]bufOp{}} }

func (b *etcdBatch) Set(k, v []byte) error {
	if len(k) == 0 {
		return errEmptyKey
	}
	return b.add(k, bufOp{enc: b.e.seal(k, v)})
}

func (b *etcdBatch) Delete(k []byte) error {
	if len(k) == 0 {
		return errEmptyKey
	}
	return b.add(k, bufOp{del: true})
}

func (b *etcdBatch) add(k []byte, op bufOp) error {
	if b.e.closed.Load() {
		return ErrClosed
	}
	size := len(b.e.data) + len(k) + len(op.enc) + opOverhead
	if size+64 > b.e.o.MaxTxnBytes {
		return ErrTxnTooBig
	}
	n, nb := len(b.buf)+1, b.bytes+size
	if old, ok := b.buf[string(k)]; ok {
		n, nb = n-1, nb-(len(b.e.data)+len(k)+len(old.enc)+opOverhead)
	}
	if n > b.e.o.MaxTxnOps || nb > b.e.o.MaxTxnBytes {
		if err := b.send(); err != nil {
			return err
		}
		nb = size
	}
	b.buf[string(k)] = op
	b.bytes = nb
	return nil
}

// send commits the pending group (one key appears once in it: etcd
// refuses a transaction that writes a key twice).
func (b *etcdBatch) send() error {
	if len(b.buf) == 0 {
		return nil
	}
	ops := make([]clientv3.Op, 0, len(b.buf))
	for k, op := range b.buf {
		if op.del {
			ops = append(ops, clientv3.OpDelete(b.e.data+k))
		} else {
			ops = append(ops, clientv3.OpPut(b.e.data+k, string(op.enc)))
		}
	}
	b.buf, b.bytes = map[string]bufOp{}, 0
	return b.e.blind(ops)
}

func (b *etcdBatch) Flush() error { return b.send() }
func (b *etcdBatch) Cancel()      { b.buf, b.bytes = map[string]bufOp{}, 0 }

// blind commits puts and deletes with no compares. They are idempotent, so
// one whose answer was lost is sent again, for up to three request
// timeouts.
func (e *etcdKV) blind(ops []clientv3.Op) error {
	if err := e.down(); err != nil {
		return err
	}
	deadline := time.Now().Add(3 * e.o.RequestTimeout)
	wait := 50 * time.Millisecond
	for {
		ctx, cancel := e.reqCtx()
		_, err := e.cli.Txn(ctx).Then(ops...).Commit()
		cancel()
		if err == nil {
			return nil
		}
		if definite(err) || e.closed.Load() || time.Now().Add(wait).After(deadline) {
			return e.mapErr(err)
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}
