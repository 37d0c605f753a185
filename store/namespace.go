package store

import (
	"errors"
	"path"
	"strings"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// Dirent is one directory entry.
type Dirent struct {
	Name string
	Ino  uint64
	Mode uint32
}

// EmptySHA256 is the SHA-256 of no bytes.
const EmptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Owner is who creates a node.
type Owner struct{ Uid, Gid uint32 }

func checkName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return syscall.EINVAL
	case len(name) > NameMax:
		return syscall.ENAMETOOLONG
	case strings.ContainsAny(name, "/\x00"):
		return syscall.EINVAL
	}
	return nil
}

// Lookup finds name in directory dir.
func (s *Store) Lookup(dir uint64, name string) (Inode, error) {
	if len(name) > NameMax {
		return Inode{}, syscall.ENAMETOOLONG
	}
	ino, _, err := s.lookup(dir, name)
	if err != nil {
		return Inode{}, err
	}
	if !s.Visible(ino) {
		return Inode{}, syscall.ENOENT
	}
	return s.Attr(ino)
}

// newNode creates a node named name in dir. Caller holds mu.
func (s *Store) newNode(dir uint64, name string, mode uint32, own Owner, target string, extra func(t backend.Txn, i *Inode) error) (*Inode, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if dir == RootIno && s.opts.Reserved[name] {
		return nil, syscall.EEXIST
	}
	if err := s.space.need(len(name) + len(target) + 256); err != nil {
		return nil, err
	}
	p, err := s.editable(dir)
	if err != nil {
		return nil, err
	}
	if !p.IsDir() {
		return nil, syscall.ENOTDIR
	}
	if len(p.Links) == 0 && p.Ino != RootIno {
		return nil, syscall.ENOENT // removed directory
	}
	if p.Flags&FlagImmutable != 0 {
		return nil, syscall.EPERM
	}
	if _, _, err := s.lookup(dir, name); err == nil {
		if s.hiddenName(dir, name) {
			return nil, syscall.EACCES
		}
		return nil, syscall.EEXIST
	} else if !errors.Is(err, syscall.ENOENT) {
		return nil, err
	}
	ino, err := s.allocIno()
	if err != nil {
		return nil, err
	}
	now := s.now().UnixNano()
	i := &Inode{Ino: ino, Mode: mode, Uid: own.Uid, Gid: own.Gid, Atime: now, Mtime: now,
		Ctime: now, Btime: now, Links: []Link{{dir, name}}, Target: target}
	if target != "" {
		i.Size = uint64(len(target))
	}
	if p.Mode&syscall.S_ISGID != 0 {
		// BSD group semantics in a setgid directory, as on any Linux disk:
		// the new node takes the directory's group, a new directory its bit.
		i.Gid = p.Gid
		if i.IsDir() {
			i.Mode |= syscall.S_ISGID
		}
	}
	p.Mtime, p.Ctime = now, now
	if i.IsDir() {
		p.Subdirs++
	}
	err = s.update(func(t backend.Txn) error {
		if s.shared {
			if err := sharedCreate(t, dir, name, p, now, i.IsDir()); err != nil {
				return err
			}
		}
		if extra != nil {
			if err := extra(t, i); err != nil {
				return err
			}
		}
		if err := putInode(t, i); err != nil { // extra may have changed it
			return err
		}
		return t.Set(backend.DirentKey(dir, name), encodeDirent(ino, mode))
	}, p)
	if errors.Is(err, syscall.EEXIST) {
		s.dcDrop(dir) // another host made it: look again
	}
	if err != nil {
		return nil, err
	}
	s.dcSet(dir, name, ino, mode)
	s.icMu.Lock()
	s.inodes[ino] = i
	s.icMu.Unlock()
	return i.clone(), nil
}

// Create makes an empty regular file, belonging to the store's user. At a
// name a memory left a moment ago, the new file goes on with that memory
// (saves.go).
func (s *Store) Create(dir uint64, name string, perm uint32, own Owner) (Inode, error) {
	return again(func() (Inode, error) { return s.createOnce(dir, name, perm, own) })
}

