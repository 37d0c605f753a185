package changes

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/mnemofs/mnemofs/backend"
)

// The removal log. A derived index kept across mounts (the views'
// snapshot) must learn which memories were removed since it was written.
// The inode records that are gone say so only by their absence, which
// takes a walk of every inode key: at a million memories, most of a
// second and hundreds of MiB of the engine's tables brought into memory.
// So every removal of an inode record also writes r<ino> in the same
// transaction (DeleteInode), and ChangedSince reads the removals since a
// version from the keys written after it.
//
// A program that does not write the log (an older mnemofs) may have
// removed memories since. The log is trusted only after a version,
// "s"+"removals/since", and a start moves that version up to now unless
// the store was last closed by a program that keeps the log and nothing
// was written after: a clean close writes "s"+"removals/closed" last, and
// a start deletes it, so a crash (or any other writer) leaves it missing
// or below the KV's version. Removals before the trusted version are
// found by the walk, as they always were.
//
// The log is pruned when it passes removalLogMax entries: the older half
// goes and the trusted version moves up to where it ended.

var (
	removalsSinceKey  = backend.StoreKey("removals/since")
	removalsClosedKey = backend.StoreKey("removals/closed")
)

// ClosedKey is the key of the mark of a clean close, which a copy of the
// store under another KV (a backup's load) leaves out: the copy's
// versions are not the ones the log was kept under.
func ClosedKey() []byte { return bytes.Clone(removalsClosedKey) }

// removalLogMax is a variable for the tests.
var removalLogMax = 1 << 17

// DeleteInode deletes the inode record of ino in t, with its mark in the
// removal log (on a store that keeps one).
func (l *Log) DeleteInode(t backend.Txn, ino uint64) error {
	if err := t.Delete(backend.InodeKey(ino)); err != nil {
		return err
	}
	if _, ok := l.versioned(); !ok {
		return nil
	}
	return t.Set(backend.RemovedKey(ino), nil)
}

// OpenRemovals decides, at a start before anything is written, from which
// version on the removal log is complete. Only a versioned store that
// this start may write keeps one.
func (l *Log) OpenRemovals() error {
	vkv, ok := l.versioned()
	if !ok || l.readOnly {
		return nil
	}
	now := vkv.Version()
	if _, shared := vkv.(backend.Settler); shared && now == 0 {
		// The cluster did not answer: the log is not trusted at all (a
		// walk finds removals) until a start can say from when.
		return l.kv.Update(func(t backend.Txn) error { return t.Delete(removalsSinceKey) })
	}
	var closedAt uint64
	err := vkv.KeysSince(removalsClosedKey, 0, func(k []byte, v uint64) error {
		if bytes.Equal(k, removalsClosedKey) {
			closedAt = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, known, err := l.removalsSince()
	if err != nil {
		return err
	}
	return l.kv.Update(func(t backend.Txn) error {
		if !known || closedAt == 0 || closedAt != now {
			// Someone else may have written since: trust the log from now.
			if err := t.Set(removalsSinceKey, binary.BigEndian.AppendUint64(nil, now)); err != nil {
				return err
			}
		}
		return t.Delete(removalsClosedKey)
	})
}

// CloseRemovals is the last write of a clean close.
func (l *Log) CloseRemovals() error {
	if _, ok := l.versioned(); !ok || l.readOnly {
		return nil
	}
	return l.kv.Update(func(t backend.Txn) error { return t.Set(removalsClosedKey, nil) })
}

// removalsSince reads the version after which the log is complete.
func (l *Log) removalsSince() (uint64, bool, error) {
	var v []byte
	err := l.kv.View(func(t backend.Txn) error {
		var err error
		v, err = t.Get(removalsSinceKey)
		return err
	})
	if errors.Is(err, backend.ErrNotFound) || (err == nil && len(v) != 8) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return binary.BigEndian.Uint64(v), true, nil
}

// removedSince lists the inodes the log says were removed after version
// since, in increasing order; false when the log is not complete that far
// back. Caller holds removalsMu (read).
func (l *Log) removedSince(vkv backend.Versioned, since uint64) ([]uint64, bool, error) {
	from, known, err := l.removalsSince()
	if err != nil || !known || since < from {
		return nil, false, err
	}
	var out []uint64
	err = vkv.KeysSince([]byte{backend.PrefixRemoved}, since, func(k []byte, _ uint64) error {
		out = append(out, binary.BigEndian.Uint64(k[1:]))
		return nil
	})
	return out, err == nil, err
}

// PruneRemovals drops the older half of the log once it passes
// removalLogMax entries, moving the trusted version up first.
func (l *Log) PruneRemovals() error {
	vkv, ok := l.versioned()
	if !ok || l.readOnly {
		return nil
	}
	type mark struct {
		key []byte
		v   uint64
	}
	var marks []mark
	err := vkv.KeysSince([]byte{backend.PrefixRemoved}, 0, func(k []byte, v uint64) error {
		marks = append(marks, mark{bytes.Clone(k), v})
		return nil
	})
	if err != nil || len(marks) <= removalLogMax {
		return err
	}
	l.removalsMu.Lock()
	defer l.removalsMu.Unlock()
	slices.SortFunc(marks, func(a, b mark) int { return cmp.Compare(a.v, b.v) })
	cut := marks[len(marks)-removalLogMax/2].v - 1
	from, _, err := l.removalsSince()
	if err != nil {
		return err
	}
	if cut > from {
		err := l.kv.Update(func(t backend.Txn) error {
			return t.Set(removalsSinceKey, binary.BigEndian.AppendUint64(nil, cut))
		})
		if err != nil {
			return err
		}
	}
	var keys [][]byte
	for _, m := range marks {
		if m.v <= cut {
			keys = append(keys, m.key)
		}
	}
	return backend.DeleteKeys(l.kv, keys)
}
