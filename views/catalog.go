package views

import (
	"context"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// catalog is what the views know of every memory: its Entry, the facets
// (which memories carry each user, type, tag and day), which are hidden
// from the unfiltered views, and the caches derived from them (recent/,
// DirsWith). Its lock, mu, guards all of it but the path memo (paths,
// which has its own) and the scan count; readers share it, and only the
// worker (the indexer, the persister's load and swap) changes the
// catalog. No method waits for the worker's queue: Engine does (Ready)
// before it reads.
type catalog struct {
	src Source // set by Engine.Start, before the worker runs

	mu   sync.RWMutex
	ents entrySet
	// gen changes whenever the catalog does.
	gen uint64
	// built: the catalog holds every memory (a build or a load has
	// finished and no rebuild is under way), so a snapshot may be made.
	built bool
	// facets: the memories of each user, type, tag and day (facets.go);
	// hidden: the memories the unfiltered views leave out (archived).
	facets [nFields]facet
	hidden map[uint64]bool
	// recent: Recent(recentN, Filter{}) as of generation recentGen.
	recent    []uint64
	recentN   int
	recentGen uint64
	// dirsCache: for a filter key, the directories holding a match.
	dirsCache map[string]dirSet

	// scans counts walks over the whole catalog (CatalogScans).
	scans atomic.Uint64
	// paths is the memo of directory paths (paths.go).
	paths dirPaths
}

type dirSet struct {
	gen  uint64
	dirs map[uint64]bool
}

func newCatalog() *catalog {
	c := &catalog{dirsCache: map[string]dirSet{}}
	c.resetLocked()
	return c
}

// bind gives the catalog the store it reads paths and inodes from.
func (c *catalog) bind(src Source) {
	c.src = src
	c.paths.bind(src)
}

// generation is the catalog's generation.
func (c *catalog) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// entry returns the catalog entry of ino (nil if not a memory).
func (c *catalog) entry(ino uint64) *Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ents.get(ino)
}

// has reports whether ino is in the catalog.
func (c *catalog) has(ino uint64) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ents.has(ino)
}

// size is the number of memories in the catalog.
func (c *catalog) size() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ents.len()
}

// eachIno calls fn for every memory in the catalog.
func (c *catalog) eachIno(fn func(ino uint64)) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	c.ents.eachIno(fn)
}

// values is Engine.Values, without waiting.
func (c *catalog) values(field string, f Filter) []string {
	fi, ok := fieldIndex(field)
	if !ok {
		return []string{}
	}
	if f.isZero() {
		return c.listing(fi)
	}
	seen := map[string]bool{}
	for _, ent := range c.candidatesOf(f) {
		if !c.match(ent, f) {
			continue
		}
		ent.each(fi, func(v string) {
			if listable(fi, v) {
				seen[v] = true
			}
		})
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// candidatesOf is candidates(f), taking the lock: a walk over the
// memories of the smallest value set f names, over all only when it
// names none (counted in CatalogScans then).
func (c *catalog) candidatesOf(f Filter) []*Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.candidates(f)
}

// all is a snapshot of the catalog.
func (c *catalog) all() []*Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ents := make([]*Entry, 0, c.ents.len())
	c.ents.each(func(ent *Entry) bool {
		ents = append(ents, ent)
		return true
	})
	return ents
}

// recentOf is Engine.RecentCtx, without waiting. The unfiltered list
// (recent/, whose every lookup asks for it) is computed once per catalog
// generation, from memory alone.
func (c *catalog) recentOf(ctx context.Context, n int, f Filter) ([]uint64, error) {
	if f.isZero() {
		c.mu.RLock()
		if c.recentGen == c.gen && c.recentN == n && c.recent != nil {
			ids := slices.Clone(c.recent)
			c.mu.RUnlock()
			return ids, nil
		}
		gen := c.gen
		c.scans.Add(1)
		var top []*Entry
		// An entry older than the n-th kept cannot enter: the base's are
		// left out by their Modified alone, first against the n-th newest
		// of the base's shown ones (the column alone), then against the
		// n-th kept.
		floor, floorOK := c.ents.newestMod(n, func(ino uint64) bool { return c.hidden[ino] })
		since := func() (int64, bool) {
			if n <= 0 || len(top) < n {
				return floor, floorOK
			}
			return max(floor, modKey(top[n-1].Modified)), true
		}
		c.ents.eachSince(since, func(ent *Entry) bool {
			if !c.hidden[ent.Ino] {
				top = keepNewest(top, ent, n)
			}
			return true
		})
		c.mu.RUnlock()
		ids := inos(top)
		c.mu.Lock()
		if c.gen == gen {
			c.recent, c.recentN, c.recentGen = ids, n, gen
		}
		c.mu.Unlock()
		return slices.Clone(ids), nil
	}
	var top []*Entry
	for i, ent := range c.candidatesOf(f) {
		if i%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if c.match(ent, f) {
			top = keepNewest(top, ent, n)
		}
	}
	return inos(top), nil
}

// newer orders memories newest first (ties: the higher inode first).
func newer(a, b *Entry) bool {
	if !a.Modified.Equal(b.Modified) {
		return a.Modified.After(b.Modified)
	}
	return a.Ino > b.Ino
}

// keepNewest adds ent to top, the at most n newest memories in order.
func keepNewest(top []*Entry, ent *Entry, n int) []*Entry {
	if n <= 0 || len(top) == n && !newer(ent, top[n-1]) {
		return top
	}
	i := sort.Search(len(top), func(i int) bool { return newer(ent, top[i]) })
	if len(top) < n {
		top = append(top, nil)
	}
	copy(top[i+1:], top[i:])
	top[i] = ent
	return top
}

func inos(ents []*Entry) []uint64 {
	ids := make([]uint64, 0, len(ents))
	for _, ent := range ents {
		ids = append(ids, ent.Ino)
	}
	return ids
}

// isZero reports the empty filter, which the facets answer.
func (f Filter) isZero() bool {
	return len(f.Users) == 0 && len(f.Types) == 0 && len(f.Tags) == 0 && f.Date == "" && f.Path == "" &&
		f.After == nil && f.Before == nil && !f.Archived && f.Only == nil && f.May == nil
}