// createOnce is Create, once (again: stale.go).
func (s *Store) createOnce(dir uint64, name string, perm uint32, own Owner) (Inode, error) {
	if v := s.peekVacancy(dir, name); v != 0 {
		s.quieten(v)
	}
	s.mu.Lock()
	defer s.unlock()
	rec := Record{SHA256: EmptySHA256, Owner: s.opts.User}
	old, oldRec := s.reclaim(dir, name)
	var r redo
	i, err := s.newNode(dir, name, syscall.S_IFREG|perm&0o7777, own, "", func(t backend.Txn, i *Inode) error {
		if old != nil {
			dp, err := s.Path(dir)
			if err != nil {
				return err
			}
			return s.handOver(t, path.Join(dp, name), old, oldRec, i, &rec, false, &r)
		}
		return putRecord(t, i.Ino, &rec)
	})
	if old != nil {
		s.recs.Forget(old.Ino) // handOver's record, now committed (or not)
	}
	if err != nil {
		return Inode{}, err
	}
	if old != nil && s.inTrash(old) {
		// Removed and written anew (git checkout): its bytes are the
		// previous version now, not a stray in the trash.
		l := old.Links[0]
		if err := s.unlink(l.Parent, l.Name, old); err == nil {
			s.notifyEntry(l.Parent, l.Name)
		}
	}
	s.recs.Set(i.Ino, rec)  // the commit and the unlink that often follow read it
	s.event(Changed, i.Ino) // a new memory, even if nothing is ever written
	return *i, nil
}

// Mkdir makes a directory.
func (s *Store) Mkdir(dir uint64, name string, perm uint32, own Owner) (Inode, error) {
	return again(func() (Inode, error) { return s.mkdirOnce(dir, name, perm, own) })
}

// mkdirOnce is Mkdir, once (again: stale.go).
func (s *Store) mkdirOnce(dir uint64, name string, perm uint32, own Owner) (Inode, error) {
	s.mu.Lock()
	defer s.unlock()
	i, err := s.newNode(dir, name, syscall.S_IFDIR|perm&0o7777, own, "", nil)
	if err != nil {
		return Inode{}, err
	}
	return *i, nil
}

// Mknod makes a special file (FIFO, socket, device).
func (s *Store) Mknod(dir uint64, name string, mode, rdev uint32, own Owner) (Inode, error) {
	return again(func() (Inode, error) { return s.mknodOnce(dir, name, mode, rdev, own) })
}

// mknodOnce is Mknod, once (again: stale.go).
func (s *Store) mknodOnce(dir uint64, name string, mode, rdev uint32, own Owner) (Inode, error) {
	s.mu.Lock()
	defer s.unlock()
	i, err := s.newNode(dir, name, mode, own, "", func(_ backend.Txn, i *Inode) error {
		i.Rdev = rdev
		return nil
	})
	if err != nil {
		return Inode{}, err
	}
	return *i, nil
}

// Symlink makes a symbolic link to target.
func (s *Store) Symlink(dir uint64, name, target string, own Owner) (Inode, error) {
	return again(func() (Inode, error) { return s.symlinkOnce(dir, name, target, own) })
}

// symlinkOnce is Symlink, once (again: stale.go).
func (s *Store) symlinkOnce(dir uint64, name, target string, own Owner) (Inode, error) {
	if target == "" {
		return Inode{}, syscall.ENOENT
	}
	if len(target) > 4095 {
		return Inode{}, syscall.ENAMETOOLONG
	}
	s.mu.Lock()
	defer s.unlock()
	i, err := s.newNode(dir, name, syscall.S_IFLNK|0o777, own, target, nil)
	if err != nil {
		return Inode{}, err
	}
	return *i, nil
}

// Readlink returns a symlink's target.
func (s *Store) Readlink(ino uint64) (string, error) {
	i, err := s.Attr(ino)
	if err != nil {
		return "", err
	}
	if i.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		return "", syscall.EINVAL
	}
	return i.Target, nil
}

// Link adds the name dir/name for the existing inode ino.
func (s *Store) Link(ino, dir uint64, name string) (Inode, error) {
	return again(func() (Inode, error) { return s.linkOnce(ino, dir, name) })
}

