package store

import (
	"encoding/binary"

	"github.com/mnemofs/mnemofs/backend"
)

// fsckPacks checks packs against their members (internal/pack): every packed
// inode has its pack and its membership key, every membership key names an
// inode packed there, and no pack is left without members. Caller holds mu.
func (s *Store) fsckPacks(inodes map[uint64]*Inode, problem func(func() error, string, ...any)) error {
	packs := map[uint64]bool{}
	members := map[uint64]map[uint64]bool{}
	err := s.kv.View(func(t backend.Txn) error {
		err := t.Scan(backend.PackPrefix(), nil, true, func(k, _ []byte) bool {
			packs[backend.KeyIno(k)] = true
			return true
		})
		if err != nil {
			return err
		}
		return t.Scan(backend.AllMembersPrefix(), nil, true, func(k, _ []byte) bool {
			id := backend.KeyIno(k)
			if members[id] == nil {
				members[id] = map[uint64]bool{}
			}
			members[id][backend.MemberIno(k)] = true
			return true
		})
	})
	if err != nil {
		return err
	}
	for id, ms := range members {
		for ino := range ms {
			if i := inodes[ino]; i == nil || i.Pack != id {
				problem(func() error { return s.kvDelete(backend.MemberKey(id, ino)) },
					"pack %d lists inode %d, which is not packed there", id, ino)
				delete(ms, ino)
			}
		}
	}
	for _, i := range inodes {
		if i.Pack == 0 {
			continue
		}
		if !packs[i.Pack] {
			problem(nil, "inode %d is in pack %d, which is missing", i.Ino, i.Pack)
			continue
		}
		if !members[i.Pack][i.Ino] {
			id, ino := i.Pack, i.Ino
			problem(func() error {
				return s.kv.Update(func(t backend.Txn) error { return t.Set(backend.MemberKey(id, ino), nil) })
			},
				"inode %d is in pack %d without its membership key", ino, id)
			if members[id] == nil {
				members[id] = map[uint64]bool{}
			}
			members[id][ino] = true
		}
	}
	for id := range packs {
		if len(members[id]) == 0 {
			problem(func() error { s.packs.Remove(id); return s.kvDelete(backend.PackKey(id)) }, "pack %d has no members", id)
		}
	}
	if v, err := s.storeValue("nextpack"); err == nil && len(v) == 8 {
		next := binary.BigEndian.Uint64(v)
		for id := range packs {
			if id >= next {
				problem(nil, "pack %d is not below the pack counter %d", id, next)
			}
		}
	}
	return nil
}

func (s *Store) storeValue(name string) ([]byte, error) {
	var v []byte
	err := s.kv.View(func(t backend.Txn) error {
		b, err := t.Get(backend.StoreKey(name))
		v = append([]byte(nil), b...)
		return err
	})
	return v, err
}
