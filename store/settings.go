package store

import (
	"errors"

	"github.com/mnemofs/mnemofs/backend"
)

// Store-wide settings (key family s, backend/keys.go), such as "policy",
// the bytes of meta/policy.yaml. The store keeps them; their meaning is
// the caller's (package policy).

// settingPrefix begins the key of every setting after StoreKey's "s".
const settingPrefix = "setting/"

// Setting returns the value of a setting, nil if it was never set.
func (s *Store) Setting(name string) ([]byte, error) {
	var v []byte
	err := s.kv.View(func(t backend.Txn) error {
		var err error
		v, err = t.Get(backend.StoreKey(settingPrefix + name))
		return err
	})
	if errors.Is(err, backend.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// PutSetting sets a setting.
func (s *Store) PutSetting(name string, val []byte) error {
	if err := s.space.need(len(val)); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.unlock()
	err := s.kv.Update(func(t backend.Txn) error {
		return t.Set(backend.StoreKey(settingPrefix+name), append([]byte{}, val...))
	})
	if name == policySetting {
		s.dropPolicy() // parsed again when next needed
	}
	return err
}
