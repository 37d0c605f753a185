package store

import (
	"path"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// Rename flags (renameat2).
const (
	RenameNoReplace = 1
	RenameExchange  = 2
	RenameWhiteout  = 4 // RenameWhiteout only
)

// Rename moves oldDir/oldName to newDir/newName.
func (s *Store) Rename(oldDir uint64, oldName string, newDir uint64, newName string, flags uint32) error {
	if flags&RenameWhiteout != 0 {
		return syscall.EINVAL // RenameWhiteout: it makes a node, with an owner
	}
	return again0(func() error { return s.renameOnce(oldDir, oldName, newDir, newName, flags, nil) })
}

// RenameWhiteout is Rename that leaves a whiteout at the old name, owned
// by own: a character device 0:0 with no permission bits, as overlayfs
// makes in its upper directory to hide a name of the lower one
// (renameat2's RENAME_WHITEOUT). flags may add RenameNoReplace.
func (s *Store) RenameWhiteout(oldDir uint64, oldName string, newDir uint64, newName string, flags uint32, own Owner) error {
	return again0(func() error { return s.renameOnce(oldDir, oldName, newDir, newName, flags|RenameWhiteout, &own) })
}

// renameOnce is Rename, once (again: stale.go); wo owns the whiteout
// RenameWhiteout asks for.
func (s *Store) renameOnce(oldDir uint64, oldName string, newDir uint64, newName string, flags uint32, wo *Owner) error {
	if err := checkName(newName); err != nil {
		return err
	}
	if flags == 0 {
		s.beforeSave(oldDir, oldName, newDir, newName)
	}
	s.mu.Lock()
	defer s.unlock()
	if newDir == RootIno && s.opts.Reserved[newName] {
		return syscall.EEXIST
	}
	if s.hiddenName(oldDir, oldName) {
		return syscall.ENOENT
	}
	if s.hiddenName(newDir, newName) {
		return syscall.EACCES
	}
	if err := s.mayRename(oldDir, oldName, newDir, newName); err != nil {
		return err
	}
	if err := s.flagsAllowRename(oldDir, oldName, newDir, newName, flags); err != nil {
		return err
	}
	if flags == 0 {
		if done, err := s.renameOver(oldDir, oldName, newDir, newName); done {
			return err
		}
	}
	srcIno, srcMode, lerr := s.lookup(oldDir, oldName)
	if err := s.renameWith(oldDir, oldName, newDir, newName, flags, wo, nil); err != nil {
		return err
	}
	if lerr == nil && srcMode&syscall.S_IFMT == syscall.S_IFREG && s.scratchName(newDir, newName) {
		s.vacate(oldDir, oldName, srcIno) // a backup rename: a save may follow (saves.go)
	}
	return nil
}

// rename is Rename with mu held.
func (s *Store) rename(oldDir uint64, oldName string, newDir uint64, newName string, flags uint32) error {
	return s.renameWith(oldDir, oldName, newDir, newName, flags, nil, nil)
}

// renameWith is rename with more writes (extra, given the moved inode) in
// the same transaction; with RenameWhiteout, wo owns the whiteout.
func (s *Store) renameWith(oldDir uint64, oldName string, newDir uint64, newName string, flags uint32, wo *Owner, extra func(t backend.Txn, src *Inode) error) error {
	if flags&^(RenameNoReplace|RenameExchange|RenameWhiteout) != 0 || flags&RenameExchange != 0 && flags != RenameExchange ||
		flags&RenameWhiteout != 0 && wo == nil {
		return syscall.EINVAL
	}
	srcIno, srcMode, err := s.lookup(oldDir, oldName)
	if err != nil {
		return err
	}
	dstIno, dstMode, err := s.lookup(newDir, newName)
	exists := err == nil
	if err != nil && err != syscall.ENOENT {
		return err
	}
	if flags&RenameExchange != 0 && !exists {
		return syscall.ENOENT
	}
	if flags&RenameNoReplace != 0 && exists {
		return syscall.EEXIST
	}
	if exists && dstIno == srcIno {
		return nil // same inode: POSIX says do nothing
	}
	srcDir := srcMode&syscall.S_IFMT == syscall.S_IFDIR
	dstDir := exists && dstMode&syscall.S_IFMT == syscall.S_IFDIR
	if srcDir {
		if err := s.checkNotInside(srcIno, newDir); err != nil {
			return err
		}
	}
	if exists && flags&RenameExchange != 0 && dstDir {
		if err := s.checkNotInside(dstIno, oldDir); err != nil {
			return err
		}
	}
	if exists && flags&RenameExchange == 0 {
		switch {
		case srcDir && !dstDir:
			return syscall.ENOTDIR
		case !srcDir && dstDir:
			return syscall.EISDIR
		case dstDir:
			if empty, err := s.isEmpty(dstIno); err != nil {
				return err
			} else if !empty {
				return syscall.ENOTEMPTY
			}
		}
	}

	now := s.now().UnixNano()
	src, err := s.editable(srcIno)
	if err != nil {
		return err
	}
	op, err := s.editable(oldDir)
	if err != nil {
		return err
	}
	np := op
	if newDir != oldDir {
		if np, err = s.editable(newDir); err != nil {
			return err
		}
	}
	if !np.IsDir() {
		return syscall.ENOTDIR
	}
	op.Mtime, op.Ctime, np.Mtime, np.Ctime = now, now, now, now
	src.dropLink(oldDir, oldName)
	src.addLink(newDir, newName)
	src.Ctime = now
	changed := []*Inode{src, op}
	if np != op {
		changed = append(changed, np)
	}
	var dst *Inode
	if exists {
		if dst, err = s.editable(dstIno); err != nil {
			return err
		}
		dst.dropLink(newDir, newName)
		dst.Ctime = now
		changed = append(changed, dst)
	}
	if flags&RenameExchange != 0 {
		dst.addLink(oldDir, oldName)
		if srcDir != dstDir && op != np {
			if srcDir {
				op.Subdirs--
				np.Subdirs++
			} else {
				op.Subdirs++
				np.Subdirs--
			}
		}
	} else {
		if srcDir && op != np {
			op.Subdirs--
			np.Subdirs++
		}
		if dstDir {
			np.Subdirs--
		}
	}
	var again []*reparsed // metadata read again under the new name
	if rp, err := s.reparseAs(srcIno, srcMode, oldName, newName); err != nil {
		return err
	} else if rp != nil {
		again = append(again, rp)
	}
	if exists && flags&RenameExchange != 0 {
		if rp, err := s.reparseAs(dstIno, dstMode, newName, oldName); err != nil {
			return err
		} else if rp != nil {
			again = append(again, rp)
		}
	}
	replaced := exists && flags&RenameExchange == 0
	lastLink := replaced && len(dst.Links) == 0
	dstOpen := lastLink && s.openState(dstIno) != nil
	var whiteout *Inode
	if flags&RenameWhiteout != 0 {
		if whiteout, err = s.whiteout(oldDir, oldName, *wo, now); err != nil {
			return err
		}
	}
	err = s.update(func(t backend.Txn) error {
		if extra != nil {
			if err := extra(t, src); err != nil {
				return err
			}
		}
		for _, rp := range again {
			if err := rp.apply(t); err != nil {
				return err
			}
		}
		if flags&RenameExchange != 0 {
			if err := t.Set(backend.DirentKey(oldDir, oldName), encodeDirent(dstIno, dstMode)); err != nil {
				return err
			}
		} else if whiteout != nil {
			if err := putInode(t, whiteout); err != nil {
				return err
			}
			if err := t.Set(backend.DirentKey(oldDir, oldName), encodeDirent(whiteout.Ino, whiteout.Mode)); err != nil {
				return err
			}
		} else if err := t.Delete(backend.DirentKey(oldDir, oldName)); err != nil {
			return err
		}
		if dstOpen {
			if err := t.Set(backend.OrphanKey(dstIno), s.orphanTag()); err != nil {
				return err
			}
		}
		return t.Set(backend.DirentKey(newDir, newName), encodeDirent(srcIno, srcMode))
	}, changed...)
	if extra != nil || len(again) > 0 {
		// It may have written their records (handOver, reparsed):
		// committed now, or not; read again (purge below reads the
		// replaced one's).
		s.recs.Forget(srcIno)
		if exists {
			s.recs.Forget(dstIno)
		}
	}
	if err != nil {
		return err
	}
	switch {
	case flags&RenameExchange != 0:
		s.dcSet(oldDir, oldName, dstIno, dstMode)
	case whiteout != nil:
		s.dcSet(oldDir, oldName, whiteout.Ino, whiteout.Mode)
		s.icMu.Lock()
		s.inodes[whiteout.Ino] = whiteout
		s.icMu.Unlock()
	default:
		s.dcDel(oldDir, oldName)
	}
	s.dcSet(newDir, newName, srcIno, srcMode)
	if dstDir && flags&RenameExchange == 0 {
		s.dcDrop(dstIno)
	}
	s.event(Moved, srcIno)
	if flags&RenameExchange != 0 {
		s.event(Moved, dstIno)
	}
	for _, rp := range again {
		s.event(Changed, rp.ino) // read as its new kind: indexed again whole
	}
	if lastLink && !dstOpen {
		return s.purge(dstIno)
	}
	return nil
}

// checkNotInside fails with EINVAL when dir is ino or lies below it.
func (s *Store) checkNotInside(ino, dir uint64) error {
	for n := 0; ; n++ {
		if dir == ino {
			return syscall.EINVAL
		}
		if dir == RootIno || n > 4096 {
			return nil
		}
		i, err := s.inode(dir)
		if err != nil {
			return err
		}
		s.icMu.RLock()
		if len(i.Links) == 0 {
			s.icMu.RUnlock()
			return syscall.ENOENT
		}
		dir = i.Links[0].Parent
		s.icMu.RUnlock()
	}
}

// renameOver handles a plain rename onto an existing memory (saves.go): a
// fresh file renamed over it is a save and the memory goes on in it; any
// other file replaces it, and it goes to the trash — as does the memory
// when the save cannot take it over because it is still open or its
// passthrough session has not ended (beforeSave waits quietWait for
// that; a loaded machine may take longer). done is false when neither
// applies (the plain rename follows). Caller holds mu.
func (s *Store) renameOver(oldDir uint64, oldName string, newDir uint64, newName string) (done bool, err error) {
	srcIno, srcMode, err := s.lookup(oldDir, oldName)
	if err != nil || srcMode&syscall.S_IFMT != syscall.S_IFREG {
		return false, nil
	}
	dstIno, dstMode, err := s.lookup(newDir, newName)
	if err != nil || dstMode&syscall.S_IFMT != syscall.S_IFREG || dstIno == srcIno {
		return false, nil
	}
	dst, err := s.editable(dstIno)
	if err != nil || !s.replaceable(newDir, newName, dst) {
		return false, nil
	}
	src, err := s.editable(srcIno)
	if err != nil {
		return false, nil
	}
	if len(src.Links) == 1 && s.now().UnixNano()-src.Btime < int64(freshAge) && s.quiet(dstIno) {
		dstRec, err := s.storedRecord(dstIno)
		if err != nil {
			return true, err
		}
		srcRec, err := s.storedRecord(srcIno)
		if err != nil {
			return true, err
		}
		dp, err := s.Path(newDir)
		if err != nil {
			return true, err
		}
		var r redo
		return true, s.renameWith(oldDir, oldName, newDir, newName, 0, nil, func(t backend.Txn, moved *Inode) error {
			return s.handOver(t, path.Join(dp, newName), dst, dstRec, moved, srcRec, true, &r)
		})
	}
	if !s.keepInTrash(newDir, newName, dst) {
		return false, nil
	}
	// Another memory takes the name: the one it replaces is kept.
	if _, err := s.trash(newDir, newName, dst); err != nil {
		return true, err
	}
	return true, s.rename(oldDir, oldName, newDir, newName, 0)
}

// scratchName reports whether dir/name is no memory's name: a scratch
// name, or one the ignore rules match. Caller holds mu.
func (s *Store) scratchName(dir uint64, name string) bool {
	if IsScratch(name) {
		return true
	}
	dp, err := s.Path(dir)
	return err == nil && s.Ignored(path.Join(dp, name), false)
}

// whiteout makes the inode of a whiteout at dir/name, to be written with
// the rename that leaves it. Caller holds mu.
func (s *Store) whiteout(dir uint64, name string, own Owner, now int64) (*Inode, error) {
	if err := s.space.need(len(name) + 256); err != nil {
		return nil, err
	}
	ino, err := s.allocIno()
	if err != nil {
		return nil, err
	}
	return &Inode{Ino: ino, Mode: syscall.S_IFCHR, Uid: own.Uid, Gid: own.Gid, Atime: now, Mtime: now,
		Ctime: now, Btime: now, Links: []Link{{dir, name}}}, nil
}
