package views

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/store"
)

// Filter selects memories. Every set field must match.
type Filter struct {
	Users, Types, Tags []string
	// Date is a created-date prefix: "2024", "2024/05" or "2024/05/01".
	Date string
	// Path keeps memories at or under this canonical path.
	Path          string
	After, Before *time.Time
	// Archived includes memories under /archive (excluded by default
	// from views other than the real tree), but for the trash: what was
	// removed is forgotten, found only by a Path within the trash.
	Archived bool
	// Only, if set, keeps just these inodes (recent/).
	Only map[uint64]bool
	// May, if set, keeps just the memories a restricted reader may read
	// (meta.go). Results for such a filter are never cached: they depend
	// on permissions, which change without the catalog changing.
	May May
	// Reader, if set, is a view of the engine's store for one user
	// (store.ForUser, reader.go): of a shared log only the lines it sees
	// match, and text is shown as it reads it. Set with ForReader, which
	// sets May too.
	Reader UserView
}

// And returns the filter matching both f and g.
func (f Filter) And(g Filter) Filter {
	out := f
	out.Users = append(slices.Clone(f.Users), g.Users...)
	out.Types = append(slices.Clone(f.Types), g.Types...)
	out.Tags = append(slices.Clone(f.Tags), g.Tags...)
	if g.Date != "" {
		out.Date = g.Date // a narrower date from a view path
	}
	if g.Path != "" {
		out.Path = g.Path
	}
	if g.After != nil {
		out.After = g.After
	}
	if g.Before != nil {
		out.Before = g.Before
	}
	out.Archived = f.Archived || g.Archived
	if g.Only != nil {
		out.Only = g.Only
	}
	if g.Reader != nil {
		out.Reader = g.Reader
	}
	if f.May != nil && g.May != nil {
		out.May = func(ino uint64) bool { return f.May(ino) && g.May(ino) }
	} else if g.May != nil {
		out.May = g.May
	}
	return out
}

// key identifies a filter for caching.
func (f Filter) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "u%q t%q g%q d%q p%q a%v", f.Users, f.Types, f.Tags, f.Date, f.Path, f.Archived)
	if f.After != nil {
		fmt.Fprintf(&b, " >%d", f.After.UnixNano())
	}
	if f.Before != nil {
		fmt.Fprintf(&b, " <%d", f.Before.UnixNano())
	}
	if f.Only != nil {
		ids := make([]uint64, 0, len(f.Only))
		for id := range f.Only {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
		fmt.Fprintf(&b, " o%v", ids)
	}
	return b.String()
}

// match reports whether a memory passes the filter (Engine.Match).
func (c *catalog) match(ent *Entry, f Filter) bool {
	return c.matchHidden(ent, f, func() bool {
		c.mu.RLock()
		defer c.mu.RUnlock()
		return c.hidden[ent.Ino]
	})
}

// matchHidden is match, told whether the memory is hidden (under
// /archive, or with no path) when the filter leaves such out.
func (c *catalog) matchHidden(ent *Entry, f Filter, hidden func() bool) bool {
	if f.Only != nil && !f.Only[ent.Ino] {
		return false
	}
	for _, u := range f.Users {
		if !slices.Contains(ent.Users, u) {
			return false
		}
	}
	for _, t := range f.Types {
		if ent.Type != t {
			return false
		}
	}
	for _, t := range f.Tags {
		if !slices.Contains(ent.Tags, t) {
			return false
		}
	}
	// A log whose lines name times spans them: it passes when one of its
	// lines may (lineMatch decides for each line).
	first, last := ent.dateSpan()
	if f.Date != "" && !ent.onDate(f.Date, first, last) {
		return false
	}
	if f.After != nil && last.Before(*f.After) {
		return false
	}
	if f.Before != nil && !first.Before(*f.Before) {
		return false
	}
	if f.May != nil && !f.May(ent.Ino) {
		return false
	}
	if hidden() && (!f.Archived || !f.inTrash() && c.trashed(ent)) {
		return false
	}
	if f.Path != "" {
		p, err := c.entryPath(ent)
		if err != nil {
			return false
		}
		if p != f.Path && !strings.HasPrefix(p, strings.TrimSuffix(f.Path, "/")+"/") {
			return false
		}
	}
	return true
}

