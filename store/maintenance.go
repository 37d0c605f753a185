package store

import (
	"fmt"
	"path"
	"strings"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// The primitives of maintenance (package lifecycle decides what a pass
// does; these carry it out). Maintenance is the operator's: each of them
// acts whoever the store is open for, with no isolation check, and what it
// writes keeps, or is given, the owner the caller names. They are not for
// a user's requests (fusefs and mcp never call them).

// AllMemories calls fn for every linked regular file that is a memory, in
// inode order, including those hidden from the store's user: the operator's
// view, which a pass plans from.
func (s *Store) AllMemories(fn func(Info) error) error { return s.memories(true, nil, fn) }

// ReadWhole is ReadAt as the operator reads: every line of a log shared
// by several users, whichever user the store is open for (a pass that
// runs in a user's mount summarises the whole session, and numbers its
// lines as the log does).
func (s *Store) ReadWhole(ino uint64, dest []byte, off int64) (int, error) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	return s.readAt(ino, dest, off)
}

// MoveUnique renames the memory (or directory) at from to the path to,
// making to's directory (0755, root) and, when to is taken, choosing a
// free name: to's base with ".2", ".3"... before its extension. Versions,
// links and index entries follow the inode; the kernel's cached names are
// dropped.
func (s *Store) MoveUnique(from, to string) error {
	s.mu.Lock()
	defer s.unlock()
	dir, name := path.Split(to)
	d, err := s.mkdirAll(dir, Owner{})
	if err != nil {
		return err
	}
	for k := 2; ; k++ {
		if _, _, err := s.lookup(d, name); err != nil {
			break
		}
		ext := path.Ext(path.Base(to))
		name = fmt.Sprintf("%s.%d%s", strings.TrimSuffix(path.Base(to), ext), k, ext)
	}
	fdir, fname := path.Split(from)
	fd, err := s.Resolve(fdir)
	if err != nil {
		return err
	}
	if ino, _, err := s.lookup(fd, fname); err == nil {
		if err := s.mayDropName(fd, ino); err != nil {
			return err // chattr +i or +a: it stays (flags.go)
		}
	}
	if err := s.rename(fd, fname, d, name, 0); err != nil {
		return err
	}
	// Behind the kernel's back: drop its cached names (queued, no wait).
	s.notifyEntry(fd, fname)
	s.notifyEntry(d, name)
	return nil
}

// MarkCold sets the memory's cold mark (Record.Cold, Info.Cold).
func (s *Store) MarkCold(ino uint64) error {
	return s.setMark(ino, func(r *Record) { r.Cold = true })
}

// MarkDuplicate marks the memory ino a copy of the memory of
// (Record.DuplicateOf, Info.DuplicateOf).
func (s *Store) MarkDuplicate(ino, of uint64) error {
	return s.setMark(ino, func(r *Record) { r.DuplicateOf = of })
}

// setMark changes the stored record of ino with mark.
func (s *Store) setMark(ino uint64, mark func(*Record)) error {
	s.mu.Lock()
	defer s.unlock()
	rec, err := s.storedRecord(ino)
	if err != nil {
		return err
	}
	mark(rec)
	err = s.kv.Update(func(t backend.Txn) error { return putRecord(t, ino, rec) })
	s.recs.Forget(ino)
	return err
}

// PurgeTrashed deletes for real the memory ino at its current path, which
// the caller found in the trash (TrashDir) past its retention; unlike
// Remove it never keeps a copy. The path is not checked again.
func (s *Store) PurgeTrashed(ino uint64) error {
	cur, err := s.Path(ino)
	if err != nil {
		return err
	}
	dir, name := path.Split(cur)
	d, err := s.Resolve(dir)
	if err != nil {
		return err
	}
	s.mu.Lock()
	i, err := s.editable(ino)
	if err == nil {
		err = s.unlink(d, name, i)
	}
	s.unlock()
	if err != nil {
		return err
	}
	s.notifyEntry(d, name)
	return nil
}

// WriteNew creates dir/name (and its directories) holding data, belonging
// to owner (Record.Owner; "" for none, so that its front matter names its
// audience) and to the process's uid and gid, through the bulk path
// (bulk.go). An existing file there is rewritten, if the store's user may
// change it.
func (s *Store) WriteNew(dir, name string, data []byte, owner string) error {
	b := &Bulk{s: s, owner: owner}
	own := Owner{Uid: uint32(syscall.Getuid()), Gid: uint32(syscall.Getgid())}
	if err := b.AddFile(path.Join(dir, name), data, 0o644, own, s.now().UnixNano()); err != nil {
		b.Cancel()
		return err
	}
	return b.Flush()
}

// RewriteInternal replaces the content of ino for maintenance: the change
// is not the store's user's (no isolation check, no claim), and the memory
// keeps its owner. It is a commit like any other (a new version, by the
// policy).
func (s *Store) RewriteInternal(ino uint64, data []byte) error {
	s.filesMu.Lock()
	s.internal[ino]++
	s.filesMu.Unlock()
	defer func() {
		s.filesMu.Lock()
		if s.internal[ino]--; s.internal[ino] <= 0 {
			delete(s.internal, ino)
		}
		s.filesMu.Unlock()
	}()
	return s.overwrite(ino, data)
}

// isInternal reports whether maintenance is writing ino (RewriteInternal).
func (s *Store) isInternal(ino uint64) bool {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	return s.internal[ino] > 0
}
