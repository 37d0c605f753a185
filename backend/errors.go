package backend

import "errors"

// Sentinel errors returned by KV implementations. Callers compare with
// errors.Is.
var (
	// ErrNotFound is returned by Txn.Get when the key does not exist.
	ErrNotFound = errors.New("backend: key not found")
	// ErrTxnTooBig is returned by Txn.Set/Delete when a transaction grows past
	// what the engine can commit atomically; split the work or use a Batch.
	ErrTxnTooBig = errors.New("backend: transaction too big")
	// ErrLocked is returned by Open when another process holds the store.
	ErrLocked = errors.New("backend: store is locked by another process")
	// ErrBadKey is returned by Open when the encryption key is wrong or has
	// the wrong length.
	ErrBadKey = errors.New("backend: wrong or invalid encryption key")
	// ErrNoSpace is returned when the device under the store is full.
	ErrNoSpace = errors.New("backend: no space left on device")
	// ErrClosed is returned by Sync after Close.
	ErrClosed = errors.New("backend: store is closed")
	// ErrConflict is returned by Update on a shared store (etcd) when its
	// transaction conflicted with other clients' on every retry.
	ErrConflict = errors.New("backend: transaction conflicted on every retry")
	// ErrUnavailable is returned by a shared store's KV (etcd) when its
	// cluster does not answer: no member reachable within the timeout.
	ErrUnavailable = errors.New("backend: the cluster does not answer")
	// ErrOutcomeUnknown is returned by Update on etcd when the commit was
	// sent and no answer came back, nor could it be learnt in time: it may
	// or may not have applied (it is not acknowledged).
	ErrOutcomeUnknown = errors.New("backend: commit outcome unknown, not acknowledged")
	// ErrReadOnly is returned by every write through ReadOnly.
	ErrReadOnly = errors.New("backend: store is open read-only")
)
