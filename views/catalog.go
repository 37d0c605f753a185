package views

import (
	"context"
	"slices"
	"sort"
)

// Gen changes whenever the catalog changes. Like every public read, it
// first waits for queued changes to be applied.
func (e *Engine) Gen() uint64 {
	e.Ready()
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.gen
}

// Entry returns the catalog entry of ino (nil if not a memory).
func (e *Engine) Entry(ino uint64) *Entry {
	e.Ready()
	return e.entry(ino)
}

func (e *Engine) entry(ino uint64) *Entry {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.cat.get(ino)
}

// Values lists the distinct users, types, tags or created days (field
// "user", "type", "tag", "date") of the memories matching f, sorted. The
// unfiltered list (Filter{}: by-user/, by-type/, by-tag/, by-date/) comes
// from the facets, cached until a value appears or goes, and is shared:
// callers must not change it. A filtered one walks the memories of the
// smallest value set it names (candidates), all only if it names none.
func (e *Engine) Values(field string, f Filter) []string {
	e.Ready()
	fi, ok := fieldIndex(field)
	if !ok {
		return []string{}
	}
	if f.isZero() {
		return e.listing(fi)
	}
	seen := map[string]bool{}
	for _, ent := range e.candidatesOf(f) {
		if !e.Match(ent, f) {
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
func (e *Engine) candidatesOf(f Filter) []*Entry {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.candidates(f)
}

// entries is a snapshot of the catalog.
func (e *Engine) entries() []*Entry {
	e.mu.RLock()
	defer e.mu.RUnlock()
	ents := make([]*Entry, 0, e.cat.len())
	e.cat.each(func(ent *Entry) bool {
		ents = append(ents, ent)
		return true
	})
	return ents
}

// Recent returns the n most recently modified memories matching f, newest
// first.
func (e *Engine) Recent(n int, f Filter) []uint64 {
	ids, _ := e.RecentCtx(context.Background(), n, f)
	return ids
}

// RecentCtx is Recent, given up (with ctx's error) when ctx is done. The
// unfiltered list (recent/, whose every lookup asks for it) is computed
// once per catalog generation, from memory alone.
func (e *Engine) RecentCtx(ctx context.Context, n int, f Filter) ([]uint64, error) {
	e.Ready()
	if f.isZero() {
		e.mu.RLock()
		if e.recentGen == e.gen && e.recentN == n && e.recent != nil {
			ids := slices.Clone(e.recent)
			e.mu.RUnlock()
			return ids, nil
		}
		gen := e.gen
		e.scans.Add(1)
		var top []*Entry
		// An entry older than the n-th kept cannot enter: the base's are
		// left out by their Modified alone, first against the n-th newest
		// of the base's shown ones (the column alone), then against the
		// n-th kept.
		floor, floorOK := e.cat.newestMod(n, func(ino uint64) bool { return e.hidden[ino] })
		since := func() (int64, bool) {
			if n <= 0 || len(top) < n {
				return floor, floorOK
			}
			return max(floor, modKey(top[n-1].Modified)), true
		}
		e.cat.eachSince(since, func(ent *Entry) bool {
			if !e.hidden[ent.Ino] {
				top = keepNewest(top, ent, n)
			}
			return true
		})
		e.mu.RUnlock()
		ids := inos(top)
		e.mu.Lock()
		if e.gen == gen {
			e.recent, e.recentN, e.recentGen = ids, n, gen
		}
		e.mu.Unlock()
		return slices.Clone(ids), nil
	}
	var top []*Entry
	for i, ent := range e.candidatesOf(f) {
		if i%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if e.Match(ent, f) {
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

// Documents is the number of documents the lexical index holds (a file,
// or a line of a log).
func (e *Engine) Documents() int { return e.idx.Len() }
