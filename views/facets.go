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

// facet is one field's values. Guarded by catalog.mu.
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
func (c *catalog) index(ent *Entry, hidden bool) {
	for fi := range c.facets {
		fc := &c.facets[fi]
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
func (c *catalog) unindex(ent *Entry, hidden bool) {
	for fi := range c.facets {
		fc := &c.facets[fi]
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

// listing is the sorted list of the shown values of field fi, shared:
// callers must not change it.
func (c *catalog) listing(fi int) []string {
	c.mu.RLock()
	fc := &c.facets[fi]
	if fc.listOK {
		l := fc.list
		c.mu.RUnlock()
		return l
	}
	c.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	fc = &c.facets[fi]
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

// hasValue reports whether values(field, Filter{}) holds v, in a map
// lookup.
func (c *catalog) hasValue(field, v string) bool {
	fi, ok := fieldIndex(field)
	if !ok || !listable(fi, v) {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	vs := c.facets[fi].vals[v]
	return vs != nil && vs.shown > 0
}

// dateNames lists the names of a level of by-date/: the years for "",
// the months of "2024", the days of "2024/05"; sorted.
func (c *catalog) dateNames(prefix string) []string {
	days := c.listing(fieldDate)
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

// hasDate reports whether by-date/ holds p ("2024", "2024/05" or
// "2024/05/01"), in a map lookup.
func (c *catalog) hasDate(p string) bool {
	if strings.Count(p, "/") == 2 {
		return c.hasValue("date", p)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.facets[fieldDate].prefixes[p] > 0
}

// scanCount counts the walks over the whole catalog so far (a filtered
// Values or Recent, a DirsWith whose filter names no value, the unfiltered
// Recent once per generation, rehide): tests check that listing a view
// does not walk it per entry.
func (c *catalog) scanCount() uint64 { return c.scans.Load() }
