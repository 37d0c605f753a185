package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/mnemofs/mnemofs/backend"
)

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func batchRecord(b backend.Batch, ino uint64, r *Record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return b.Set(backend.MetaKey(ino), v)
}
