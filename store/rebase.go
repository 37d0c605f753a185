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
// (commitWrite.checkBase) and, when the file has another size there,
// because another host appended meanwhile, fails with errRebase instead of
// writing over that host's lines. The commit then takes the bytes this
// host appended, forgets its view of the file, loads the stored one and
// appends them again at the new end (rebaseLocked), and commits once more.
// The read of the inode is in the transaction's read set, so an append
// committed by another host after the check makes the commit conflict and
// run its body again, which checks again: every line lands once, in the
// order the commits took. A rewrite (not append-only) is not rebased: it
// replaces the file as a whole, and the last commit wins.

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

// checkBase fails with errRebase when the stored size is not w.base.
func (w *commitWrite) checkBase(t backend.Txn) error {
	if w.base == nil {
		return nil
	}
	v, err := t.Get(backend.InodeKey(w.ino))
	if errors.Is(err, backend.ErrNotFound) {
		return nil // removed by another host: the commit puts it back as it was here
	}
	if err != nil {
		return err
	}
	i, err := decodeInode(v)
	if err != nil {
		return err
	}
	if i.Size != *w.base {
		return errRebase
	}
	return nil
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
	f.restart(stored)
	if len(ours) == 0 {
		return nil
	}
	_, err = s.writeLocked(f, ours, 0, true)
	return err
}
