package store

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// Appends from several hosts (a shared store). An append-only commit
// continues the file at the size it had when this host's writes began
// (openFile.committedSize). Its transaction reads the stored inode
// (commitWrite.checkStored) and, when the file has another size there,
// because another host appended meanwhile, fails with errRebase instead of
// writing over that host's lines. The commit then takes the bytes this
// host appended, forgets its view of the file, loads the stored one and
// appends them again at the new end (rebaseLocked), and commits once more.
// The read of the inode is in the transaction's read set, so an append
// committed by another host after the check makes the commit conflict and
// run its body again, which checks again: every line lands once, in the
// order the commits took. A rewrite (not append-only) is not rebased: it
// replaces the file as a whole, and the last commit wins; if another
// host's staged rewrite moved the content meanwhile, it is staged too
// (errRestage, stage.go), so that it never writes into a replaced chunk set.

var errRebase = errors.New("store: the file grew under an append (another host appended)")

// rebaseFor bounds how long one commit keeps starting over on a busy log
// (then it fails: EIO); between tries it waits a growing, jittered while,
// so that a host whose rebases are slow (each reads the log back to hash
// it) is not starved by hosts committing quick appends.
const rebaseFor = 10 * time.Second

// rebaseWait sleeps before rebase try n.
func rebaseWait(n int) {
	d := time.Millisecond << min(n, 5)
	time.Sleep(d/2 + rand.N(d/2))
}

// errRestage: another host's staged rewrite moved the file to another
// chunk set since this host's view of it (stage.go), so this commit's
// chunks would go where nothing points; it is written as a staged
// rewrite of its own instead.
var errRestage = errors.New("store: another host moved the file's content")

// checkStored, on a shared store, compares the stored inode with this
// host's view: an append-only commit fails with errRebase when the stored
// size is not w.base or the content moved; another commit fails with
// errRestage when the content moved, and with errGone when another host
// removed the file. It returns the stored inode (nil on a store of one
// host), whose names, mode and owner the commit keeps: they are another
// host's to change (stale.go).
func (w *commitWrite) checkStored(t backend.Txn) (*Inode, error) {
	if !w.shared {
		return nil, nil
	}
	i, err := storedInode(t, w.ino)
	if err != nil {
		return nil, err
	}
	switch {
	case i == nil:
		return nil, errGone
	case w.base != nil && i.Size != *w.base:
		return nil, errRebase
	case w.staged:
		return i, nil // stage.go compares the content itself
	case w.base != nil && i.chunkID() != w.id:
		return nil, errRebase
	case i.chunkID() != w.id:
		return nil, errRestage
	}
	return i, nil
}

// errGone: another host removed the file this commit would write (its
// changes go, as a local file's do when it is unlinked while open).
var errGone = errors.New("store: another host removed the file")

// storedInode reads the inode of ino in t; nil if there is none.
func storedInode(t backend.Txn, ino uint64) (*Inode, error) {
	v, err := t.Get(backend.InodeKey(ino))
	if errors.Is(err, backend.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeInode(v)
}

// rebaseLocked moves what f appended since its last commit to the end of
// the stored file. Caller holds f.mu.
func (s *Store) rebaseLocked(f *openFile) error {
	i, err := s.inode(f.ino) // this host's view, with the appends
	if err != nil {
		return err
	}
	s.icMu.RLock()
	size := i.Size
	s.icMu.RUnlock()
	var ours []byte
	if size > f.committedSize {
		ours = make([]byte, size-f.committedSize)
		n, err := s.readLocked(f.ino, f, ours, f.committedSize)
		if err != nil {
			return err
		}
		ours = ours[:n]
	}
	s.mu.Lock()
	s.forget(f.ino)
	s.tails.Forget(f.ino)
	s.recs.Forget(f.ino)
	st, err := s.inode(f.ino) // the stored one
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.icMu.RLock()
	stored := st.Size
	s.icMu.RUnlock()
	s.restart(f, stored)
	if len(ours) == 0 {
		return nil
	}
	_, err = s.writeLocked(f, ours, 0, true)
	return err
}

// commitRebasing is commitLocked, rebased onto another host's commit and
// tried again for up to rebaseFor while the store says to (errRebase).
func (s *Store) commitRebasing(f *openFile) (ev []Change, err error) {
	ev, err = s.commitLocked(f)
	start := time.Now()
	for try := 0; errors.Is(err, errRebase) && time.Since(start) < rebaseFor; try++ {
		rebaseWait(try)
		if err = s.rebaseLocked(f); err == nil {
			ev, err = s.commitLocked(f)
		}
	}
	return ev, err
}
