package views

import (
	"errors"
	"path"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/store"
)

// apply brings one memory up to date. A panic here would take the whole
// mount down with it, so it is caught and logged.
func (e *Engine) apply(c store.Change) {
	defer func() {
		if r := recover(); r != nil {
			e.log.Printf("views: BUG: indexing inode %d: %v", c.Ino, r)
		}
	}()
	switch {
	case c.Kind == store.Removed:
		e.drop(c.Ino)
		return
	case c.Kind == store.Moved:
		// A moved directory moves what is under it: views that depend on
		// paths (archive/, path:) must recompute, hence the new generation
		// (and the directories' paths are looked up again, dirPath).
		e.cat.moved()
		if !e.moved(c.Ino) {
			e.refresh(c.Ino, false)
			if a, err := e.st.Attr(c.Ino); err == nil && a.IsDir() {
				e.dirMoved = true // what is under it may have moved into or out of /archive
				e.movedDirs = append(e.movedDirs, c.Ino)
			}
		}
		e.cat.bump()
		return
	case c.Kind == store.Changed && c.From > 0 && e.appendLines(c.Ino, c.From):
		return
	case c.Kind == metaChanged:
		e.refresh(c.Ino, false)
		return
	case c.Kind == swapSnap:
		e.swapNow()
		return
	}
	e.refresh(c.Ino, c.Kind == store.Changed)
}

// applyScanned indexes a memory the build read with a scan of the store
// (store.ScanMemories), as apply would a change of it.
func (e *Engine) applyScanned(m *store.Scanned) {
	defer func() {
		if r := recover(); r != nil {
			e.log.Printf("views: BUG: indexing inode %d: %v", m.Ino, r)
		}
	}()
	switch {
	case errors.Is(m.Err, syscall.ENOENT):
		if e.cat.has(m.Ino) { // a build meets many never indexed: another user's
			e.drop(m.Ino) // gone, or not the store's user's
		}
	case !m.Own || m.Err != nil:
		e.apply(store.Change{Kind: store.Changed, Ino: m.Ino}) // as a change would: logged, or retried
	default:
		pr, _ := m.Prepared.(*prepared)
		e.indexMemory(m.Info, m.Attr, true, m.Content, pr)
	}
}

// appendLines indexes only the new lines of a log that grew at its end
// since it was last indexed. It reports false when a full refresh is needed.
func (e *Engine) appendLines(ino, _ uint64) bool {
	a, err := e.st.Attr(ino)
	if err != nil || !a.IsReg() || len(a.Links) == 0 || !isLog(a.Links[0].Name) {
		return false
	}
	ent := e.cat.entry(ino)
	var next uint32
	var done uint64
	if ent != nil {
		next, done = ent.nextLine, ent.indexedSize
	}
	// Changes are applied in order and every rewrite comes with From 0,
	// so while only appends arrive, [0, done) is what was indexed; an
	// append whose bytes an earlier read already took (from < done) has
	// nothing left to add.
	if next == 0 || done == 0 || a.Size < done || a.Size > indexMax {
		return false
	}
	if a.Size == done {
		return true
	}
	buf := make([]byte, a.Size-done+1)
	n, err := e.st.ReadAt(ino, buf, int64(done-1))
	if err != nil || n == 0 || buf[0] != '\n' {
		return false // the old last line was not finished: read it all again
	}
	parts, metas, lines := logParts(string(buf[1:n]), next, done)
	if r := e.st.Redactor(); !r.Empty() {
		if p, err := e.st.Path(ino); err == nil {
			e.red.add(ino, redactParts(e.st, p, parts))
		}
	}
	e.idx.Append(ino, parts)
	e.emb.enqueue(ino)
	// The worker is the catalog's only writer: old is what it holds.
	old := e.cat.entry(ino)
	if old == nil {
		e.cat.putGrown(nil, nil, false)
		return true
	}
	// A new Entry: readers hold the old one without a lock.
	grown := *old
	grown.nextLine = next + lines - 1
	grown.indexedSize = done + uint64(n-1)
	grown.Modified = time.Unix(0, a.Mtime).UTC()
	grown.ctime, grown.size = a.Ctime, a.Size
	grown.log = old.log.extend(metas)
	grown.Users, grown.Tags = addValues(slices.Clone(old.Users), grown.log.users), addValues(slices.Clone(old.Tags), grown.log.tags)
	oldDays, oldUndated := 0, false
	if old.log != nil {
		oldDays, oldUndated = len(old.log.days), old.log.undated
	}
	// New values: the facets change.
	refacet := len(grown.Users) != len(old.Users) || len(grown.Tags) != len(old.Tags) || len(grown.log.days) != oldDays || grown.log.undated != oldUndated
	e.cat.putGrown(old, &grown, refacet)
	return true
}

