package store

import "github.com/mnemofs/mnemofs/backend"

// Journals: short, bounded lists of entries the store keeps for its
// callers (the maintenance passes of meta/maintenance.log, package
// lifecycle), whose format is the caller's. An entry is one key,
// StoreKey(name + "/" + key), so that an append never rewrites the
// journal; entries are read in key order.

// AppendJournal adds v under key to the journal name, first dropping its
// oldest entries so that at most keep remain.
func (s *Store) AppendJournal(name, key string, v []byte, keep int) error {
	prefix := backend.StoreKey(name + "/")
	return s.kv.Update(func(t backend.Txn) error {
		var keys [][]byte
		err := t.Scan(prefix, nil, true, func(k, _ []byte) bool {
			keys = append(keys, append([]byte(nil), k...))
			return true
		})
		if err != nil {
			return err
		}
		for len(keys) > 0 && len(keys) >= keep {
			if err := t.Delete(keys[0]); err != nil {
				return err
			}
			keys = keys[1:]
		}
		return t.Set(backend.StoreKey(name+"/"+key), v)
	})
}

// Journal returns the entries of the journal name, in key order (with an
// error, those read before it).
func (s *Store) Journal(name string) ([][]byte, error) {
	var out [][]byte
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.StoreKey(name+"/"), nil, false, func(_, v []byte) bool {
			out = append(out, append([]byte(nil), v...))
			return true
		})
	})
	return out, err
}
