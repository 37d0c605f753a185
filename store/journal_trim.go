package store

import "github.com/mnemofs/mnemofs/backend"

// Journals written often (meta/mcp.log: an entry per change an agent
// makes) cannot afford AppendJournal's scan of the whole journal at every
// entry. AddJournalEntry only writes the entry; the writer trims the
// journal now and then (TrimJournal), so that it holds a little more than
// it keeps between two trims, and its readers show the last entries.

// trimBatch bounds the entries one transaction of TrimJournal removes
// (below etcd's 128 operations a transaction).
const trimBatch = 100

// AddJournalEntry adds v under key to the journal name, removing nothing.
func (s *Store) AddJournalEntry(name, key string, v []byte) error {
	return s.kv.Update(func(t backend.Txn) error {
		return t.Set(backend.StoreKey(name+"/"+key), v)
	})
}

// TrimJournal removes the oldest entries of the journal name, so that at
// most keep remain.
func (s *Store) TrimJournal(name string, keep int) error {
	prefix := backend.StoreKey(name + "/")
	for {
		var keys [][]byte
		err := s.kv.View(func(t backend.Txn) error {
			return t.Scan(prefix, nil, true, func(k, _ []byte) bool {
				keys = append(keys, append([]byte(nil), k...))
				return true
			})
		})
		if err != nil || len(keys) <= keep {
			return err
		}
		drop := keys[:min(len(keys)-keep, trimBatch)]
		err = s.kv.Update(func(t backend.Txn) error {
			for _, k := range drop {
				if err := t.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
}
