package backend

// ReadOnly wraps kv so that nothing can be written through it: Update and
// every batch write fail with ErrReadOnly, Sync does nothing. A store
// opened read-only (a --read-only mount) uses it, so that no path of the
// store, missed or future, can change the data.
func ReadOnly(kv KV) KV { return readOnly{kv} }

type readOnly struct{ KV }

func (r readOnly) Update(fn func(Txn) error) error {
	// The function still runs, in a snapshot, so that a caller that only
	// reads in an update works; its first write fails.
	return r.KV.View(func(t Txn) error { return fn(roTxn{t}) })
}

func (r readOnly) NewBatch() Batch { return roBatch{} }
func (r readOnly) Sync() error     { return nil }

type roTxn struct{ Txn }

func (roTxn) Set(key, val []byte) error { return ErrReadOnly }
func (roTxn) Delete(key []byte) error   { return ErrReadOnly }

type roBatch struct{}

func (roBatch) Set(key, val []byte) error { return ErrReadOnly }
func (roBatch) Delete(key []byte) error   { return ErrReadOnly }
func (roBatch) Flush() error              { return nil }
func (roBatch) Cancel()                   {}
