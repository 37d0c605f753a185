package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// A load that did not end (a killed import) is undone at the next start:
// its tables hold inodes, content and metadata that nothing, or only some
// of its names, point at. StartLoad records the range of inode numbers it
// leased ("s" + "load"); the end of the load deletes the record once the
// names and the directories' times and counts are written (the symbolic
// links, made after, are ordinary commits). At a start that finds it,
// every inode in the range goes with the name pointing at it if one was
// written, every content chunk and metadata record keyed in the range
// goes (whether its inode reached a table or not), and the directories
// outside the range that had a directory of the load in them get their
// subdirectory count again. The import can then be run again from the
// start. (Nothing else can have used those inodes: the record is found at
// the first start after the load, before anything reads the store.)

// loadKey is the record of an open load.
func loadKey() []byte { return backend.StoreKey("load") }

func encodeLoadRange(lo, hi uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, lo), hi)
}

// undoLoad undoes the load recorded in the KV, if there is one.
func (s *Store) undoLoad() error {
	var lo, hi uint64
	err := s.kv.View(func(t backend.Txn) error {
		v, err := t.Get(loadKey())
		if err != nil {
			return err
		}
		if len(v) != 16 {
			return fmt.Errorf("store: corrupt load record")
		}
		lo, hi = binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])
		return nil
	})
	if errors.Is(err, backend.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var keys [][]byte
	inodes := 0
	outside := map[uint64]bool{} // directories outside the range that lost a subdirectory
	err = s.kv.View(func(t backend.Txn) error {
		var ierr error
		serr := t.Scan([]byte{backend.PrefixInode}, backend.InodeKey(lo), false, func(k, v []byte) bool {
			ino := backend.KeyIno(k)
			if ino >= hi {
				return false
			}
			i, err := decodeInode(v)
			if err != nil {
				ierr = fmt.Errorf("inode %d: %w", ino, err)
				return false
			}
			inodes++
			keys = append(keys, backend.InodeKey(ino))
			for _, l := range i.Links {
				dk := backend.DirentKey(l.Parent, l.Name)
				if d, err := t.Get(dk); err == nil {
					if child, _, err := decodeDirent(d); err == nil && child == ino {
						keys = append(keys, dk)
					}
				}
				if i.IsDir() && (l.Parent < lo || l.Parent >= hi) {
					outside[l.Parent] = true
				}
			}
			return true
		})
		if err := errors.Join(serr, ierr); err != nil {
			return err
		}
		// Content and metadata by their own keys' range, not through the
		// inodes found: the load's families are written as separate runs
		// of tables, and a kill can leave one family's tables ahead of
		// another's (content whose inode never reached a table).
		for _, first := range [][]byte{backend.ChunkKey(lo, 0), backend.MetaKey(lo)} {
			err := t.Scan(first[:1], first, true, func(k, _ []byte) bool {
				if backend.KeyIno(k) >= hi {
					return false
				}
				keys = append(keys, bytes.Clone(k))
				return true
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: undoing an unfinished load: %w", err)
	}
	if err := s.deleteKeys(keys); err != nil {
		return fmt.Errorf("store: undoing an unfinished load: %w", err)
	}
	for dir := range outside {
		if err := s.recountSubdirs(dir); err != nil {
			return fmt.Errorf("store: undoing an unfinished load: %w", err)
		}
	}
	s.log.Printf("an import was interrupted: the %d files and directories of its bulk load are removed (what it wrote before the load, in batches, stays); run it again to complete it", inodes)
	return s.kv.Update(func(t backend.Txn) error { return t.Delete(loadKey()) })
}

// recountSubdirs sets dir's subdirectory count from its entries.
func (s *Store) recountSubdirs(dir uint64) error {
	var n uint32
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.DirentPrefix(dir), nil, false, func(_, v []byte) bool {
			if _, mode, err := decodeDirent(v); err == nil && mode&syscall.S_IFMT == syscall.S_IFDIR {
				n++
			}
			return true
		})
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.unlock()
	i, err := s.editable(dir)
	if err != nil || i.Subdirs == n {
		return nil // gone: nothing to count
	}
	i.Subdirs = n
	return s.update(nil, i)
}
