package store

import (
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// Unnamed files (open with O_TMPFILE). CreateTemp makes a regular file
// with no name, an orphan from the start (a crash frees it, as an
// unlinked file still open), which Link may name while it is open: then
// it is a memory like any other. Until then its writes stay in its open
// state (a commit of an orphan still open keeps them, commit.go); one
// never named is freed at its last close.

// CreateTemp makes an unnamed regular file for the directory dir (its
// group, in a setgid directory), belonging to the store's user. The
// caller opens it (Open) before anything else may release it.
func (s *Store) CreateTemp(dir uint64, perm uint32, own Owner) (Inode, error) {
	if s.opts.ReadOnly {
		return Inode{}, syscall.EROFS
	}
	if err := s.space.need(256); err != nil {
		return Inode{}, err
	}
	s.mu.Lock()
	defer s.unlock()
	p, err := s.inode(dir)
	if err != nil {
		return Inode{}, err
	}
	s.icMu.RLock()
	isDir, removed, pmode, pgid := p.IsDir(), len(p.Links) == 0 && p.Ino != RootIno, p.Mode, p.Gid
	s.icMu.RUnlock()
	switch {
	case !isDir:
		return Inode{}, syscall.ENOTDIR
	case removed:
		return Inode{}, syscall.ENOENT
	}
	if err := s.mayAddName(dir); err != nil {
		return Inode{}, err
	}
	ino, err := s.allocIno()
	if err != nil {
		return Inode{}, err
	}
	now := s.now().UnixNano()
	i := &Inode{Ino: ino, Mode: syscall.S_IFREG | perm&0o7777, Uid: own.Uid, Gid: own.Gid,
		Atime: now, Mtime: now, Ctime: now, Btime: now}
	if pmode&syscall.S_ISGID != 0 {
		i.Gid = pgid
	}
	rec := Record{SHA256: EmptySHA256, Owner: s.opts.User}
	err = s.kv.Update(func(t backend.Txn) error {
		if err := t.Set(backend.OrphanKey(ino), s.orphanTag()); err != nil {
			return err
		}
		if err := putRecord(t, ino, &rec); err != nil {
			return err
		}
		return putInode(t, i)
	})
	if err != nil {
		return Inode{}, err
	}
	s.icMu.Lock()
	s.inodes[ino] = i
	s.icMu.Unlock()
	s.recs.Set(ino, rec)
	if s.tmpfiles == nil {
		s.tmpfiles = map[uint64]bool{}
	}
	s.tmpfiles[ino] = true
	return *i.clone(), nil
}

// stillOpen reports whether f has open handles.
func (s *Store) stillOpen(f *openFile) bool {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	return f.refs > 0
}