// matchIno is match by inode number (Engine.MatchIno): it runs inside
// searches, for each candidate, and reads neither the store nor (unless
// f names a path) a path: the catalog knows which memories are archived
// (hidden) and where each one is.
func (c *catalog) matchIno(ino uint64, f Filter) bool {
	if !f.needsEntry() { // the entry is not decoded, unless archived:
		c.mu.RLock() // it may be in the trash
		has, hidden := c.ents.has(ino), c.hidden[ino]
		c.mu.RUnlock()
		if !f.Archived || !hidden {
			ok := has && !hidden
			return ok && (f.Only == nil || f.Only[ino]) && (f.May == nil || f.May(ino))
		}
	}
	c.mu.RLock()
	ent, hidden := c.ents.get(ino), c.hidden[ino]
	c.mu.RUnlock()
	return ent != nil && c.matchHidden(ent, f, func() bool { return hidden })
}

// needsEntry reports whether Match reads more of an entry than its inode.
func (f Filter) needsEntry() bool {
	return len(f.Users) > 0 || len(f.Types) > 0 || len(f.Tags) > 0 || f.Date != "" || f.Path != "" ||
		f.After != nil || f.Before != nil
}

// archived reports a path under /archive, which views leave out unless
// asked (Filter.Archived).
func archived(p string) bool { return p == "/archive" || strings.HasPrefix(p, "/archive/") }

// inTrash reports a path in the trash (store.TrashDir).
func inTrash(p string) bool { return p == store.TrashDir || strings.HasPrefix(p, store.TrashDir+"/") }

// inTrash reports whether the filter names a path in the trash, which
// alone finds what was removed.
func (f Filter) inTrash() bool { return f.Path != "" && inTrash(f.Path) }

// trashed reports whether the memory ent sits in the trash.
func (c *catalog) trashed(ent *Entry) bool {
	p, err := c.entryPath(ent)
	return err == nil && inTrash(p)
}

// dirsWith is Engine.DirsWithCtx, without waiting. Only the memories in
// the smallest value set the filter names are matched (a view by-tag/x
// looks at the memories tagged x), all of them only when it names none.
// The set is cached until the catalog changes.
func (c *catalog) dirsWith(ctx context.Context, f Filter) (map[uint64]bool, error) {
	k := f.key()
	c.mu.RLock()
	ds, ok := c.dirsCache[k]
	ok = ok && f.May == nil
	gen := c.gen
	var ents []*Entry
	if !ok || ds.gen != gen {
		ents = c.candidates(f)
	}
	c.mu.RUnlock()
	if ok && ds.gen == gen {
		return ds.dirs, nil
	}
	dirs := map[uint64]bool{store.RootIno: true}
	for i, ent := range ents {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !c.match(ent, f) {
			continue
		}
		a, err := c.src.Attr(ent.Ino)
		if err != nil || len(a.Links) == 0 {
			continue
		}
		for d := a.Links[0].Parent; !dirs[d]; {
			dirs[d] = true
			da, err := c.src.Attr(d)
			if err != nil || len(da.Links) == 0 {
				break
			}
			d = da.Links[0].Parent
		}
	}
	if f.May != nil {
		return dirs, nil
	}
	c.mu.Lock()
	if len(c.dirsCache) > 256 {
		c.dirsCache = map[string]dirSet{}
	}
	c.dirsCache[k] = dirSet{gen, dirs}
	c.mu.Unlock()
	return dirs, nil
}

// candidates are the entries that may match f: those of the smallest
// value set (or Only) it names, else the whole catalog. Caller holds mu.
func (c *catalog) candidates(f Filter) []*Entry {
	var best *valueSet // nil: no memory carries a value named
	named := false
	consider := func(fi int, v string) {
		vs := c.facets[fi].vals[v]
		if !named || best != nil && (vs == nil || vs.size() < best.size()) {
			best, named = vs, true
		}
	}
	for _, v := range f.Users {
		consider(fieldUser, v)
	}
	for _, v := range f.Types {
		consider(fieldType, v)
	}
	for _, v := range f.Tags {
		consider(fieldTag, v)
	}
	if strings.Count(f.Date, "/") == 2 {
		consider(fieldDate, f.Date)
	}
	var ents []*Entry
	switch {
	case f.Only != nil && (!named || best != nil && len(f.Only) < best.size()):
		for ino := range f.Only {
			if ent := c.ents.get(ino); ent != nil {
				ents = append(ents, ent)
			}
		}
	case named:
		if best == nil {
			break
		}
		for it := best.inos.Iterator(); it.HasNext(); {
			if ent := c.ents.get(it.Next()); ent != nil {
				ents = append(ents, ent)
			}
		}
	default:
		c.scans.Add(1)
		ents = make([]*Entry, 0, c.ents.len())
		c.ents.each(func(ent *Entry) bool {
			ents = append(ents, ent)
			return true
		})
	}
	return ents
}
