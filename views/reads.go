package views

import "context"

// The engine's reads of the catalog. Each first waits until the changes
// queued before it are applied (Ready), then asks the catalog; MatchIno
// alone does not wait (it runs inside searches).

// Gen changes whenever the catalog changes. Like every public read, it
// first waits for queued changes to be applied.
func (e *Engine) Gen() uint64 {
	e.Ready()
	return e.cat.generation()
}

// Entry returns the catalog entry of ino (nil if not a memory).
func (e *Engine) Entry(ino uint64) *Entry {
	e.Ready()
	return e.cat.entry(ino)
}

// Values lists the distinct users, types, tags or created days (field
// "user", "type", "tag", "date") of the memories matching f, sorted. The
// unfiltered list (Filter{}: by-user/, by-type/, by-tag/, by-date/) comes
// from the facets, cached until a value appears or goes, and is shared:
// callers must not change it. A filtered one walks the memories of the
// smallest value set it names (candidates), all only if it names none.
func (e *Engine) Values(field string, f Filter) []string {
	e.Ready()
	return e.cat.values(field, f)
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
	return e.cat.recentOf(ctx, n, f)
}

// HasValue reports whether Values(field, Filter{}) holds v, in a map
// lookup.
func (e *Engine) HasValue(field, v string) bool {
	e.Ready()
	return e.cat.hasValue(field, v)
}

// DateNames lists the names of a level of by-date/: the years for "",
// the months of "2024", the days of "2024/05"; sorted.
func (e *Engine) DateNames(prefix string) []string {
	e.Ready()
	return e.cat.dateNames(prefix)
}

// HasDate reports whether by-date/ holds p ("2024", "2024/05" or
// "2024/05/01"), in a map lookup.
func (e *Engine) HasDate(p string) bool {
	e.Ready()
	return e.cat.hasDate(p)
}

// CatalogScans counts the walks over the whole catalog so far (a filtered
// Values or Recent, a DirsWith whose filter names no value, the unfiltered
// Recent once per generation, rehide): tests check that listing a view
// does not walk it per entry.
func (e *Engine) CatalogScans() uint64 { return e.cat.scanCount() }

// Match reports whether a memory passes the filter.
func (e *Engine) Match(ent *Entry, f Filter) bool { return e.cat.match(ent, f) }

// MatchIno is Match by inode number. It does not wait for queued changes
// (call Ready first): it runs inside searches, for each candidate, and
// reads neither the store nor (unless f names a path) a path: the catalog
// knows which memories are archived (hidden) and where each one is.
func (e *Engine) MatchIno(ino uint64, f Filter) bool { return e.cat.matchIno(ino, f) }

// DirsWith returns the directories that hold a memory matching f at any
// depth. The set is cached until the catalog changes.
func (e *Engine) DirsWith(f Filter) map[uint64]bool {
	dirs, _ := e.DirsWithCtx(context.Background(), f)
	return dirs
}

// DirsWithCtx is DirsWith, given up (with ctx's error) when ctx is done.
// Only the memories in the smallest value set the filter names are
// matched (a view by-tag/x looks at the memories tagged x), all of them
// only when it names none.
func (e *Engine) DirsWithCtx(ctx context.Context, f Filter) (map[uint64]bool, error) {
	e.Ready()
	return e.cat.dirsWith(ctx, f)
}

// Documents is the number of documents the lexical index holds (a file,
// or a line of a log).
func (e *Engine) Documents() int { return e.idx.Len() }

// Lines returns the metadata of every non-empty line of the log ino, in
// order (nil for a file that is not a log, or a log not indexed whole).
// The slice and its values are shared: callers must not change them.
func (e *Engine) Lines(ino uint64) []LineMeta {
	ent := e.Entry(ino)
	if ent == nil || ent.log == nil {
		return nil
	}
	return ent.log.lines
}

// Line returns the metadata of line n of the log ino.
func (e *Engine) Line(ino uint64, n uint32) (LineMeta, bool) {
	ent := e.Entry(ino)
	if ent == nil {
		return LineMeta{}, false
	}
	return ent.log.line(n)
}
