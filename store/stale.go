package store

import (
	"errors"
	"slices"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// Namespace changes on a shared store. An operation decides from this
// host's caches (the directory listings, the inodes) and writes in one
// transaction (update). Another host may have changed the same names or
// inodes since; the watch tells this host a moment later. So on a shared
// store the transaction checks, with reads that join its read set (a change
// committed after them makes it conflict and run again), that what the
// operation relied on is still so:
//   - each entry it removes or replaces is there and names the inode this
//     host's listing names, and each name it adds is free if the listing
//     says so (checkedTxn);
//   - each inode it rewrites (an editable copy) has the names, mode,
//     owner, link and xattr counts it had when copied (Inode.base), and
//     it never moves a file's content (Content and Blob are taken from the
//     stored inode: content moves are commits, rebase.go and stage.go);
//   - a directory it removes is empty in the store (rmdir).
//
// If not, the transaction fails with errStale, the caches of what changed
// are brought up to date (catchUp: listings dropped; inodes forgotten,
// or, when this host is writing them, their names and modes refreshed),
// and the operation starts over (again), deciding anew: of a rename and a
// removal of one name at once on two hosts, one succeeds and the other
// finds no such name.

// update writes body and the given inodes (editable copies, see editable)
// in one transaction, and only then installs the copies in the cache.
// Caller holds mu.
func (s *Store) update(body func(t backend.Txn) error, inodes ...*Inode) error {
	var note staleNote
	err := s.kv.Update(func(t backend.Txn) error {
		note = staleNote{}
		var c *checkedTxn
		if s.shared {
			c = &checkedTxn{Txn: t, s: s, note: &note}
			t = c
		}
		if body != nil {
			if err := body(t); err != nil {
				return err
			}
		}
		if c != nil {
			if err := c.verify(inodes); err != nil {
				return err
			}
		}
		for _, i := range inodes {
			if c != nil {
				var err error
				if i, err = c.checkedInode(i); err != nil {
					return err
				}
			}
			if err := putInode(t, i); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errStale) {
		s.catchUp(&note)
	}
	if err != nil {
		return err
	}
	for _, i := range inodes {
		i.base = nil
	}
	s.icMu.Lock()
	for _, i := range inodes {
		s.inodes[i.Ino] = i
	}
	s.icMu.Unlock()
	return nil
}

// editable returns a private copy of an inode for use with update.
func (s *Store) editable(ino uint64) (*Inode, error) {
	i, err := s.inode(ino)
	if err != nil {
		return nil, err
	}
	s.icMu.RLock()
	defer s.icMu.RUnlock()
	c := i.clone()
	if s.shared {
		c.base = i.clone()
	}
	return c, nil
}

var errStale = errors.New("store: another host changed what this change relied on")

// staleNote collects what a failed check found changed.
type staleNote struct {
	dirs   []uint64
	inodes map[uint64]*Inode // the stored inode; nil if removed
}

func (n *staleNote) inode(ino uint64, stored *Inode) error {
	if n.inodes == nil {
		n.inodes = map[uint64]*Inode{}
	}
	n.inodes[ino] = stored
	return errStale
}

func (n *staleNote) dir(dir uint64) error {
	n.dirs = append(n.dirs, dir)
	return errStale
}

// againTries bounds how often an operation starts over on a busy name.
const againTries = 32

// again runs op, starting over while it finds the store changed under it.
func again[T any](op func() (T, error)) (T, error) {
	for try := 0; ; try++ {
		v, err := op()
		if !errors.Is(err, errStale) {
			return v, err
		}
		if try == againTries {
			return v, syscall.EIO
		}
		rebaseWait(try)
	}
}

func again0(op func() error) error {
	_, err := again(func() (struct{}, error) { return struct{}{}, op() })
	return err
}

// checkedTxn checks the entries a shared store's namespace change writes:
// what this host's listing said of each is noted as the body writes it,
// and verify compares it, and the inodes' names and modes, with the store
// in one request (backend.ManyGetter) once the body is done.
type checkedTxn struct {
	backend.Txn
	s       *Store
	note    *staleNote
	entries []entryCheck
}

// entryCheck is what an entry written should be in the store.
type entryCheck struct {
	key       []byte
	mustExist bool // removed or replaced: it must be there
	known     bool // this host has the directory's listing
	cached    bool // the listing has it
	ino       uint64
	// read: the stored entry, read before the write (when the engine
	// cannot read many keys at once at the end: its Get would see the
	// write)
	read        bool
	stored, has []byte
}

// expect notes what this host's listing says of entry k.
func (c *checkedTxn) expect(k []byte, mustExist bool) {
	e := entryCheck{key: append([]byte(nil), k...), mustExist: mustExist}
	c.s.dcMu.RLock()
	if l := c.s.dc[backend.DirentDir(k)]; l != nil {
		var d dirent
		e.known = true
		d, e.cached = l.m[backend.DirentName(k)]
		e.ino = d.ino
	}
	c.s.dcMu.RUnlock()
	if _, many := c.Txn.(backend.ManyGetter); !many {
		v, err := c.Txn.Get(k)
		e.read, e.stored = true, v
		if err == nil {
			e.has = []byte{1}
		}
	}
	c.entries = append(c.entries, e)
}

func (c *checkedTxn) Set(k, v []byte) error {
	if k[0] == backend.PrefixDirent {
		c.expect(k, false)
	}
	return c.Txn.Set(k, v)
}

func (c *checkedTxn) Delete(k []byte) error {
	if k[0] == backend.PrefixDirent {
		c.expect(k, true)
	}
	return c.Txn.Delete(k)
}

// getMany reads keys as stored, in one request when the engine can.
func (c *checkedTxn) getMany(keys [][]byte) ([][]byte, []bool, error) {
	if m, ok := c.Txn.(backend.ManyGetter); ok {
		return m.GetMany(keys)
	}
	vals, found := make([][]byte, len(keys)), make([]bool, len(keys))
	for i, k := range keys {
		v, err := c.Txn.Get(k)
		if err != nil && !errors.Is(err, backend.ErrNotFound) {
			return nil, nil, err
		}
		vals[i], found[i] = v, err == nil
	}
	return vals, found, nil
}

// verify fails with errStale when an entry the body wrote is not as this
// host's listing said, or an inode about to be written no longer has the
// names and mode it was copied with (Inode.base).
func (c *checkedTxn) verify(inodes []*Inode) error {
	keys := make([][]byte, 0, len(c.entries)+len(inodes))
	for _, e := range c.entries {
		if !e.read {
			keys = append(keys, e.key)
		}
	}
	for _, i := range inodes {
		if i.base != nil {
			keys = append(keys, backend.InodeKey(i.Ino))
		}
	}
	var vals [][]byte
	var found []bool
	if len(keys) > 0 {
		var err error
		if vals, found, err = c.getMany(keys); err != nil {
			return err
		}
	}
	k := 0
	for _, e := range c.entries {
		v, has := e.stored, e.has != nil
		if !e.read {
			v, has = vals[k], found[k]
			k++
		}
		stored, _, _ := decodeDirent(v)
		if e.mustExist && !has || e.known && (e.cached != has || e.cached && e.ino != stored) {
			c.note.dir(backend.DirentDir(e.key))
		}
	}
	for _, i := range inodes {
		if i.base == nil {
			continue
		}
		var stored *Inode
		if found[k] {
			var err error
			if stored, err = decodeInode(vals[k]); err != nil {
				return err
			}
		}
		if stored == nil || !sameMeta(stored, i.base) {
			c.note.inode(i.Ino, stored)
		}
		k++
	}
	if len(c.note.dirs) > 0 || len(c.note.inodes) > 0 {
		return errStale
	}
	return nil
}

// sameMeta reports whether a and b agree on what namespace changes
// decide on: names, mode, owner, device, target, subdirectory and xattr
// counts, flags.
func sameMeta(a, b *Inode) bool {
	return a.Mode == b.Mode && a.Uid == b.Uid && a.Gid == b.Gid && a.Rdev == b.Rdev &&
		a.Subdirs == b.Subdirs && a.Target == b.Target && a.Xattrs == b.Xattrs &&
		a.Flags == b.Flags && slices.Equal(a.Links, b.Links)
}

// takeMeta copies what sameMeta compares (and the birth time) from b.
func (a *Inode) takeMeta(b *Inode) {
	a.Mode, a.Uid, a.Gid, a.Rdev, a.Btime = b.Mode, b.Uid, b.Gid, b.Rdev, b.Btime
	a.Subdirs, a.Target, a.Xattrs, a.Flags = b.Subdirs, b.Target, b.Xattrs, b.Flags
	a.Links = slices.Clone(b.Links)
}

// checkedInode is the inode i as a shared store's update writes it: it
// fails if the stored one changed since i was copied, and keeps the stored
// content pointers and size.
func (c *checkedTxn) checkedInode(i *Inode) (*Inode, error) {
	if i.base == nil {
		return i, nil
	}
	stored, err := storedInode(c.Txn, i.Ino) // read by verify: no request
	if err != nil {
		return nil, err
	}
	if stored == nil || !sameMeta(stored, i.base) {
		return nil, c.note.inode(i.Ino, stored)
	}
	w := i.clone()
	w.Content, w.Blob = stored.Content, stored.Blob
	if w.IsReg() {
		// The cached size of a file being written is ahead of the store
		// until the commit: a change of its name, mode or xattrs while
		// it is open must not store that size (the commit would take the
		// file for another host's longer version, and append to it).
		w.Size = stored.Size
	}
	return w, nil
}

// emptyDir fails when directory dir has an entry in the store.
func (c *checkedTxn) emptyDir(dir uint64) error {
	empty := true
	err := c.Txn.Scan(backend.DirentPrefix(dir), nil, true, func(_, _ []byte) bool { empty = false; return false })
	if err != nil {
		return err
	}
	if !empty {
		return c.note.dir(dir)
	}
	return nil
}

// catchUp brings the caches of what n found changed up to date.
// Caller holds mu.
func (s *Store) catchUp(n *staleNote) {
	for _, d := range n.dirs {
		s.dcDrop(d)
	}
	for ino, stored := range n.inodes {
		if stored == nil || s.openState(ino) == nil {
			s.forget(ino)
			continue
		}
		// Written here: the size and times in the cache are ahead of
		// the store; the rest is the store's.
		s.icMu.Lock()
		if i := s.inodes[ino]; i != nil {
			i.takeMeta(stored)
		}
		s.icMu.Unlock()
	}
}

// emptyInStore, in an update's body on a shared store, fails with errStale
// when directory dir has an entry in the store.
func emptyInStore(t backend.Txn, dir uint64) error {
	if c, ok := t.(*checkedTxn); ok {
		return c.emptyDir(dir)
	}
	return nil
}
