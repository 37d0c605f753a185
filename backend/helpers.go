package backend

// Helpers over any KV.

// DeleteKeys deletes keys: in one transaction when they are few (the
// common case, cheaper than a batch), else through a batch (not atomic as
// a whole).
func DeleteKeys(kv KV, keys [][]byte) error {
	if len(keys) <= 64 {
		return kv.Update(func(t Txn) error {
			for _, k := range keys {
				if err := t.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
	}
	b := kv.NewBatch()
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			b.Cancel()
			return err
		}
	}
	return b.Flush()
}

// DeletePrefix deletes every key with the prefix p (not atomic as a whole).
func DeletePrefix(kv KV, p []byte) error {
	var keys [][]byte
	err := kv.View(func(t Txn) error {
		return t.Scan(p, nil, true, func(k, _ []byte) bool {
			keys = append(keys, append([]byte(nil), k...))
			return true
		})
	})
	if err != nil {
		return err
	}
	return DeleteKeys(kv, keys)
}
