package views

// catalog is the catalog's entries by inode: a snapshot's (base, decoded
// as they are asked for) under the entries put or removed since (over; a
// removed one's nil). Entries are never changed once in it: a change puts
// a new one. Guarded by Engine.mu (readers may share it; only the worker
// writes).
type catalog struct {
	base *catBase
	over map[uint64]*Entry
	n    int
	muts uint64 // counts the sets and dels
}

func newCatalog() catalog { return catalog{over: map[uint64]*Entry{}} }

// get is the entry of ino, nil if none.
func (c *catalog) get(ino uint64) *Entry {
	if ent, ok := c.over[ino]; ok {
		return ent
	}
	if c.base != nil {
		if i := c.base.find(ino); i >= 0 {
			return c.base.entry(i)
		}
	}
	return nil
}

// has reports whether ino has an entry.
func (c *catalog) has(ino uint64) bool {
	if ent, ok := c.over[ino]; ok {
		return ent != nil
	}
	return c.base != nil && c.base.find(ino) >= 0
}

// set puts ent, replacing the entry of its inode.
func (c *catalog) set(ent *Entry) {
	if !c.has(ent.Ino) {
		c.n++
	}
	c.muts++
	c.over[ent.Ino] = ent
}

// del removes the entry of ino.
func (c *catalog) del(ino uint64) {
	if !c.has(ino) {
		return
	}
	c.n--
	c.muts++
	if c.base != nil && c.base.find(ino) >= 0 {
		c.over[ino] = nil
	} else {
		delete(c.over, ino)
	}
}

// len is the number of entries.
func (c *catalog) len() int { return c.n }

// each calls fn for every entry until it returns false: the base's in
// inode order (decoded, not kept), then over's.
func (c *catalog) each(fn func(*Entry) bool) {
	c.eachSince(func() (int64, bool) { return 0, false }, fn)
}

// eachSince is each, but leaves out, without decoding them, the base's
// entries whose Modified is before the time since gives (modKey; ok
// false: none yet), asked again before each.
func (c *catalog) eachSince(since func() (int64, bool), fn func(*Entry) bool) {
	if b := c.base; b != nil {
		for i, ino := range b.inos {
			if m, ok := since(); ok && b.mods[i] < m {
				continue
			}
			if _, ok := c.over[ino]; ok {
				continue
			}
			ent, ok := b.cache.Peek(ino)
			if !ok {
				ent, _ = b.decode(ino, b.record(i))
			}
			if ent != nil && !fn(ent) {
				return
			}
		}
	}
	for _, ent := range c.over {
		if ent != nil && !fn(ent) {
			return
		}
	}
}

// eachIno calls fn for the inode of every entry.
func (c *catalog) eachIno(fn func(uint64)) {
	if b := c.base; b != nil {
		for _, ino := range b.inos {
			if _, ok := c.over[ino]; !ok {
				fn(ino)
			}
		}
	}
	for ino, ent := range c.over {
		if ent != nil {
			fn(ino)
		}
	}
}
