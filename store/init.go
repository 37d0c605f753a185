package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// Format is the version of the store's layout in the KV (the key schema
// of backend/keys.go and the encodings of its records), kept in
// "s"+"version" when the store is made. Open refuses a store of another
// format (FormatError) before it writes anything: a newer one was made by
// a newer mnemofs, and an older one would need an upgrade that this build
// does not have. A change of layout that older builds cannot read bumps
// it, and the start that meets the old number upgrades the store in one
// transaction (docs/operations.md, "Upgrades").
const Format = 1

// FormatError is a store of a format this build does not read.
type FormatError struct{ Found string }

func (e *FormatError) Error() string {
	return fmt.Sprintf("the store is of format %s, and this mnemofs reads format %d: open it with the mnemofs that wrote it, or a newer one ('mnemofs version' says which format a build reads)", e.Found, Format)
}

// init writes a new store's root, default trees and counters, once; it
// checks the format of an existing store.
func (s *Store) init() error {
	return s.kv.Update(func(t backend.Txn) error {
		v, err := t.Get(backend.StoreKey("version"))
		if err == nil {
			if string(v) != strconv.Itoa(Format) {
				return &FormatError{Found: string(v)}
			}
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
		return t.Set(backend.StoreKey("version"), []byte(strconv.Itoa(Format)))
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
