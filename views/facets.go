package views

import (
	"slices"
	"sort"
	"strings"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mnemofs/mnemofs/store"
)

// Facets: for each field listed by value (by-user/, by-type/, by-tag/,
// by-date/), which memories carry each value. The worker keeps them as it
// puts, moves and drops entries (apply.go), so that listing a field costs
// the sorted list of its values, cached until a value appears or goes, and
// looking one value up is a map lookup: neither scans the catalog.
//
// A memory is hidden (left out of every listing, as Match(ent, Filter{})
// leaves it out) when it sits under /archive or has no path. Whether it
// does is decided when the worker puts or moves it, and again for every
// memory after a directory moved (rehide); a second hard link removed
// (which sends no change) is seen at the memory's next change.
//
// Every memory is in the sets of all its values, hidden or not: DirsWith
// takes its candidates from the smallest set its filter names.

// The listed fields.
const (
	fieldUser = iota
	fieldType
	fieldTag
	fieldDate
	nFields
)

func fieldIndex(name string) (int, bool) {
	switch name {
	case "user":
		return fieldUser, true
	case "type":
		return fieldType, true
	case "tag":
		return fieldTag, true
	case "date":
		return fieldDate, true
	}
	return 0, false
}

// valueSet is the memories carrying one value of a field: a compressed
// bitmap of their inode numbers (runs and dense ranges take a few bits a
// memory, where a map took tens of bytes).
type valueSet struct {
	inos  *roaring64.Bitmap // all of them, hidden or not
	shown int               // how many are not hidden
}

// size is how many memories carry the value.
func (vs *valueSet) size() int { return int(vs.inos.GetCardinality()) }

// facet is one field's values. Guarded by Engine.mu.
type facet struct {
	vals map[string]*valueSet
	// list is the sorted values shown (listed), valid while listOK.
	list   []string
	listOK bool
	// prefixes counts, for the date field, the shown days of each year
	// ("2024") and month ("2024/05").
	prefixes map[string]int
}

func newFacets() [nFields]facet {
	var f [nFields]facet
	for i := range f {
		f[i].vals = map[string]*valueSet{}
	}
	f[fieldDate].prefixes = map[string]int{}
	return f
}

// listable reports whether a value of field fi names a view.
func listable(fi int, v string) bool {
	return v != "" && (fi == fieldDate || store.ValidName(v))
}

// day is the created date as by-date/ names it.
func (ent *Entry) day() string { return ent.Created.UTC().Format("2006/01/02") }

// each calls fn for every value ent has in field fi.
func (ent *Entry) each(fi int, fn func(string)) {
	switch fi {
	case fieldUser:
		for _, v := range ent.Users {
			fn(v)
		}
	case fieldType:
		fn(ent.Type)
	case fieldTag:
		for _, v := range ent.Tags {
			fn(v)
		}
	case fieldDate:
		// A log is under each day its lines name (and its own, for the
		// lines that name none).
		if lg := ent.log; lg != nil && lg.hasLineDates {
			for _, d := range lg.days {
				fn(d)
			}
			if !lg.undated || slices.Contains(lg.days, ent.day()) {
				return
			}
		}
		fn(ent.day())
	}
}

// index adds ent to the sets of its values. Caller holds mu for writing.
func (e *Engine) index(ent *Entry, hidden bool) {
	for fi := range e.facets {
		fc := &e.facets[fi]
		ent.each(fi, func(v string) {
			vs := fc.vals[v]
			if vs == nil {
				vs = &valueSet{inos: roaring64.New()}
				fc.vals[v] = vs
			}
			if !vs.inos.CheckedAdd(ent.Ino) {
				return // a duplicate value
			}
			if !hidden {
				vs.shown++
				if vs.shown == 1 {
					fc.shownChanged(v, 1)
				}
			}
		})
	}
}

// unindex removes ent, indexed with hidden, from the sets of its values.
// Caller holds mu for writing.
func (e *Engine) unindex(ent *Entry, hidden bool) {
	for fi := range e.facets {
		fc := &e.facets[fi]
		ent.each(fi, func(v string) {
			vs := fc.vals[v]
			if vs == nil {
				return
			}
			if !vs.inos.CheckedRemove(ent.Ino) {
				return // a duplicate value, already removed
			}
			if !hidden {
				vs.shown--
				if vs.shown == 0 {
					fc.shownChanged(v, -1)
				}
			}
			if vs.inos.IsEmpty() {
				delete(fc.vals, v)
			}
		})
	}
}