// moved updates where a known memory sits; metadata does not change with
// a move (paths are computed when needed). It reports false for anything
// else (a directory, an unknown inode).
func (e *Engine) moved(ino uint64) bool {
	old := e.cat.entry(ino)
	if old == nil {
		return false
	}
	a, err := e.st.Attr(ino)
	if e.unavailable(ino, err) {
		return true // refreshed again when the backend answers
	}
	if err != nil || !a.IsReg() || len(a.Links) == 0 {
		return false
	}
	parent, name := a.Links[0].Parent, a.Links[0].Name
	if p, err := e.st.Path(ino); err == nil && e.st.Ignored(p, false) {
		e.drop(ino) // moved into an ignored tree: no longer a memory
		return true
	}
	if e.st.Redactor().ByPath() {
		e.refresh(ino, true) // other rules may cover it where it is now
		return true
	}
	if e.retyped(ino, old) {
		e.refresh(ino, false) // its type is its tree's, and the tree changed
		return true
	}
	if !isLog(name) {
		e.idx.Move(ino, parent, name)
	}
	hidden := e.cat.hiddenAt(parent, name)
	ent := *old
	ent.parent, ent.name = parent, name
	ent.ctime, ent.size = a.Ctime, a.Size
	e.cat.put(&ent, hidden) // into or out of /archive
	return true
}

// retyped reports whether the memory ino, indexed as old, now has another
// type: one that comes from its tree (no type key), moved to another tree.
func (e *Engine) retyped(ino uint64, old *Entry) bool {
	if old == nil {
		return false
	}
	in, err := e.st.Info(ino)
	return err == nil && in.Type != old.Type
}

// isLog reports line-oriented files, indexed a line at a time.
func isLog(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".jsonl", ".ndjson", ".log":
		return true
	}
	return false
}

// merge folds the changes of one batch to one per memory, in order of
// last appearance: a removal wins, any content change wins over a move, and
// appends stay appends only if every change was one.
func merge(batch []store.Change) []store.Change {
	if len(batch) < 2 {
		return batch
	}
	last := map[uint64]int{}
	folded := map[uint64]store.Change{}
	for i, c := range batch {
		last[c.Ino] = i
		prev, seen := folded[c.Ino]
		switch {
		case !seen || c.Kind == store.Removed || prev.Kind == store.Removed:
			folded[c.Ino] = c
		case c.Kind == store.Changed && prev.Kind == store.Changed:
			prev.From = min(prev.From, c.From)
			folded[c.Ino] = prev
		case c.Kind == store.Changed:
			folded[c.Ino] = store.Change{Kind: store.Changed, Ino: c.Ino} // after a move: all of it
		case prev.Kind == store.Changed:
			prev.From = 0 // moved after a change: refresh all of it
			folded[c.Ino] = prev
		}
	}
	out := make([]store.Change, 0, len(folded))
	for i, c := range batch {
		if last[c.Ino] == i {
			out = append(out, folded[c.Ino])
		}
	}
	return out
}

// rescanTree brings every file below the moved directory dir up to date
// with the ignore rules: what moved into an ignored tree is dropped, what
// moved out of one is indexed.
func (e *Engine) rescanTree(dir uint64, depth int) {
	ents, err := e.st.ReadDir(dir)
	if err != nil || depth > 4096 {
		return
	}
	for _, d := range ents {
		switch d.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			e.rescanTree(d.Ino, depth+1)
		case syscall.S_IFREG:
			p, err := e.st.Path(d.Ino)
			if err != nil {
				continue
			}
			switch ignored, known := e.st.Ignored(p, false), e.cat.has(d.Ino); {
			case ignored && known:
				e.drop(d.Ino)
			case !ignored && (!known || e.st.Redactor().ByPath()):
				e.refresh(d.Ino, true) // new, or under other redaction rules
			case known && e.retyped(d.Ino, e.cat.entry(d.Ino)):
				e.refresh(d.Ino, false) // moved into another tree: its type with it
			}
		}
	}
}

// applyBatch applies changes in order, then what moved directories imply.
func (e *Engine) applyBatch(changes []store.Change) {
	w := e.warm(changedInos(changes))
	for _, c := range changes {
		e.apply(c)
		w.built()
		// A mount may have a single scheduler thread (cmd/mnemofs
		// procs): let waiting requests in between changes.
		runtime.Gosched()
	}
	w.end()
	if e.dirMoved {
		e.dirMoved = false
		for _, d := range e.movedDirs {
			e.rescanTree(d, 0)
		}
		e.movedDirs = nil
		e.cat.rehide()
	}
}
