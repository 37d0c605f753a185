package store

// ShedInodes empties the inode cache of every inode no open file has
// (write state) when it holds more than keep: the cache otherwise keeps
// every inode ever read, and a pass over every memory (the views' build)
// or a find over the tree reads them all. What goes is read again from
// the KV when asked for, as after a forget. It returns how many went.
func (s *Store) ShedInodes(keep int) int {
	s.icMu.RLock()
	n := len(s.inodes)
	s.icMu.RUnlock()
	if n <= keep {
		return 0
	}
	// Under mu no namespace change or commit is under way, and no open
	// state is made (Open takes mu): the write states seen are all.
	s.mu.Lock()
	defer s.unlock()
	s.filesMu.Lock()
	open := make(map[uint64]bool, len(s.writes))
	for ino := range s.writes {
		open[ino] = true
	}
	s.filesMu.Unlock()
	s.icMu.Lock()
	defer s.icMu.Unlock()
	// A new map, not deletes: a map keeps the buckets of its largest
	// size (36 MiB after a pass over a million memories).
	kept := make(map[uint64]*Inode, len(open)+1)
	for ino, i := range s.inodes {
		if open[ino] || ino == RootIno {
			kept[ino] = i
		}
	}
	shed := len(s.inodes) - len(kept)
	s.inodes = kept
	s.forgets++
	return shed
}

// ShedListings empties the directory cache when its listings hold more
// than keep entries in all: it otherwise keeps every directory ever
// listed or looked in, whole, and a find over a million memories holds
// them all (about 130 bytes an entry). A listing is read again from the
// KV at its directory's next use. It returns how many entries went.
func (s *Store) ShedListings(keep int) int {
	s.dcMu.RLock()
	n := 0
	for _, l := range s.dc {
		n += len(l.m)
	}
	s.dcMu.RUnlock()
	if n <= keep {
		return 0
	}
	s.dcReset()
	return n
}
