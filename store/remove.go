package store

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// TrashDir is where removed memories go.
const TrashDir = "/archive/trash"

// IsScratch reports whether a name is an editor or tool scratch file, which
// is never kept in the trash.
func IsScratch(name string) bool {
	switch {
	case strings.HasPrefix(name, ".") && (strings.HasSuffix(name, ".swp") || strings.HasSuffix(name, ".swx") || strings.HasSuffix(name, ".swo")),
		strings.HasSuffix(name, "~"),
		strings.HasPrefix(name, ".#"),
		strings.HasSuffix(name, ".tmp"),
		name == "4913": // vim's probe for a writable directory
		return true
	}
	return false
}

// Remove unlinks dir/name. A memory (a regular file with one name, outside
// the trash, older than the scratch age) is moved to archive/trash/ and the
// new path is returned; anything else is deleted and "" is returned.
func (s *Store) Remove(dir uint64, name string) (string, error) {
	return again(func() (string, error) { return s.removeOnce(dir, name) })
}

// removeOnce is Remove, once (again: stale.go).
func (s *Store) removeOnce(dir uint64, name string) (string, error) {
	s.mu.Lock()
	defer s.unlock()
	ino, mode, err := s.lookup(dir, name)
	if err != nil {
		return "", err
	}
	if mode&syscall.S_IFMT == syscall.S_IFDIR {
		return "", syscall.EISDIR
	}
	if err := s.mayChange(ino); err != nil {
		return "", err
	}
	if err := s.mayDropName(dir, ino); err != nil {
		return "", err
	}
	i, err := s.editable(ino)
	if err != nil {
		return "", err
	}
	if s.keepInTrash(dir, name, i) {
		p, err := s.trash(dir, name, i)
		if err == nil {
			s.vacate(dir, name, ino) // a file created here soon goes on with it (saves.go)
			return p, nil
		}
		// The memory stays: a removal that was to keep it in the trash
		// never destroys it instead.
		s.log.Printf("moving %s to the trash failed, so it is not removed: %v", name, err)
		return "", syscall.EIO
	}
	return "", s.unlink(dir, name, i)
}

func (s *Store) keepInTrash(dir uint64, name string, i *Inode) bool {
	if !i.IsReg() || len(i.Links) != 1 || IsScratch(name) {
		return false
	}
	if s.opts.ScratchAge > 0 && time.Duration(s.now().UnixNano()-i.Btime) < s.opts.ScratchAge {
		return false
	}
	dp, err := s.Path(dir)
	return err == nil && dp != TrashDir && !strings.HasPrefix(dp, TrashDir+"/") && !s.Ignored(path.Join(dp, name), false)
}

// trash moves dir/name into the trash. Caller holds mu.
func (s *Store) trash(dir uint64, name string, i *Inode) (string, error) {
	orig, err := s.Path(i.Ino)
	if err != nil {
		return "", err
	}
	tdir, err := s.mkdirAll(TrashDir+path.Dir(orig), Owner{i.Uid, i.Gid})
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.EACCES) {
		// Something not a directory where one of the trash would be
		// (written there by hand): the memory goes below a directory of
		// its own instead, and where it came from is in its record.
		tdir, err = s.mkdirAll(TrashDir+"/"+s.now().UTC().Format("20060102T150405.000000000")+path.Dir(orig), Owner{i.Uid, i.Gid})
	}
	if err != nil {
		return "", err
	}
	dest := name
	if _, _, err := s.lookup(tdir, dest); err == nil {
		// notes.20261201T113118.000000000.md: the extension stays last, so
		// tools still know the file.
		stamp := "." + s.now().UTC().Format("20060102T150405.000000000")
		ext := path.Ext(name)
		if len(ext) > 16 || ext == name {
			ext = ""
		}
		base := strings.TrimSuffix(name, ext)
		dest = base[:min(len(base), NameMax-len(stamp)-len(ext))] + stamp + ext
	}
	rec, err := s.storedRecord(i.Ino)
	if err != nil {
		return "", err
	}
	rec.Trashed, rec.TrashedFrom = s.now().UnixNano(), orig
	// The move and the record of where it came from: one transaction.
	err = s.renameWith(dir, name, tdir, dest, 0, nil, func(t backend.Txn, _ *Inode) error { return putRecord(t, i.Ino, rec) })
	s.recs.Forget(i.Ino)
	if err != nil {
		return "", err
	}
	s.notifyEntry(tdir, dest)
	p, _ := s.Path(i.Ino)
	return p, nil
}

