package store

import (
	"fmt"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store/changes"
)

// Change events and what changed since a version are package
// store/changes'; these are the store's side of them.

type (
	// ChangeKind says what happened to a memory.
	ChangeKind = changes.ChangeKind
	// Change is one event for Options.OnChange.
	Change = changes.Change
	// Since is what ChangedSince found.
	Since = changes.Since
)

// What happened to a memory (changes.ChangeKind).
const (
	Changed   = changes.Changed
	Moved     = changes.Moved
	Removed   = changes.Removed
	Reindexed = changes.Reindexed
)

// ID names this store: the birth time of its root directory, written once
// when the store was created. A store made anew in the same place (or a
// different one restored there) has another.
func (s *Store) ID() (string, error) {
	root, err := s.inode(RootIno)
	if err != nil {
		return "", err
	}
	s.icMu.RLock()
	defer s.icMu.RUnlock()
	return fmt.Sprintf("%x", root.Btime), nil
}

// DirLinks maps every directory but the root to where it is (its parent
// and name), as of one moment. A caller that kept it with its derived data
// can tell, of a directory in Since.Changed, whether it moved (its link
// differs) or only had entries come and go.
func (s *Store) DirLinks() (map[uint64]Link, error) {
	out := map[uint64]Link{}
	err := s.kv.View(func(t backend.Txn) error {
		var derr error
		err := t.Scan([]byte{backend.PrefixDirent}, nil, false, func(k, v []byte) bool {
			ino, mode, err := decodeDirent(v)
			if err != nil {
				derr = err
				return false
			}
			if mode&syscall.S_IFMT == syscall.S_IFDIR {
				out[ino] = Link{Parent: backend.DirentDir(k), Name: backend.DirentName(k)}
			}
			return true
		})
		if err == nil {
			err = derr
		}
		return err
	})
	return out, err
}

// Versioned reports whether Settled and ChangedSince can answer: the
// KV numbers commits, and, when others change it, can tell when their
// commits up to a version have been delivered.
func (s *Store) Versioned() bool { return s.changes.Versioned() }

// Settled returns a version of the KV such that the change events of
// every commit at or below it have been delivered to Options.OnChange
// (changes.Log.Settled).
func (s *Store) Settled(wait time.Duration) (uint64, bool) {
	return s.changes.Settled(wait, func(fn func()) {
		s.mu.Lock()
		defer s.mu.Unlock()
		fn()
	})
}

// ChangedSince reports what changed after version since (from Settled;
// changes.Log.ChangedSince).
func (s *Store) ChangedSince(since uint64) (Since, error) { return s.changes.ChangedSince(since) }

// delInode deletes the inode record of ino in t, with its mark in the
// removal log (on a store that keeps one).
func (s *Store) delInode(t backend.Txn, ino uint64) error { return s.changes.DeleteInode(t, ino) }

// newChanges is the change log of a store on kv.
func newChanges(kv backend.KV, readOnly bool) *changes.Log {
	_, multiHost := kv.(backend.Watcher) // as startWatch
	return changes.New(kv, changes.Options{MultiHost: multiHost, ReadOnly: readOnly,
		Settings: backend.StoreKey(settingPrefix), Statistics: [][]byte{backend.StoreKey(settingPrefix + sizeSamples)}})
}
