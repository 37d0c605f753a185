package store

import (
	"errors"

	"github.com/mnemofs/mnemofs/backend"
)

// Vectors: the embeddings of memories (views/embed.go computes them), kept
// beside them (key family e, backend/keys.go) with the model that made
// them (setting "embed/model"). The store keeps the bytes; their format is
// the caller's. A memory's vector goes with it when it is purged.

const embedModelSetting = "embed/model"

// EmbedModel names the model the stored vectors were made with (nil: none).
func (s *Store) EmbedModel() ([]byte, error) {
	var v []byte
	err := s.kv.View(func(t backend.Txn) error {
		var err error
		v, err = t.Get(backend.StoreKey(embedModelSetting))
		return err
	})
	if errors.Is(err, backend.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// ResetVectors drops every stored vector and records that model makes
// them from now on.
func (s *Store) ResetVectors(model []byte) error {
	if err := backend.DeletePrefix(s.kv, backend.VectorPrefix()); err != nil {
		return err
	}
	return s.kv.Update(func(t backend.Txn) error { return t.Set(backend.StoreKey(embedModelSetting), model) })
}

// ScanVectors calls fn with every stored vector, and whether its memory
// still exists (a vector an older version left behind does not); fn
// returning false stops. val is only valid during the call.
func (s *Store) ScanVectors(fn func(ino uint64, val []byte, live bool) bool) error {
	return s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.VectorPrefix(), nil, false, func(k, v []byte) bool {
			ino := backend.KeyIno(k)
			_, err := t.Get(backend.InodeKey(ino))
			return fn(ino, v, !errors.Is(err, backend.ErrNotFound))
		})
	})
}

// PutVector stores the vector of ino.
func (s *Store) PutVector(ino uint64, val []byte) error {
	return s.kv.Update(func(t backend.Txn) error { return t.Set(backend.VectorKey(ino), val) })
}

// DeleteVectors drops the vectors of inos.
func (s *Store) DeleteVectors(inos ...uint64) error {
	keys := make([][]byte, len(inos))
	for k, ino := range inos {
		keys[k] = backend.VectorKey(ino)
	}
	return backend.DeleteKeys(s.kv, keys)
}
