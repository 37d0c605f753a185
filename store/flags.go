package store

import (
	"syscall"

	"github.com/mnemofs/mnemofs/store/internal/blobfs"
)

// Inode flags (chattr; FS_IOC_SETFLAGS): the two that a disk enforces
// for every caller, root included, kept in the inode (Inode.Flags).
//
//   - FlagImmutable: nothing changes: content, attributes, xattrs, its
//     names (no unlink, rename or link); a directory takes no new names
//     and loses none.
//   - FlagAppend: content only grows at the end (writes of an O_APPEND
//     open); no truncation, no attribute or xattr change but times set
//     to now, no unlink or rename; a directory takes new names but loses
//     none.
//
// Who may set or clear them (the owner, with CAP_LINUX_IMMUTABLE) is the
// kernel's check, made before it asks. Maintenance leaves such memories
// where they are.
const (
	FlagImmutable = 0x10 // FS_IMMUTABLE_FL
	FlagAppend    = 0x20 // FS_APPEND_FL
	flagsKnown    = FlagImmutable | FlagAppend
)

// SetFlags sets the flags of ino: EOPNOTSUPP for any but FlagImmutable
// and FlagAppend.
func (s *Store) SetFlags(ino uint64, flags uint32) (Inode, error) {
	i, err := again(func() (Inode, error) { return s.setFlagsOnce(ino, flags) })
	if err == nil {
		s.mirrorFlags(ino)
	}
	return i, err
}

// mirrorFlags gives the content file of a passthrough session of ino the
// inode's flags: the kernel writes that file itself, so only the disk
// below can refuse its writes (a descriptor opened before chattr +i). The
// session's end takes them off again (endSession). Called with no lock
// held.
func (s *Store) mirrorFlags(ino uint64) {
	s.filesMu.Lock()
	var f *openFile
	if w := s.writes[ino]; w != nil && w.phase != phaseEnding {
		f = w.f
	}
	s.filesMu.Unlock()
	if f == nil || f.sess.Load() == nil {
		s.unmirrorFlags(ino)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sess := f.sess.Load()
	if sess == nil || f.blob == nil {
		return
	}
	fl := s.flagsOf(ino) & flagsKnown
	if err := blobfs.SetFlags(f.blob, fl); err != nil {
		s.log.Printf("flags of inode %d's content file: %v (writes already open may pass them)", ino, err)
		return
	}
	sess.flags = fl
}

// setFlagsOnce is SetFlags, once (again: stale.go).
func (s *Store) setFlagsOnce(ino uint64, flags uint32) (Inode, error) {
	if flags&^flagsKnown != 0 {
		return Inode{}, syscall.EOPNOTSUPP
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
	if i.Flags != flags {
		i.Flags = flags
		i.Ctime = s.now().UnixNano()
		if err := s.update(nil, i); err != nil {
			return Inode{}, err
		}
	}
	return *i.clone(), nil
}

// flagsOf returns the flags of ino (0 when it cannot be read: the
// operation then meets the error itself).
func (s *Store) flagsOf(ino uint64) uint32 {
	i, err := s.inode(ino)
	if err != nil {
		return 0
	}
	s.icMu.RLock()
	defer s.icMu.RUnlock()
	return i.Flags
}

// pinned returns EPERM when ino is immutable or append-only: its
// attributes, xattrs, size and names are fixed.
func (s *Store) pinned(ino uint64) error {
	if s.flagsOf(ino)&(FlagImmutable|FlagAppend) != 0 {
		return syscall.EPERM
	}
	return nil
}

// mayWrite returns EPERM when ino may not be written: immutable, or
// append-only and the write is not an append.
func (s *Store) mayWrite(ino uint64, appends bool) error {
	f := s.flagsOf(ino)
	if f&FlagImmutable != 0 || f&FlagAppend != 0 && !appends {
		return syscall.EPERM
	}
	return nil
}

// MayOpen returns EPERM when an open of ino to write (appends: with
// O_APPEND) is refused by its flags, as the kernel refuses it on a disk.
func (s *Store) MayOpen(ino uint64, appends bool) error { return s.mayWrite(ino, appends) }

// mayAddName returns EPERM when the directory dir takes no new name
// (immutable).
func (s *Store) mayAddName(dir uint64) error {
	if s.flagsOf(dir)&FlagImmutable != 0 {
		return syscall.EPERM
	}
	return nil
}

// mayDropName returns EPERM when dir/name may not go: the directory or
// the node it names is immutable or append-only.
func (s *Store) mayDropName(dir, ino uint64) error {
	if err := s.pinned(dir); err != nil {
		return err
	}
	return s.pinned(ino)
}

// flagsAllowRename returns EPERM when the flags of the nodes a rename
// touches forbid it: the moved node, the one it replaces (or exchanges
// with), the directory it leaves, and the one it enters. Caller holds mu.
func (s *Store) flagsAllowRename(oldDir uint64, oldName string, newDir uint64, newName string, flags uint32) error {
	src, _, err := s.lookup(oldDir, oldName)
	if err != nil {
		return nil // the rename's own error
	}
	if err := s.mayDropName(oldDir, src); err != nil {
		return err
	}
	if err := s.mayAddName(newDir); err != nil {
		return err
	}
	if dst, _, err := s.lookup(newDir, newName); err == nil {
		return s.mayDropName(newDir, dst)
	}
	return nil
}

// unmirrorFlags takes the flags off ino's committed content file once the
// inode has none: a session a crash cut short may have left them there.
func (s *Store) unmirrorFlags(ino uint64) {
	i, err := s.inode(ino)
	if err != nil || s.blobs == nil {
		return
	}
	s.icMu.RLock()
	gen, flags := i.Blob, i.Flags
	s.icMu.RUnlock()
	if gen == 0 || flags != 0 {
		return
	}
	if bf, err := s.blobs.Open(ino, gen); err == nil {
		blobfs.SetFlags(bf, 0)
		bf.Close()
	}
}
