package views

import (
	"container/heap"
	"maps"
)

// entrySet is the catalog's entries by inode: a snapshot's (base, decoded
// as they are asked for) under the entries put or removed since (over; a
// removed one's nil). Entries are never changed once in it: a change puts
// a new one. Guarded by catalog.mu (readers may share it; only the worker
// writes).
type entrySet struct {
	base *catBase
	over map[uint64]*Entry
	n    int
	muts uint64 // counts the sets and dels
}

func newEntrySet() entrySet { return entrySet{over: map[uint64]*Entry{}} }

// entriesOf is the entries of a snapshot's base, with none put since.
func entriesOf(base *catBase) entrySet {
	s := newEntrySet()
	s.base, s.n = base, len(base.inos)
	return s
}

// image is what a snapshot keeps of the set: its base, a copy of the
// entries put or removed since, and the count of changes.
func (c *entrySet) image() (*catBase, map[uint64]*Entry, uint64) {
	return c.base, maps.Clone(c.over), c.muts
}

// mutations counts the entries put and removed.
func (c *entrySet) mutations() uint64 { return c.muts }

// get is the entry of ino, nil if none.
func (c *entrySet) get(ino uint64) *Entry {
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
func (c *entrySet) has(ino uint64) bool {
	if ent, ok := c.over[ino]; ok {
		return ent != nil
	}
	return c.base != nil && c.base.find(ino) >= 0
}

// set puts ent, replacing the entry of its inode.
func (c *entrySet) set(ent *Entry) {
	if !c.has(ent.Ino) {
		c.n++
	}
	c.muts++
	c.over[ent.Ino] = ent
}

// del removes the entry of ino.
func (c *entrySet) del(ino uint64) {
	ent, inOver := c.over[ino]
	inBase := c.base != nil && c.base.find(ino) >= 0
	if inOver && ent == nil || !inOver && !inBase {
		return // none
	}
	c.n--
	c.muts++
	if inBase {
		c.over[ino] = nil
	} else {
		delete(c.over, ino)
	}
}

// len is the number of entries.
func (c *entrySet) len() int { return c.n }

// each calls fn for every entry until it returns false: the base's in
// inode order (decoded, not kept), then over's.
func (c *entrySet) each(fn func(*Entry) bool) {
	c.eachSince(func() (int64, bool) { return 0, false }, fn)
}

// eachSince is each, but leaves out, without decoding them, the base's
// entries whose Modified is before the time since gives (modKey; ok
// false: none yet), asked again before each.
func (c *entrySet) eachSince(since func() (int64, bool), fn func(*Entry) bool) {
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

// newestMod is the n-th newest modification time (modKey) among the
// base's entries that over does not shadow and skip leaves out, read from
// the mods column alone; ok is false when there are fewer than n.
func (c *entrySet) newestMod(n int, skip func(uint64) bool) (int64, bool) {
	b := c.base
	if b == nil || n <= 0 {
		return 0, false
	}
	h := make(modHeap, 0, n)
	for i, ino := range b.inos {
		m := b.mods[i]
		if len(h) == n && m <= h[0] {
			continue
		}
		if _, ok := c.over[ino]; ok || skip(ino) {
			continue
		}
		if len(h) < n {
			heap.Push(&h, m)
		} else {
			h[0] = m
			heap.Fix(&h, 0)
		}
	}
	if len(h) < n {
		return 0, false
	}
	return h[0], true
}

// modHeap is a min-heap of modification times.
type modHeap []int64

func (h modHeap) Len() int           { return len(h) }
func (h modHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h modHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *modHeap) Push(v any)        { *h = append(*h, v.(int64)) }
func (h *modHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// eachIno calls fn for the inode of every entry.
func (c *entrySet) eachIno(fn func(uint64)) {
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
