package store

import (
	"path"
	"strings"
)

// Links: a memory's related/related_files name other memories by
// path. At commit each is resolved to an inode (relative to the memory's
// directory, then to the root); readers get the linked memory's current
// path, so a link stays valid when either memory moves. A link that names
// no file here (an id, a URL, a file yet to come) is shown as written.

// resolveRelated resolves the links of ino. Caller holds mu.
func (s *Store) resolveRelated(ino uint64, related []string) []uint64 {
	if len(related) == 0 {
		return nil
	}
	dir := "/"
	if p, err := s.Path(ino); err == nil {
		dir = path.Dir(p)
	}
	out := make([]uint64, len(related))
	any := false
	for k, r := range related {
		cands := []string{path.Join(dir, r), path.Clean("/" + r)}
		if strings.HasPrefix(r, "/") {
			cands = cands[1:]
		}
		for _, c := range cands {
			if strings.Contains(c, "..") {
				continue // never outside the store
			}
			if target, err := s.Resolve(c); err == nil && target != ino {
				if i, err := s.inode(target); err == nil && i.IsReg() {
					out[k], any = target, true
					break
				}
			}
		}
	}
	if !any {
		return nil
	}
	return out
}

// maintenanceMarks fills in what maintenance marked on r: a duplicate
// mark only when the reader may see the memory it names (may nil: all the
// store's user sees).
func (s *Store) maintenanceMarks(in *Info, r *Record, may func(uint64) bool) {
	in.Cold = r.Cold
	if d := s.current(r.DuplicateOf); d != 0 && s.Visible(d) && (may == nil || may(d)) {
		if p, err := s.Path(d); err == nil {
			in.DuplicateOf = p
		}
	}
}

// relatedPaths is r's links with each resolved one at its current path. A
// link to a memory the reader may not see (may nil: all the store's user
// sees) is shown as written, exactly as a link to nothing: its target's
// moves and its very existence stay hidden.
func (s *Store) relatedPaths(r *Record, may func(uint64) bool) []string {
	if len(r.RelatedInos) == 0 {
		return r.Meta.Related
	}
	out := make([]string, len(r.Meta.Related))
	for k, l := range r.Meta.Related {
		out[k] = l
		if k < len(r.RelatedInos) && r.RelatedInos[k] != 0 {
			t := s.current(r.RelatedInos[k]) // through saves (saves.go)
			if !s.Visible(t) || may != nil && !may(t) {
				continue
			}
			if p, err := s.Path(t); err == nil {
				out[k] = p
			}
		}
	}
	return out
}
