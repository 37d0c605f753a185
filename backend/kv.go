package backend

import "bytes"

// KV is an ordered, transactional key-value store.
type KV interface {
	// View runs fn in a read-only snapshot.
	View(fn func(Txn) error) error
	// Update runs fn in a read-write transaction and commits it atomically.
	Update(fn func(Txn) error) error
	// NewBatch returns a write batch for bulk loads: many writes, committed
	// in large internal transactions, not atomic as a whole.
	NewBatch() Batch
	// Sync makes all committed writes durable.
	Sync() error
	// Size reports bytes used on disk (LSM and value log).
	Size() (lsm, vlog int64)
	// Close flushes and releases the store.
	Close() error
}

// Txn is one transaction. Values returned by Get are only valid inside the
// transaction unless copied; implementations here always return copies.
type Txn interface {
	Get(key []byte) ([]byte, error)
	Set(key, val []byte) error
	Delete(key []byte) error
	// Scan calls fn for every key with the prefix, in order, starting at
	// start (or the prefix when start is nil). fn returning false stops the
	// scan. key and val are only valid during the call.
	Scan(prefix, start []byte, keysOnly bool, fn func(key, val []byte) bool) error
}

// ScanRef is t.Scan with values, which fn must neither keep nor change
// past its call: where the engine can, they are its own bytes (Badger's
// table, mapped), not a copy of each made for the scan (a gigabyte of
// garbage for a scan of a million files' content).
func ScanRef(t Txn, prefix, start []byte, fn func(key, val []byte) bool) error {
	if r, ok := t.(interface {
		ScanRef(prefix, start []byte, fn func(key, val []byte) bool) error
	}); ok {
		return r.ScanRef(prefix, start, fn)
	}
	return t.Scan(prefix, start, false, fn)
}

// ScanRefTo is ScanRef over the keys before end (nil: to the prefix's
// end). A KV that reads a range in pages (etcd) asks for no more than
// that.
func ScanRefTo(t Txn, prefix, start, end []byte, fn func(key, val []byte) bool) error {
	if r, ok := t.(interface {
		ScanRefTo(prefix, start, end []byte, fn func(key, val []byte) bool) error
	}); ok {
		return r.ScanRefTo(prefix, start, end, fn)
	}
	return ScanRef(t, prefix, start, func(k, v []byte) bool {
		if end != nil && bytes.Compare(k, end) >= 0 {
			return false
		}
		return fn(k, v)
	})
}

// Batch collects writes for bulk loading.
type Batch interface {
	Set(key, val []byte) error
	Delete(key []byte) error
	// Flush commits everything written so far and waits for it.
	Flush() error
	Cancel()
}
