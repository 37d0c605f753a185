package views

import (
	"errors"
	"log"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// indexer applies changes: it reads what changed from the store and
// brings the catalog (through its methods) and the lexical index up to
// date, counts what redaction hid (red) and has the embedder embed it
// again. It runs in the worker alone; its own fields need no lock but
// retry's, which a timer reads.
type indexer struct {
	src Source
	idx *search.Index
	log *log.Logger
	cat *catalog
	red *redactCounts
	emb *embedder
	// w takes the memories to refresh again (retry.go), and says when
	// a build is to stop.
	w *worker
	// swap puts a snapshot prepared by the persister in place (a
	// swapSnap change).
	swap func()
	// scanned: how many memories the last build read by range scans
	// (store.ScanMemories), not one lookup at a time.
	scanned atomic.Int64
	// retry: memories to refresh again once the backend answers (retry.go).
	retry retries
	// dirMoved: a directory moved in the batch being applied, so which
	// memories are hidden is decided again after it.
	dirMoved bool
	// movedDirs are the directories moved in that batch (rescanTree).
	movedDirs []uint64
}

// bind gives the indexer the store it reads changes from.
func (ix *indexer) bind(src Source) { ix.src = src }

// apply brings one memory up to date. A panic here would take the whole
// mount down with it, so it is caught and logged.
func (ix *indexer) apply(c store.Change) {
	defer func() {
		if r := recover(); r != nil {
			ix.log.Printf("views: BUG: indexing inode %d: %v", c.Ino, r)
		}
	}()
	switch {
	case c.Kind == store.Removed:
		ix.drop(c.Ino)
		return
	case c.Kind == store.Moved:
		// A moved directory moves what is under it: views that depend on
		// paths (archive/, path:) must recompute, hence the new generation
		// (and the directories' paths are looked up again, dirPath).
		ix.cat.moved()
		if !ix.moved(c.Ino) {
			ix.refresh(c.Ino, false)
			if a, err := ix.src.Attr(c.Ino); err == nil && a.IsDir() {
				ix.dirMoved = true // what is under it may have moved into or out of /archive
				ix.movedDirs = append(ix.movedDirs, c.Ino)
			}
		}
		ix.cat.bump()
		return
	case c.Kind == store.Changed && c.From > 0 && ix.appendLines(c.Ino, c.From):
		return
	case c.Kind == metaChanged:
		ix.refresh(c.Ino, false)
		return
	case c.Kind == swapSnap:
		ix.swap()
		return
	}
	ix.refresh(c.Ino, c.Kind == store.Changed)
}

// applyScanned indexes a memory the build read with a scan of the store
// (store.ScanMemories), as apply would a change of it.
func (ix *indexer) applyScanned(m *store.Scanned) {
	defer func() {
		if r := recover(); r != nil {
			ix.log.Printf("views: BUG: indexing inode %d: %v", m.Ino, r)
		}
	}()
	switch {
	case errors.Is(m.Err, syscall.ENOENT):
		if ix.cat.has(m.Ino) { // a build meets many never indexed: another user's
			ix.drop(m.Ino) // gone, or not the store's user's
		}
	case !m.Own || m.Err != nil:
		ix.apply(store.Change{Kind: store.Changed, Ino: m.Ino}) // as a change would: logged, or retried
	default:
		pr, _ := m.Prepared.(*prepared)
		ix.indexMemory(m.Info, m.Attr, true, m.Content, pr)
	}
}

// appendLines indexes only the new lines of a log that grew at its end
// since it was last indexed. It reports false when a full refresh is needed.
func (ix *indexer) appendLines(ino, _ uint64) bool {
	a, err := ix.src.Attr(ino)
	if err != nil || !a.IsReg() || len(a.Links) == 0 || !isLog(a.Links[0].Name) {
		return false
	}
	ent := ix.cat.entry(ino)
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
	n, err := ix.src.ReadAt(ino, buf, int64(done-1))
	if err != nil || n == 0 || buf[0] != '\n' {
		return false // the old last line was not finished: read it all again
	}
	parts, metas, lines := logParts(string(buf[1:n]), next, done)
	if r := ix.src.Redactor(); !r.Empty() {
		if p, err := ix.src.Path(ino); err == nil {
			ix.red.add(ino, redactParts(ix.src, p, parts))
		}
	}
	ix.idx.Append(ino, parts)
	ix.emb.enqueue(ino)
	// The worker is the catalog's only writer: old is what it holds.
	old := ix.cat.entry(ino)
	if old == nil {
		ix.cat.putGrown(nil, nil, false)
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
	ix.cat.putGrown(old, &grown, refacet)
	return true
}

// moved updates where a known memory sits; metadata does not change with
// a move (paths are computed when needed). It reports false for anything
// else (a directory, an unknown inode).
func (ix *indexer) moved(ino uint64) bool {
	old := ix.cat.entry(ino)
	if old == nil {
		return false
	}
	a, err := ix.src.Attr(ino)
	if ix.unavailable(ino, err) {
		return true // refreshed again when the backend answers
	}
	if err != nil || !a.IsReg() || len(a.Links) == 0 {
		return false
	}
	parent, name := a.Links[0].Parent, a.Links[0].Name
	if p, err := ix.src.Path(ino); err == nil && ix.src.Ignored(p, false) {
		ix.drop(ino) // moved into an ignored tree: no longer a memory
		return true
	}
	if ix.src.Redactor().ByPath() {
		ix.refresh(ino, true) // other rules may cover it where it is now
		return true
	}
	if ix.retyped(ino, old) {
		ix.refresh(ino, false) // its type is its tree's, and the tree changed
		return true
	}
	if !isLog(name) {
		ix.idx.Move(ino, parent, name)
	}
	hidden := ix.cat.hiddenAt(parent, name)
	ent := *old
	ent.parent, ent.name = parent, name
	ent.ctime, ent.size = a.Ctime, a.Size
	ix.cat.put(&ent, hidden) // into or out of /archive
	return true
}

// retyped reports whether the memory ino, indexed as old, now has another
// type: one that comes from its tree (no type key), moved to another tree.
func (ix *indexer) retyped(ino uint64, old *Entry) bool {
	if old == nil {
		return false
	}
	in, err := ix.src.Info(ino)
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
func (ix *indexer) rescanTree(dir uint64, depth int) {
	ents, err := ix.src.ReadDir(dir)
	if err != nil || depth > 4096 {
		return
	}
	for _, d := range ents {
		switch d.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			ix.rescanTree(d.Ino, depth+1)
		case syscall.S_IFREG:
			p, err := ix.src.Path(d.Ino)
			if err != nil {
				continue
			}
			switch ignored, known := ix.src.Ignored(p, false), ix.cat.has(d.Ino); {
			case ignored && known:
				ix.drop(d.Ino)
			case !ignored && (!known || ix.src.Redactor().ByPath()):
				ix.refresh(d.Ino, true) // new, or under other redaction rules
			case known && ix.retyped(d.Ino, ix.cat.entry(d.Ino)):
				ix.refresh(d.Ino, false) // moved into another tree: its type with it
			}
		}
	}
}

// applyBatch applies changes in order, then what moved directories imply.
func (ix *indexer) applyBatch(changes []store.Change) {
	w := ix.warm(changedInos(changes))
	for _, c := range changes {
		ix.apply(c)
		w.built()
		// A mount may have a single scheduler thread (cmd/mnemofs
		// procs): let waiting requests in between changes.
		runtime.Gosched()
	}
	w.end()
	if ix.dirMoved {
		ix.dirMoved = false
		for _, d := range ix.movedDirs {
			ix.rescanTree(d, 0)
		}
		ix.movedDirs = nil
		ix.cat.rehide()
	}
}
