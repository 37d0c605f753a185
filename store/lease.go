package store

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// Leases: a named right held by one holder at a time across every process
// that opens the store, for a bounded time (a holder that dies loses it
// when it lapses). On a shared store this is how only one host runs a
// maintenance pass at a time (lifecycle/maintain.go). The lease is one key
// ("s" + "lease/<name>") read and written in one transaction: on etcd two
// hosts taking it at once conflict, and the one that retries sees the
// other's.

type lease struct {
	Holder string `json:"holder"`
	Until  int64  `json:"until"` // unix nanoseconds
}

// TakeLease takes (or renews) the lease name for holder until ttl from
// now. It returns false and the current holder when someone else holds it.
func (s *Store) TakeLease(name, holder string, ttl time.Duration) (bool, string, error) {
	if s.opts.ReadOnly {
		return false, "", nil
	}
	k := backend.StoreKey("lease/" + name)
	var ok bool
	var cur string
	err := s.kv.Update(func(t backend.Txn) error {
		ok, cur = false, ""
		if v, err := t.Get(k); err == nil {
			var l lease
			if json.Unmarshal(v, &l) == nil && l.Holder != holder && leaseLive(v) {
				cur = l.Holder
				return nil
			}
		} else if !errors.Is(err, backend.ErrNotFound) {
			return err
		}
		v, _ := json.Marshal(lease{Holder: holder, Until: time.Now().Add(ttl).UnixNano()})
		ok = true
		return t.Set(k, v)
	})
	return ok, cur, err
}

// DropLease gives the lease up, if holder holds it.
func (s *Store) DropLease(name, holder string) error {
	if s.opts.ReadOnly {
		return nil
	}
	k := backend.StoreKey("lease/" + name)
	return s.kv.Update(func(t backend.Txn) error {
		v, err := t.Get(k)
		if errors.Is(err, backend.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		var l lease
		if json.Unmarshal(v, &l) == nil && l.Holder != holder {
			return nil
		}
		return t.Delete(k)
	})
}

// leaseLive reports whether the stored lease v has not lapsed.
func leaseLive(v []byte) bool {
	var l lease
	return json.Unmarshal(v, &l) == nil && time.Now().UnixNano() < l.Until
}
