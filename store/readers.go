package store

import (
	"slices"
	"sync"
)

// Readers: what a local user other than the mount's owner may see through
// generated files (a mount with --allow-other). The kernel checks every
// real node's mode for them (default_permissions); generated files mix
// many memories, so the layer above computes them for the reader, keeping
// only the memories ReadableBy allows: POSIX read permission on the file
// and search permission on every directory above it, as an open(2) of its
// path by that user would need.

// Cred is a reader's identity: user, primary group and every other group.
type Cred struct {
	Uid    uint32
	Gid    uint32
	Groups []uint32
}

func (c *Cred) inGroup(gid uint32) bool { return c.Gid == gid || slices.Contains(c.Groups, gid) }

// permits reports whether c has every bit of want (4 read, 2 write, 1
// search) on a node with this mode, owner and group (root has them all).
func (c *Cred) permits(mode, uid, gid, want uint32) bool {
	if c.Uid == 0 {
		return true
	}
	var bits uint32
	switch {
	case c.Uid == uid:
		bits = mode >> 6
	case c.inGroup(gid):
		bits = mode >> 3
	default:
		bits = mode
	}
	return bits&want == want
}

// ReadableBy returns a predicate telling whether c may read the memory
// ino. It remembers the directories it has looked at, so one predicate
// serves one request (a listing, a search): make a new one for the next,
// since modes change.
func (s *Store) ReadableBy(c Cred) func(ino uint64) bool {
	var mu sync.Mutex
	dirs := map[uint64]bool{RootIno: true}
	var searchable func(dir uint64, depth int) bool
	searchable = func(dir uint64, depth int) bool {
		mu.Lock()
		ok, seen := dirs[dir]
		mu.Unlock()
		if seen {
			return ok
		}
		ok = false
		if d, err := s.Attr(dir); err == nil && d.IsDir() && len(d.Links) > 0 && depth < 4096 &&
			c.permits(d.Mode, d.Uid, d.Gid, 1) {
			ok = searchable(d.Links[0].Parent, depth+1)
		}
		mu.Lock()
		dirs[dir] = ok
		mu.Unlock()
		return ok
	}
	root, err := s.Attr(RootIno)
	if err != nil || !c.permits(root.Mode, root.Uid, root.Gid, 1) {
		return func(uint64) bool { return false }
	}
	return func(ino uint64) bool {
		i, err := s.Attr(ino)
		if err != nil || len(i.Links) == 0 || !c.permits(i.Mode, i.Uid, i.Gid, 4) {
			return false
		}
		// Any of its names will do, as for open(2) of that path.
		for _, l := range i.Links {
			if searchable(l.Parent, 0) {
				return true
			}
		}
		return false
	}
}
