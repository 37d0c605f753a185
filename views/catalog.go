package views

import (
	"sort"

	"github.com/mnemofs/mnemofs/store"
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
	return e.cat[ino]
}

// Values lists the distinct users, types or tags (field "user", "type",
// "tag") of the memories matching f, sorted.
func (e *Engine) Values(field string, f Filter) []string {
	e.Ready()
	e.mu.RLock()
	ents := make([]*Entry, 0, len(e.cat))
	for _, ent := range e.cat {
		ents = append(ents, ent)
	}
	e.mu.RUnlock()
	seen := map[string]bool{}
	for _, ent := range ents {
		var vals []string
		switch field {
		case "user":
			vals = ent.Users
		case "type":
			vals = []string{ent.Type}
		case "tag":
			vals = ent.Tags
		case "date":
			vals = []string{ent.Created.UTC().Format("2006/01/02")}
		}
		if len(vals) == 0 || !e.Match(ent, f) {
			continue
		}
		for _, v := range vals {
			if v != "" && (field == "date" || store.ValidName(v)) {
				seen[v] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// Recent returns the n most recently modified memories matching f, newest
// first.
func (e *Engine) Recent(n int, f Filter) []uint64 {
	e.Ready()
	e.mu.RLock()
	ents := make([]*Entry, 0, len(e.cat))
	for _, ent := range e.cat {
		ents = append(ents, ent)
	}
	e.mu.RUnlock()
	var out []*Entry
	for _, ent := range ents {
		if e.Match(ent, f) {
			out = append(out, ent)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Modified.Equal(out[b].Modified) {
			return out[a].Modified.After(out[b].Modified)
		}
		return out[a].Ino > out[b].Ino
	})
	ids := make([]uint64, 0, min(n, len(out)))
	for _, ent := range out[:min(n, len(out))] {
		ids = append(ids, ent.Ino)
	}
	return ids
}
