package store

import (
	"syscall"
)

// AttrChange is a Setattr request; nil fields are left alone.
type AttrChange struct {
	Mode         *uint32 // permission bits only
	Uid, Gid     *uint32
	Size         *uint64
	Atime, Mtime *int64 // unix ns
	// Now: the times given are the current time (utimes with none),
	// which an append-only file allows.
	Now bool
}

// SetAttr applies c to ino and returns the new attributes.
func (s *Store) SetAttr(ino uint64, c AttrChange) (Inode, error) {
	return again(func() (Inode, error) { return s.setAttrOnce(ino, c) })
}

// setAttrOnce is SetAttr, once (again: stale.go).
func (s *Store) setAttrOnce(ino uint64, c AttrChange) (Inode, error) {
	if f := s.flagsOf(ino); f&FlagImmutable != 0 && (c.Size != nil || c.Mode != nil || c.Uid != nil || c.Gid != nil || c.Atime != nil || c.Mtime != nil) ||
		f&FlagAppend != 0 && (c.Size != nil || c.Mode != nil || c.Uid != nil || c.Gid != nil || (c.Atime != nil || c.Mtime != nil) && !c.Now) {
		return Inode{}, syscall.EPERM
	}
	if c.Size != nil {
		// Through Truncate, which holds a handle while it works: the open
		// state of a file whose last handle is being released must not
		// be changed unregistered (the change would never be committed).
		if err := s.Truncate(ino, *c.Size); err != nil {
			return Inode{}, err
		}
	}
	if c.Mode == nil && c.Uid == nil && c.Gid == nil && c.Atime == nil && c.Mtime == nil {
		return s.Attr(ino)
	}
	if c.Atime != nil || c.Mtime != nil {
		// A file the kernel writes itself (a passthrough session): what
		// it wrote before these times is taken in first, and the content
		// file is given them too, or taking it in later (ptSync) would
		// put the time of those writes back (cp -a, tar x: the times are
		// set before the close).
		if f := s.openState(ino); f != nil && f.sess.Load() != nil {
			f.mu.Lock()
			defer f.mu.Unlock()
			s.ptSync(f)
			defer s.ptTimes(f)
		}
	}
	s.mu.Lock()
	defer s.unlock()
	if err := s.mayChange(ino); err != nil {
		return Inode{}, err
	}
	i, err := s.editable(ino)
	if err != nil {
		return Inode{}, err
	}
	if c.Mode != nil {
		i.Mode = i.Mode&syscall.S_IFMT | *c.Mode&0o7777
	}
	if c.Uid != nil {
		i.Uid = *c.Uid
	}
	if c.Gid != nil {
		i.Gid = *c.Gid
	}
	if c.Atime != nil {
		i.Atime = *c.Atime
	}
	if c.Mtime != nil {
		i.Mtime = *c.Mtime
	}
	i.Ctime = s.now().UnixNano()
	if err := s.update(nil, i); err != nil {
		return Inode{}, err
	}
	return *i.clone(), nil
}

// Birth returns when the node i was created, in unix ns: for a memory,
// its created time (the front matter's `created`, or the inode's birth,
// which a save carries on), as user.mnemofs.created shows it.
func (s *Store) Birth(i *Inode) int64 {
	if !i.IsReg() {
		return i.Btime
	}
	if r, err := s.record(i.Ino); err == nil && r.Meta.Created != nil {
		return r.Meta.Created.UnixNano()
	}
	return i.Btime
}
