package store

import (
	"slices"
	"syscall"
)

// Isolation (Options.User): a store opened for one user shows a memory only
// when it names no user, names that user (front matter user, users or
// entities user:x), or was written by that user (Record.Owner, set on every
// file created or imported while the store is open for the user).
// Directories, symlinks and other nodes are not memories and stay visible.
// A hidden memory is absent from Lookup, ReadDir, Memories and Info; a name
// held by a hidden memory cannot be reused or replaced (EACCES), nor the
// memory removed or renamed (ENOENT). Internal work (trash, fsck, imports'
// bookkeeping) sees everything.

// audience is who a memory belongs to: the users it names and its owner.
func (r *Record) audience() []string {
	if r.Owner == "" || slices.Contains(r.Meta.Users, r.Owner) {
		return r.Meta.Users
	}
	return append(slices.Clip(r.Meta.Users), r.Owner)
}

// visibleRecord reports whether a memory with record r is shown.
func (s *Store) visibleRecord(r *Record) bool {
	u := s.opts.User
	if u == "" {
		return true
	}
	a := r.audience()
	return len(a) == 0 || slices.Contains(a, u)
}

// Visible reports whether ino is shown to the store's user.
func (s *Store) Visible(ino uint64) bool {
	if s.opts.User == "" {
		return true
	}
	i, err := s.inode(ino)
	if err != nil {
		return false
	}
	s.icMu.RLock()
	reg := i.IsReg()
	s.icMu.RUnlock()
	if !reg {
		return true
	}
	r, err := s.storedRecord(ino)
	return err == nil && s.visibleRecord(r)
}

// hiddenName reports whether name in dir is held by a hidden memory.
func (s *Store) hiddenName(dir uint64, name string) bool {
	if s.opts.User == "" {
		return false
	}
	ino, _, err := s.lookup(dir, name)
	return err == nil && !s.Visible(ino)
}

// visibleEntries filters a directory listing for the store's user.
func (s *Store) visibleEntries(ents []Dirent) []Dirent {
	if s.opts.User == "" {
		return ents
	}
	out := make([]Dirent, 0, len(ents))
	for _, e := range ents {
		if e.Mode&syscall.S_IFMT != syscall.S_IFREG || s.Visible(e.Ino) {
			out = append(out, e)
		}
	}
	return out
}

// User is the user the store is open for ("" when not isolated).
func (s *Store) User() string { return s.opts.User }
