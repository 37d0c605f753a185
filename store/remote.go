package store

import (
	"errors"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// Changes made by other hosts (a shared store: the KV is a
// backend.Watcher). Each transaction another client commits arrives as
// the keys it changed; the store forgets what it had cached of them, so
// the next read loads them again, and passes the change on: to the kernel
// (Notify: entries and content) and to the views (OnChange), exactly as a
// local change would be. Forgetting rather than installing the new values
// keeps the caches right whatever the order of the watch and of local
// commits: the KV is always the truth.
//
// An inode open here (any write state) keeps its cached inode until its
// last close, which then forgets it: a commit at that close replaces the
// file as a whole (the last close wins, as between two processes on one
// host), or, for an append, goes on after the other host's (rebase.go).
//
// Runs on the watch's goroutine, with no store lock held on entry; takes
// mu only to forget, and notifies after releasing it.

// startWatch starts following other hosts' changes, when the KV has them.
func (s *Store) startWatch(kv backend.KV) {
	w, ok := kv.(backend.Watcher)
	if !ok {
		return
	}
	s.shared = true
	s.hostID = newHostID()
	s.stopWatch = w.Watch(s.remote)
}

// Shared reports whether other hosts may change the store (etcd).
func (s *Store) Shared() bool { return s.shared }

type remoteNote struct {
	entries  []entryName
	contents []uint64
}

func (s *Store) remote(evs []backend.Event) {
	var n remoteNote
	s.mu.Lock()
	for _, ev := range evs {
		s.forgetRemote(ev, &n)
	}
	ev := s.unlockKeep()
	for _, e := range n.entries {
		s.notifyEntry(e.dir, e.name)
	}
	for _, ino := range n.contents {
		s.notifyContent(ino)
	}
	s.deliver(ev)
}

// forgetRemote drops what is cached of one changed key. Caller holds mu.
func (s *Store) forgetRemote(ev backend.Event, n *remoteNote) {
	if ev.Reset {
		s.icMu.Lock()
		for ino := range s.inodes {
			if !s.writingLocal(ino) {
				delete(s.inodes, ino)
			}
		}
		s.forgets++
		s.icMu.Unlock()
		s.dcReset()
		s.recs.Purge()
		s.tails.Purge()
		s.dropPolicy()
		s.event(Reindexed, 0)
		return
	}
	k := ev.Key
	if len(k) == 0 {
		return
	}
	switch k[0] {
	case backend.PrefixInode:
		ino := backend.KeyIno(k)
		if !s.writingLocal(ino) {
			s.forget(ino)
			s.tails.Forget(ino)
			n.contents = append(n.contents, ino)
		}
		if ev.Deleted {
			s.event(Removed, ino)
		} else {
			s.event(Moved, ino) // links, hence paths, may have changed
		}
	case backend.PrefixChunk, backend.PrefixPack:
		if k[0] == backend.PrefixChunk {
			ino := backend.KeyIno(k)
			s.tails.Forget(ino)
			s.hot.Remove(ino)
		}
	case backend.PrefixMeta:
		ino := backend.KeyIno(k)
		s.recs.Forget(ino)
		s.event(Changed, ino)
	case backend.PrefixDirent:
		dir, name := backend.KeyIno(k), backend.DirentName(k)
		s.dcDrop(dir)
		n.entries = append(n.entries, entryName{dir, name})
		for _, v := range [][]byte{ev.Val, ev.Prev} {
			if ino, _, err := decodeDirent(v); err == nil && v != nil {
				s.event(Moved, ino)
			}
		}
	case backend.PrefixStore:
		if string(k[1:]) == "setting/"+policySetting {
			s.dropPolicy()
			s.event(Reindexed, 0)
		}
	}
}

// writingLocal reports whether ino is open here with changes not yet
// committed (or being made); if so, it is noted as changed by another
// host, to be forgotten at its last close (forgetStale).
func (s *Store) writingLocal(ino uint64) bool {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	w := s.writes[ino]
	if w != nil && w.f != nil && w.f.mu.TryLock() {
		// Open but unchanged (readers): nothing here depends on the
		// cached inode, so it is forgotten now. Waiting for the last
		// close would wait for ever under a reader that polls: the
		// kernel's next open can come before its last release.
		// (TryLock: f.mu is taken before the store's locks.)
		busy := w.f.modified
		if !busy {
			w.f.stale = true
		}
		w.f.mu.Unlock()
		if !busy {
			return false
		}
	} else if w != nil && w.f != nil {
		// Busy (a read, a write, a commit): the next call on it finds
		// the change noted and, if it holds no changes, forgets the
		// inode then (takeRemote), since its last close may never come
		// under a reader that polls.
		w.f.remote.Store(true)
	}
	if w != nil {
		if s.staleOpen == nil {
			s.staleOpen = map[uint64]bool{}
		}
		s.staleOpen[ino] = true
	}
	return w != nil
}

// takeRemote acts on another host's change that came while f was busy
// (writingLocal): if f holds no changes, the cached inode is forgotten and
// f is stale (refreshStale), as it would have been had f been idle.
// Caller holds f.mu.
func (s *Store) takeRemote(f *openFile) {
	if !f.remote.Swap(false) {
		return
	}
	if f.modified {
		f.remote.Store(true) // its commit rebases on the stored file, or its last close forgets it
		return
	}
	f.stale = true
	s.icMu.Lock()
	delete(s.inodes, f.ino)
	s.forgets++
	s.icMu.Unlock()
	s.tails.Forget(f.ino)
	s.recs.Forget(f.ino)
	s.notifyContent(f.ino) // queued: sent by the notifier, not from here
}

// forgetStale drops the cached inode of a file another host changed while
// it was open here, now that it is closed.
func (s *Store) forgetStale(ino uint64) {
	s.mu.Lock()
	s.forget(ino)
	s.tails.Forget(ino)
	s.recs.Forget(ino)
	s.mu.Unlock()
	s.notifyContent(ino)
}

// revertUncommitted puts the cached size of ino back to what was last
// committed, after its last handle went with a commit that failed (the
// backend refused it, or did not answer): the writes were not kept, so
// neither this host's cache nor the kernel's pages may show them; what was
// committed stays readable from the cache.
func (s *Store) revertUncommitted(ino, committed uint64) {
	s.mu.Lock()
	s.icMu.Lock()
	if i := s.inodes[ino]; i != nil && i.Size != committed {
		c := i.clone()
		c.Size = committed
		s.inodes[ino] = c
	}
	s.icMu.Unlock()
	s.tails.Forget(ino)
	s.mu.Unlock()
	s.notifyContent(ino)
}

// dropPolicy forgets the parsed policy and what is compiled from it.
func (s *Store) dropPolicy() { s.rules.Drop() }

// sharedCreate makes a create on a shared store safe against another
// host's: inside the transaction it reads the entry (EEXIST when another
// host made it since this host's cache was filled) and the parent as
// stored, and applies the create's change (times, subdirectory count) to
// that, not to this host's cached copy; both reads are in the read set,
// so a concurrent create elsewhere makes the commit run this again.
func sharedCreate(t backend.Txn, dir uint64, name string, p *Inode, now int64, isDir bool) error {
	if _, err := t.Get(backend.DirentKey(dir, name)); err == nil {
		return syscall.EEXIST
	} else if !errors.Is(err, backend.ErrNotFound) {
		return err
	}
	v, err := t.Get(backend.InodeKey(dir))
	if err != nil {
		return err
	}
	stored, err := decodeInode(v)
	if err != nil {
		return err
	}
	*p = *stored
	p.Mtime, p.Ctime = now, now
	if isDir {
		p.Subdirs++
	}
	return nil
}

// refreshStale brings an open state that another host's change made stale
// (writingLocal) to the stored file before it changes it. Caller holds
// f.mu.
func (s *Store) refreshStale(f *openFile) error {
	s.takeRemote(f)
	if !f.stale || f.modified {
		return nil
	}
	i, err := s.inode(f.ino)
	if err != nil {
		return err
	}
	s.icMu.RLock()
	size := i.Size
	s.icMu.RUnlock()
	f.restart(size)
	return nil
}