// unlink drops the name dir/name of i (an editable copy); the last name of
// a closed file frees it, of an open file makes it an orphan. Caller holds mu.
func (s *Store) unlink(dir uint64, name string, i *Inode) error {
	p, err := s.editable(dir)
	if err != nil {
		return err
	}
	now := s.now().UnixNano()
	p.Mtime, p.Ctime = now, now
	i.dropLink(dir, name)
	i.Ctime = now
	last := len(i.Links) == 0
	open := s.openState(i.Ino) != nil
	if last && !open {
		// The common case, a closed file's last name: one transaction
		// drops the name and everything of the inode.
		keys, err := s.closedInodeKeys(i)
		if err != nil {
			return err
		}
		if len(keys) <= 64 {
			err = s.update(func(t backend.Txn) error {
				for _, k := range keys {
					if err := t.Delete(k); err != nil {
						return err
					}
				}
				if err := s.delInode(t, i.Ino); err != nil {
					return err
				}
				return t.Delete(backend.DirentKey(dir, name))
			}, p)
			if err != nil {
				return err
			}
			s.dcDel(dir, name)
			s.tails.Forget(i.Ino)
			s.recs.Forget(i.Ino)
			if i.Blob != 0 && s.blobs != nil {
				s.blobs.RetireAll(i.Ino)
			}
			s.forget(i.Ino)
			s.event(Removed, i.Ino)
			if i.Pack != 0 {
				return s.dropPackIfEmpty(i.Pack) // else fsck drops an empty pack
			}
			return nil
		}
	}
	err = s.update(func(t backend.Txn) error {
		if last && open {
			if err := t.Set(backend.OrphanKey(i.Ino), s.orphanTag()); err != nil {
				return err
			}
		}
		return t.Delete(backend.DirentKey(dir, name))
	}, i, p)
	if err != nil {
		return err
	}
	s.dcDel(dir, name)
	if !last {
		s.event(Moved, i.Ino) // a name gone: its path may be another now
	}
	if !last || open {
		return nil
	}
	return s.purge(i.Ino)
}

// purge deletes every key of ino. Caller holds mu.
func (s *Store) purge(ino uint64) error {
	keys, err := s.inodeKeys(ino)
	if err != nil {
		return err
	}
	var pack uint64
	if i, err := s.inode(ino); err == nil {
		pack = i.Pack
	}
	if err := s.deleteKeys(keys); err != nil {
		return err
	}
	if err := s.kv.Update(func(t backend.Txn) error { return s.delInode(t, ino) }); err != nil {
		return err
	}
	s.tails.Forget(ino)
	s.recs.Forget(ino)
	delete(s.tmpfiles, ino)
	s.settledInPlace(ino)
	if s.blobs != nil {
		s.blobs.RetireAll(ino)
	}
	s.forget(ino)
	s.event(Removed, ino)
	if pack != 0 {
		return s.dropPackIfEmpty(pack) // else fsck drops an empty pack
	}
	return nil
}