// linkOnce is Link, once (again: stale.go).
func (s *Store) linkOnce(ino, dir uint64, name string) (Inode, error) {
	if err := checkName(name); err != nil {
		return Inode{}, err
	}
	s.mu.Lock()
	defer s.unlock()
	if dir == RootIno && s.opts.Reserved[name] {
		return Inode{}, syscall.EEXIST
	}
	i, err := s.editable(ino)
	if err != nil {
		return Inode{}, err
	}
	if i.IsDir() {
		return Inode{}, syscall.EPERM
	}
	tmpfile := len(i.Links) == 0 && s.tmpfiles[ino]
	if len(i.Links) == 0 && !tmpfile {
		return Inode{}, syscall.ENOENT
	}
	p, err := s.editable(dir)
	if err != nil {
		return Inode{}, err
	}
	if _, _, err := s.lookup(dir, name); err == nil {
		if s.hiddenName(dir, name) {
			return Inode{}, syscall.EACCES
		}
		return Inode{}, syscall.EEXIST
	}
	if err := s.mayChange(ino); err != nil {
		return Inode{}, err
	}
	if err := s.pinned(ino); err != nil {
		return Inode{}, err
	}
	if err := s.mayAddName(dir); err != nil {
		return Inode{}, err
	}
	now := s.now().UnixNano()
	i.addLink(dir, name)
	i.Ctime = now
	p.Mtime, p.Ctime = now, now
	err = s.update(func(t backend.Txn) error {
		if tmpfile {
			if err := t.Delete(backend.OrphanKey(ino)); err != nil {
				return err
			}
		}
		return t.Set(backend.DirentKey(dir, name), encodeDirent(ino, i.Mode))
	}, i, p)
	if err == nil {
		s.dcSet(dir, name, ino, i.Mode)
		if tmpfile {
			delete(s.tmpfiles, ino)
			s.event(Changed, ino) // a new memory
		} else {
			s.event(Moved, ino) // one more name
		}
	}
	return *i, err
}

// Path returns the canonical path of ino ("/episodic/a.md"), following its
// first link up to the root.
func (s *Store) Path(ino uint64) (string, error) {
	return s.pathFrom(ino, nil)
}

// pathOf is the path of the node i (Path without reading i again).
func (s *Store) pathOf(i *Inode) (string, error) {
	if i.Ino == RootIno {
		return "/", nil
	}
	if len(i.Links) == 0 {
		return "", syscall.ENOENT
	}
	return s.pathFrom(i.Links[0].Parent, []string{i.Links[0].Name})
}

// pathFrom is the path of ino followed by parts (innermost first).
func (s *Store) pathFrom(ino uint64, parts []string) (string, error) {
	for n := 0; ino != RootIno; n++ {
		if n > 4096 {
			return "", syscall.ELOOP
		}
		i, err := s.inode(ino)
		if err != nil {
			return "", err
		}
		s.icMu.RLock()
		if len(i.Links) == 0 {
			s.icMu.RUnlock()
			return "", syscall.ENOENT
		}
		l := i.Links[0]
		s.icMu.RUnlock()
		parts = append(parts, l.Name)
		ino = l.Parent
	}
	var b strings.Builder
	for k := len(parts) - 1; k >= 0; k-- {
		b.WriteByte('/')
		b.WriteString(parts[k])
	}
	if b.Len() == 0 {
		return "/", nil
	}
	return b.String(), nil
}

// Resolve finds the inode at a slash-separated path relative to the root.
// Symlinks are not followed.
func (s *Store) Resolve(p string) (uint64, error) {
	ino := uint64(RootIno)
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			return 0, syscall.EINVAL
		}
		next, _, err := s.lookup(ino, part)
		if err != nil {
			return 0, err
		}
		ino = next
	}
	return ino, nil
}

// mkdirAll makes the directories of p (relative to the root) and returns the
// last one. Caller holds mu.
func (s *Store) mkdirAll(p string, own Owner) (uint64, error) {
	ino := uint64(RootIno)
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." {
			continue
		}
		next, mode, err := s.lookup(ino, part)
		switch {
		case err == nil && mode&syscall.S_IFMT != syscall.S_IFDIR:
			return 0, syscall.ENOTDIR
		case errors.Is(err, syscall.ENOENT):
			i, err := s.newNode(ino, part, syscall.S_IFDIR|0o755, own, "", nil)
			if err != nil {
				return 0, err
			}
			next = i.Ino
		case err != nil:
			return 0, err
		}
		ino = next
	}
	return ino, nil
}

// ValidName reports whether name can be a directory entry.
func ValidName(name string) bool { return checkName(name) == nil }
