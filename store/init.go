package store

import (
	"encoding/binary"
	"errors"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// init writes a new store's root, default trees and counters, once.
func (s *Store) init() error {
	return s.kv.Update(func(t backend.Txn) error {
		_, err := t.Get(backend.StoreKey("version"))
		if err == nil {
			return nil
		}
		if !errors.Is(err, backend.ErrNotFound) {
			return err
		}
		now := s.now().UnixNano()
		root := &Inode{Ino: RootIno, Mode: syscall.S_IFDIR | 0o755, Uid: uint32(syscall.Getuid()),
			Gid: uint32(syscall.Getgid()), Atime: now, Mtime: now, Ctime: now, Btime: now}
		next := uint64(RootIno + 1)
		for _, name := range DefaultTrees {
			d := &Inode{Ino: next, Mode: syscall.S_IFDIR | 0o755, Uid: root.Uid, Gid: root.Gid,
				Atime: now, Mtime: now, Ctime: now, Btime: now, Links: []Link{{RootIno, name}}}
			root.Subdirs++
			if err := putInode(t, d); err != nil {
				return err
			}
			if err := t.Set(backend.DirentKey(RootIno, name), encodeDirent(d.Ino, d.Mode)); err != nil {
				return err
			}
			next++
		}
		if err := putInode(t, root); err != nil {
			return err
		}
		if err := t.Set(backend.StoreKey("nextino"), binary.BigEndian.AppendUint64(nil, next)); err != nil {
			return err
		}
		return t.Set(backend.StoreKey("version"), []byte("1"))
	})
}

// Exists reports whether kv holds a store (Open of an empty KV creates
// one): commands other than those that make stores check it first.
func Exists(kv backend.KV) (bool, error) {
	found := false
	err := kv.View(func(t backend.Txn) error {
		_, err := t.Get(backend.StoreKey("version"))
		found = err == nil
		if errors.Is(err, backend.ErrNotFound) {
			return nil
		}
		return err
	})
	return found, err
}
