package backend

import (
	badger "github.com/dgraph-io/badger/v4"
)

// Versioned is implemented by engines that number their commits: every
// committed write gets a version above every earlier one, and the version
// of a key's last write can be read back. Derived data kept outside the
// KV (the views' persisted index, views/snapshot.go) records the version
// it was built at and later asks only for what changed since.
//
// Badger implements it (its commit timestamps), and etcd (its revisions,
// etcd_versioned.go), which is also a Settler: other hosts' commits reach
// a host through its watch, later than they are numbered.
type Versioned interface {
	// Version is the version of the last committed write, 0 for an empty
	// store. Every write committed before the call has a version at or
	// below it.
	Version() uint64
	// KeysSince calls fn for every live key under prefix whose last
	// write has a version above since (0: every live key), in key order,
	// with that version. Deleted keys are not reported (their deletion
	// may be forgotten): callers find removals by what is missing.
	KeysSince(prefix []byte, since uint64, fn func(key []byte, version uint64) error) error
}

// AsVersioned returns kv as a Versioned, if its engine numbers commits.
func AsVersioned(kv KV) (Versioned, bool) {
	if r, ok := kv.(readOnly); ok {
		kv = r.KV
	}
	v, ok := kv.(Versioned)
	return v, ok
}

// Version is the read timestamp of a new transaction: every commit before
// the call is at or below it. (Badger's DB.MaxVersion reads the memtable's
// version while a commit writes it: a data race.)
func (b *badgerKV) Version() uint64 {
	t := b.db.NewTransaction(false)
	defer t.Discard()
	return t.ReadTs()
}

func (b *badgerKV) KeysSince(prefix []byte, since uint64, fn func(key []byte, version uint64) error) error {
	return mapErr(b.db.View(func(t *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.Prefix = prefix
		o.PrefetchValues = false
		// Tables whose newest write is at or below since are skipped
		// whole, so the cost follows what changed, not the store's size.
		o.SinceTs = since
		it := t.NewIterator(o)
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			if item.IsDeletedOrExpired() {
				continue
			}
			if err := fn(item.Key(), item.Version()); err != nil {
				return err
			}
		}
		return nil
	}))
}
