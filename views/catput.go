package views

// The catalog's changes. Only the worker makes them (the indexer as it
// applies changes, the persister as it loads or swaps a snapshot in), so
// a method here may read the catalog before it takes the lock to change
// it: nothing else changes it meanwhile. Every change bumps the
// generation, after the catalog changed.

// put replaces the catalog entry of ent.Ino (if any) with ent, indexed as
// hidden or not.
func (c *catalog) put(ent *Entry, hidden bool) {
	c.mu.Lock()
	c.putLocked(ent, hidden)
	c.gen++
	c.mu.Unlock()
}

// putLocked is put without the generation. Caller holds mu for writing.
func (c *catalog) putLocked(ent *Entry, hidden bool) {
	if old := c.ents.get(ent.Ino); old != nil {
		c.unindex(old, c.hidden[ent.Ino])
	}
	c.ents.set(ent)
	c.index(ent, hidden)
	if hidden {
		c.hidden[ent.Ino] = true
	} else {
		delete(c.hidden, ent.Ino)
	}
}

// putGrown replaces old, the entry of a log that grew at its end, with
// ent: the facets change only when its values did (refacet). old nil:
// the log is not in the catalog, and only the generation changes.
func (c *catalog) putGrown(old, ent *Entry, refacet bool) {
	c.mu.Lock()
	if old != nil {
		if refacet {
			c.putLocked(ent, c.hidden[ent.Ino])
		} else {
			c.ents.set(ent)
		}
	}
	c.gen++
	c.mu.Unlock()
}

// remove drops the catalog entry of ino.
func (c *catalog) remove(ino uint64) {
	c.mu.Lock()
	if old := c.ents.get(ino); old != nil {
		c.unindex(old, c.hidden[ino])
	}
	c.ents.del(ino)
	delete(c.hidden, ino)
	c.gen++
	c.mu.Unlock()
}

// bump changes the generation alone: what the views show changed, not
// an entry (a move).
func (c *catalog) bump() {
	c.mu.Lock()
	c.gen++
	c.mu.Unlock()
}

// moved notes a move applied: the directories' paths are looked up again.
func (c *catalog) moved() { c.paths.moved() }

// reset empties the catalog and everything derived from it, for a build.
func (c *catalog) reset() {
	c.mu.Lock()
	c.resetLocked()
	c.built = false
	c.gen++
	c.mu.Unlock()
}

// resetLocked is reset of the entries and facets alone. Caller holds mu
// for writing (or owns c alone).
func (c *catalog) resetLocked() {
	c.ents = newEntrySet()
	c.hidden = map[uint64]bool{}
	c.facets = newFacets()
}

// markBuilt notes that the catalog holds every memory (a build or a load
// finished), and returns its generation then.
func (c *catalog) markBuilt() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.built = true
	return c.gen
}

// genBuilt is the generation, and whether the catalog holds every memory.
func (c *catalog) genBuilt() (uint64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen, c.built
}

// rehide decides again, after directories moved, which memories are
// hidden. It reads the catalog without the lock (the worker is its only
// writer); the paths of the directories come from the memo, one lookup
// per directory.
func (c *catalog) rehide() {
	c.scans.Add(1)
	var flip []*Entry
	c.ents.each(func(ent *Entry) bool {
		if c.hiddenAt(ent.parent, ent.name) != c.hidden[ent.Ino] {
			flip = append(flip, ent)
		}
		return true
	})
	if len(flip) == 0 {
		return
	}
	c.mu.Lock()
	for _, ent := range flip {
		c.putLocked(ent, !c.hidden[ent.Ino])
	}
	c.gen++
	c.mu.Unlock()
}