// shownChanged notes that value v appeared (d 1) or went (d -1).
func (fc *facet) shownChanged(v string, d int) {
	fc.listOK, fc.list = false, nil
	if fc.prefixes == nil {
		return
	}
	year, rest, _ := strings.Cut(v, "/")
	month, _, _ := strings.Cut(rest, "/")
	for _, p := range []string{year, year + "/" + month} {
		if fc.prefixes[p] += d; fc.prefixes[p] <= 0 {
			delete(fc.prefixes, p)
		}
	}
}

// put replaces the catalog entry of ent.Ino (if any) with ent, indexed as
// hidden or not. Caller holds mu for writing.
func (e *Engine) put(ent *Entry, hidden bool) {
	if old := e.cat.get(ent.Ino); old != nil {
		e.unindex(old, e.hidden[ent.Ino])
	}
	e.cat.set(ent)
	e.index(ent, hidden)
	if hidden {
		e.hidden[ent.Ino] = true
	} else {
		delete(e.hidden, ent.Ino)
	}
}

// remove drops the catalog entry of ino. Caller holds mu for writing.
func (e *Engine) remove(ino uint64) {
	if old := e.cat.get(ino); old != nil {
		e.unindex(old, e.hidden[ino])
	}
	e.cat.del(ino)
	delete(e.hidden, ino)
}

// resetCatalog empties the catalog and everything derived from it. Caller
// holds mu for writing.
func (e *Engine) resetCatalog() {
	e.cat = newCatalog()
	e.hidden = map[uint64]bool{}
	e.facets = newFacets()
}

// rehide decides again, after directories moved, which memories are
// hidden. It runs in the worker (the only writer of the catalog), so it
// reads the catalog without the lock; the paths of the directories come
// from the memo, one lookup per directory.
func (e *Engine) rehide() {
	e.scans.Add(1)
	var flip []*Entry
	e.cat.each(func(ent *Entry) bool {
		if e.hiddenAt(ent.parent, ent.name) != e.hidden[ent.Ino] {
			flip = append(flip, ent)
		}
		return true
	})
	if len(flip) == 0 {
		return
	}
	e.mu.Lock()
	for _, ent := range flip {
		e.put(ent, !e.hidden[ent.Ino])
	}
	e.gen++
	e.mu.Unlock()
}

// listing is the sorted list of the shown values of field fi, shared:
// callers must not change it.
func (e *Engine) listing(fi int) []string {
	e.mu.RLock()
	fc := &e.facets[fi]
	if fc.listOK {
		l := fc.list
		e.mu.RUnlock()
		return l
	}
	e.mu.RUnlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	fc = &e.facets[fi]
	if !fc.listOK {
		list := make([]string, 0, len(fc.vals))
		for v, vs := range fc.vals {
			if vs.shown > 0 && listable(fi, v) {
				list = append(list, v)
			}
		}
		sort.Strings(list)
		fc.list, fc.listOK = list, true
	}
	return fc.list
}

// HasValue reports whether Values(field, Filter{}) holds v, in a map
// lookup.
func (e *Engine) HasValue(field, v string) bool {
	e.Ready()
	fi, ok := fieldIndex(field)
	if !ok || !listable(fi, v) {
		return false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	vs := e.facets[fi].vals[v]
	return vs != nil && vs.shown > 0
}

// DateNames lists the names of a level of by-date/: the years for "",
// the months of "2024", the days of "2024/05"; sorted.
func (e *Engine) DateNames(prefix string) []string {
	e.Ready()
	days := e.listing(fieldDate)
	var out []string
	i := 0
	if prefix != "" {
		prefix += "/"
		i = sort.SearchStrings(days, prefix)
	}
	for ; i < len(days) && strings.HasPrefix(days[i], prefix); i++ {
		part, _, _ := strings.Cut(days[i][len(prefix):], "/")
		if len(out) == 0 || out[len(out)-1] != part {
			out = append(out, part)
		}
	}
	return out
}

// HasDate reports whether by-date/ holds p ("2024", "2024/05" or
// "2024/05/01"), in a map lookup.
func (e *Engine) HasDate(p string) bool {
	if strings.Count(p, "/") == 2 {
		return e.HasValue("date", p)
	}
	e.Ready()
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.facets[fieldDate].prefixes[p] > 0
}

// CatalogScans counts the walks over the whole catalog so far (a filtered
// Values or Recent, a DirsWith whose filter names no value, the unfiltered
// Recent once per generation, rehide): tests check that listing a view
// does not walk it per entry.
func (e *Engine) CatalogScans() uint64 { return e.scans.Load() }
