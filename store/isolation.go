package store

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Isolation (Options.User). A memory belongs to its owner (Record.Owner:
// the user whose mount created it, imported it or last changed it) and to
// no one else, whatever its front matter says; a memory with no owner
// belongs to the users its front matter names (user, users, entities
// user:x), and to everyone when it names none (a public memory).
//
// A store opened for user U:
//   - shows a memory only when U is in its audience or the audience is
//     everyone; a memory whose metadata could not be read (Record.Unreadable:
//     front matter that does not parse, or over the size limit) and that has
//     no owner is shown to no user: its audience cannot be known, so it
//     fails closed;
//   - changes only U's own memories (audience exactly U): public and shared
//     memories are read-only there (EACCES), since a change would take them
//     from the others; a directory is renamed or removed only when every
//     memory below it is U's;
//   - makes U the owner of everything it writes: front matter naming other
//     users cannot give a memory away (the record's error says so).
//
// A hidden memory is absent from Lookup, ReadDir, Memories and Info; a name
// held by a hidden memory cannot be reused or replaced (EACCES, the one
// thing a user learns of another's memories: that a name is taken), nor the
// memory removed or renamed (ENOENT). Directories, symlinks and other
// nodes are not memories and stay visible. Internal work (trash,
// maintenance, fsck, imports' bookkeeping) sees everything.

// audience is who a memory belongs to: its owner, else the users it names
// (none: everyone).
func (r *Record) audience() []string {
	if r.Owner != "" {
		return []string{r.Owner}
	}
	if len(r.Meta.Users) == 0 && !r.LinePublic && len(r.LineUsers) > 0 {
		return r.LineUsers // a log every line of which names its users
	}
	return r.Meta.Users
}

// unsure reports whether nobody can tell whose the memory is.
func (r *Record) unsure() bool { return r.Owner == "" && r.Unreadable }

// VisibleTo reports whether user u (""; unrestricted) sees a memory with
// record r (of the fields isolation reads: Owner, Meta.Users, Unreadable
// and a log's line fields).
func (r *Record) VisibleTo(u string) bool {
	if u == "" {
		return true
	}
	if r.unsure() {
		return false
	}
	if r.partial(u) {
		return r.partialVisible(u) // a shared log: if some line is u's to see
	}
	a := r.audience()
	return len(a) == 0 || slices.Contains(a, u)
}

// visibleRecord reports whether a memory with record r is shown.
func (s *Store) visibleRecord(r *Record) bool { return r.VisibleTo(s.opts.User) }

// ownRecord reports whether the store's user may change a memory with
// record r: it is theirs alone.
func (s *Store) ownRecord(r *Record) bool {
	u := s.opts.User
	if u == "" {
		return true
	}
	a := r.audience()
	return !r.unsure() && !r.partial(u) && len(a) == 1 && a[0] == u
}

// Visible reports whether ino is shown to the store's user.
func (s *Store) Visible(ino uint64) bool {
	if s.opts.User == "" {
		return true
	}
	r, reg, err := s.memoryRecord(ino)
	return err == nil && (!reg || s.visibleRecord(r))
}

// memoryRecord loads the record of ino if it is a regular file (reg).
func (s *Store) memoryRecord(ino uint64) (r *Record, reg bool, err error) {
	i, err := s.inode(ino)
	if err != nil {
		return nil, false, err
	}
	s.icMu.RLock()
	reg = i.IsReg()
	s.icMu.RUnlock()
	if !reg {
		return nil, false, nil
	}
	r, err = s.storedRecord(ino)
	return r, true, err
}

// mayChange returns nil when the store may change the node ino: EROFS for
// a read-only store, EACCES for a memory that is not the store's user's
// own, ENOENT for one the user does not see.
func (s *Store) mayChange(ino uint64) error {
	if s.opts.ReadOnly {
		return syscall.EROFS
	}
	if s.opts.User == "" || s.isInternal(ino) {
		return nil
	}
	r, reg, err := s.memoryRecord(ino)
	switch {
	case err != nil:
		return err
	case !reg:
		return nil
	case !s.visibleRecord(r):
		return syscall.ENOENT
	case !s.ownRecord(r):
		return syscall.EACCES
	}
	return nil
}

// mayMoveTree returns nil when the store's user may rename or remove the
// directory dir: every memory below it is theirs (EACCES otherwise, so a
// hidden memory is never moved or trashed by someone it is hidden from).
// Caller holds mu.
func (s *Store) mayMoveTree(dir uint64) error {
	if s.opts.User == "" {
		return nil
	}
	ents, err := s.readDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		switch e.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			if err := s.mayMoveTree(e.Ino); err != nil {
				return err
			}
		case syscall.S_IFREG:
			if r, err := s.storedRecord(e.Ino); err != nil || !s.ownRecord(r) {
				return syscall.EACCES
			}
		}
	}
	return nil
}

// claim makes the store's user the owner of a memory it commits, and notes
// front matter naming others (which cannot give the memory away).
func (s *Store) claim(r *Record) {
	u := s.opts.User
	if u == "" {
		return
	}
	r.Owner = u
	var others []string
	for _, x := range r.Meta.Users {
		if x != u {
			others = append(others, x)
		}
	}
	if len(others) > 0 {
		note := fmt.Sprintf("users %s ignored: written in %s's mount, the memory stays %s's", strings.Join(others, ", "), u, u)
		if r.Error != "" {
			note = r.Error + "; " + note
		}
		r.Error = note
	}
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

// mayRename returns nil when the store's user may move oldDir/oldName
// onto newDir/newName: the source is theirs to change (a directory: every
// memory below it), and so is what the move would replace or exchange.
// Caller holds mu.
func (s *Store) mayRename(oldDir uint64, oldName string, newDir uint64, newName string) error {
	if s.opts.ReadOnly {
		return syscall.EROFS
	}
	if s.opts.User == "" {
		return nil
	}
	for _, n := range []struct {
		dir  uint64
		name string
	}{{oldDir, oldName}, {newDir, newName}} {
		ino, mode, err := s.lookup(n.dir, n.name)
		if err != nil {
			continue // a missing source is the rename's own ENOENT
		}
		if mode&syscall.S_IFMT == syscall.S_IFDIR {
			err = s.mayMoveTree(ino)
		} else {
			err = s.mayChange(ino)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// AudienceKey names the audience of a memory: memories with one key are
// seen by exactly the same users (a memory whose audience is unknown,
// Info.Unsure, shares its key with no other).
func AudienceKey(in Info) string {
	if in.unsure {
		return "?" + strconv.FormatUint(in.Ino, 10) // like no other
	}
	u := slices.Clone(in.Users)
	slices.Sort(u)
	return strings.Join(u, "\x00")
}