// inodeKeys lists every key of ino: chunks, xattrs, versions, metadata,
// orphan mark, pack membership and embedding: all but the inode record,
// which goes last, with its mark in the removal log (delInode).
func (s *Store) inodeKeys(ino uint64) ([][]byte, error) {
	var keys [][]byte
	pres := [][]byte{backend.ChunkPrefix(ino), backend.XattrPrefix(ino)}
	if id, err := s.chunkIDOf(ino); err == nil && id != ino {
		pres = append(pres, backend.ChunkPrefix(id)) // a staged rewrite's (stage.go)
	}
	// Its versions go with it, unless a save handed them on (saves.go).
	if r, err := s.storedRecord(ino); err != nil || r.Successor == 0 {
		l := ino
		if err == nil {
			l = r.lineage(ino)
		}
		pres = append(pres, backend.VersionPrefix(l), backend.VersionBytesPrefix(l))
	}
	err := s.kv.View(func(t backend.Txn) error {
		for _, pre := range pres {
			err := t.Scan(pre, nil, true, func(k, _ []byte) bool {
				keys = append(keys, append([]byte(nil), k...))
				return true
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if i, err := s.inode(ino); err == nil && i.Pack != 0 {
		keys = append(keys, backend.MemberKey(i.Pack, ino))
	}
	return append(keys, backend.MetaKey(ino), backend.OrphanKey(ino), backend.VectorKey(ino), backend.LiveKey(ino)), nil
}

// closedInodeKeys is inodeKeys for a closed file, without scanning when
// the inode says where its keys are: its chunks follow from its size, and
// its xattr count says whether there are any to look for.
func (s *Store) closedInodeKeys(i *Inode) ([][]byte, error) {
	if i.legacy || i.Xattrs > 0 || !i.IsReg() {
		return s.inodeKeys(i.Ino)
	}
	if r, err := s.storedRecord(i.Ino); err != nil || r.Version > 1 || r.Lineage != 0 || r.Successor != 0 {
		return s.inodeKeys(i.Ino) // it may have kept old versions
	}
	var keys [][]byte
	if i.Pack != 0 {
		keys = append(keys, backend.MemberKey(i.Pack, i.Ino))
	} else if i.Blob == 0 {
		for c := uint64(0); c*ChunkSize < i.Size; c++ {
			keys = append(keys, backend.ChunkKey(i.chunkID(), uint32(c)))
		}
	}
	return append(keys, backend.MetaKey(i.Ino), backend.OrphanKey(i.Ino), backend.VectorKey(i.Ino), backend.LiveKey(i.Ino)), nil
}

// cleanOrphans frees inodes that were unlinked while open when the last
// process stopped.
func (s *Store) cleanOrphans() error {
	var orphans []uint64
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.OrphanPrefix(), nil, true, func(k, _ []byte) bool {
			orphans = append(orphans, backend.KeyIno(k))
			return true
		})
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.unlock()
	for _, ino := range orphans {
		if err := s.purge(ino); err != nil {
			return fmt.Errorf("freeing orphan inode %d: %w", ino, err)
		}
	}
	return nil
}

// Rmdir removes the empty directory dir/name.
func (s *Store) Rmdir(dir uint64, name string) error {
	return again0(func() error { return s.rmdirOnce(dir, name) })
}

// rmdirOnce is Rmdir, once (again: stale.go).
func (s *Store) rmdirOnce(dir uint64, name string) error {
	if name == "." {
		return syscall.EINVAL
	}
	if name == ".." {
		return syscall.ENOTEMPTY
	}
	s.mu.Lock()
	defer s.unlock()
	ino, mode, err := s.lookup(dir, name)
	if err != nil {
		return err
	}
	if mode&syscall.S_IFMT != syscall.S_IFDIR {
		return syscall.ENOTDIR
	}
	if s.opts.ReadOnly {
		return syscall.EROFS
	}
	if err := s.mayDropName(dir, ino); err != nil {
		return err
	}
	if empty, err := s.isEmpty(ino); err != nil {
		return err
	} else if !empty {
		return syscall.ENOTEMPTY
	}
	p, err := s.editable(dir)
	if err != nil {
		return err
	}
	now := s.now().UnixNano()
	p.Mtime, p.Ctime = now, now
	p.Subdirs--
	err = s.update(func(t backend.Txn) error {
		if err := emptyInStore(t, ino); err != nil {
			return err // another host made an entry in it
		}
		return t.Delete(backend.DirentKey(dir, name))
	}, p)
	if err != nil {
		return err
	}
	s.dcDel(dir, name)
	s.dcDrop(ino)
	return s.purge(ino)
}

// deleteKeys deletes keys (backend.DeleteKeys).
func (s *Store) deleteKeys(keys [][]byte) error { return backend.DeleteKeys(s.kv, keys) }
