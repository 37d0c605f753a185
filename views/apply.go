package views

import (
	"errors"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/mnemofs/mnemofs/search"
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
		e.moves.Add(1)
		if !e.moved(c.Ino) {
			e.refresh(c.Ino, false)
			if a, err := e.st.Attr(c.Ino); err == nil && a.IsDir() {
				e.dirMoved = true // what is under it may have moved into or out of /archive
				e.movedDirs = append(e.movedDirs, c.Ino)
			}
		}
		e.mu.Lock()
		e.gen++
		e.mu.Unlock()
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
		if e.indexed(m.Ino) { // a build meets many never indexed: another user's
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
	e.mu.RLock()
	ent := e.cat.get(ino)
	var next uint32
	var done uint64
	if ent != nil {
		next, done = ent.nextLine, ent.indexedSize
	}
	e.mu.RUnlock()
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
			e.red.add(ino, e.redactParts(p, parts))
		}
	}
	e.idx.Append(ino, parts)
	if e.emb != nil {
		e.emb.enqueue(ino)
	}
	e.mu.Lock()
	if old := e.cat.get(ino); old != nil {
		// A new Entry: readers hold the old one without a lock.
		ent := *old
		ent.nextLine = next + lines - 1
		ent.indexedSize = done + uint64(n-1)
		ent.Modified = time.Unix(0, a.Mtime).UTC()
		ent.ctime, ent.size = a.Ctime, a.Size
		ent.log = old.log.extend(metas)
		ent.Users, ent.Tags = addValues(slices.Clone(old.Users), ent.log.users), addValues(slices.Clone(old.Tags), ent.log.tags)
		oldDays, oldUndated := 0, false
		if old.log != nil {
			oldDays, oldUndated = len(old.log.days), old.log.undated
		}
		if len(ent.Users) != len(old.Users) || len(ent.Tags) != len(old.Tags) || len(ent.log.days) != oldDays || ent.log.undated != oldUndated {
			e.put(&ent, e.hidden[ino]) // new values: the facets change
		} else {
			e.cat.set(&ent)
		}
	}
	e.gen++
	e.mu.Unlock()
	return true
}

// moved updates where a known memory sits; metadata does not change with
// a move (paths are computed when needed). It reports false for anything
// else (a directory, an unknown inode).
func (e *Engine) moved(ino uint64) bool {
	old := e.entry(ino)
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
	hidden := e.hiddenAt(parent, name)
	ent := *old
	ent.parent, ent.name = parent, name
	ent.ctime, ent.size = a.Ctime, a.Size
	e.mu.Lock()
	e.put(&ent, hidden) // into or out of /archive
	e.mu.Unlock()
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

// refresh re-reads one memory; content is re-indexed only when it changed.
func (e *Engine) refresh(ino uint64, content bool) {
	in, err := e.st.Info(ino)
	if err != nil {
		if e.unavailable(ino, err) {
			return
		}
		if errors.Is(err, syscall.ENOENT) {
			e.drop(ino)
		}
		return
	}
	a, err := e.st.Attr(ino)
	if e.unavailable(ino, err) {
		return
	}
	if err != nil {
		return
	}
	e.indexMemory(in, a, content, nil, nil)
}

// indexMemory brings the memory with Info in and inode a up to date; content
// says its text changed, and text is that text when it was read already
// (nil: it is read here); pr, when not nil, is what prepare made of it.
func (e *Engine) indexMemory(in store.Info, a store.Inode, content bool, text []byte, pr *prepared) {
	ino := in.Ino
	if !a.IsReg() || len(a.Links) == 0 {
		if a.IsReg() {
			e.drop(ino) // unlinked meanwhile
		}
		return // else a directory moved: paths are computed when needed
	}
	if in.Ignored {
		e.drop(ino) // not a memory (the policy's ignore rules)
		return
	}
	parent, name := a.Links[0].Parent, a.Links[0].Name
	ent := &Entry{Ino: ino, Users: in.Users, Type: in.Type, Tags: in.Tags, Created: in.Created,
		Modified: in.Modified, parent: parent, name: name, ctime: a.Ctime, size: a.Size}
	hidden := e.hiddenAt(parent, name)
	if isLog(name) {
		parent = 0 // a log's lines are a sequence of their own
	}
	if content || !e.indexed(ino) {
		if pr == nil {
			pr = e.prepare(in, a, text)
		}
		if errors.Is(pr.err, syscall.ENOENT) {
			e.drop(ino) // removed while being read; its Removed event follows
			return
		}
		if e.unavailable(ino, pr.err) {
			return // kept as it was; again when the backend answers
		}
		if pr.err != nil {
			e.log.Printf("views: indexing %s: %v", in.Path, pr.err)
		}
		ent.nextLine, ent.indexedSize = pr.next, pr.size
		e.red.set(ino, pr.red)
		if isLog(name) {
			ent.setLog((*logLines)(nil).extend(pr.metas))
		}
		e.idx.PutAnalyzed(ino, pr.an, parent, name)
		if e.emb != nil {
			e.emb.enqueue(ino)
		}
	} else {
		if old := e.entry(ino); old != nil {
			ent.nextLine, ent.indexedSize = old.nextLine, old.indexedSize
			if old.log != nil {
				ent.setLog(old.log)
			}
		}
		if parent != 0 {
			e.idx.Move(ino, parent, name)
		}
	}
	e.mu.Lock()
	e.put(ent, hidden)
	e.gen++
	e.mu.Unlock()
}

// prepared is what indexing a memory makes of its content alone: its
// parts, what redaction hid in them, and their index terms. The build
// makes it on a goroutine of its own (prepareScanned), ahead of the one
// that adds it to the catalog and the index.
type prepared struct {
	parts []search.Part
	metas []LineMeta
	next  uint32
	size  uint64
	err   error
	red   map[string]int
	an    *search.Analyzed
}

// prepare reads (when text is nil) and analyses the content of a regular
// file with Info in and inode a.
func (e *Engine) prepare(in store.Info, a store.Inode, text []byte) *prepared {
	pr := &prepared{}
	pr.parts, pr.metas, pr.next, pr.size, pr.err = e.parts(in.Ino, a.Links[0].Name, a.Size, in, text)
	pr.red = e.redactParts(in.Path, pr.parts)
	pr.an = search.Analyze(pr.parts)
	return pr
}

func (e *Engine) indexed(ino uint64) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.cat.has(ino)
}

func (e *Engine) drop(ino uint64) {
	e.idx.Remove(ino)
	e.red.set(ino, nil)
	if e.emb != nil {
		e.emb.remove(e.st, ino)
	}
	e.mu.Lock()
	e.remove(ino)
	e.gen++
	e.mu.Unlock()
}

// parts splits a file into indexed documents: one per line for logs, else
// the whole text, read here unless read holds it (the caller's, not
// written again). For logs it also returns the number of the line after
// the last newline and the bytes indexed (0, 0 when the log was too big to
// index whole, so that appends re-read it).
func (e *Engine) parts(ino uint64, name string, size uint64, in store.Info, read []byte) ([]search.Part, []LineMeta, uint32, uint64, error) {
	buf, n := read, len(read)
	if read == nil {
		buf = make([]byte, min(size, indexMax))
		var err error
		if n, err = e.st.ReadAt(ino, buf, 0); err != nil {
			return nil, nil, 0, 0, err
		}
	}
	if isBinary(buf[:n]) {
		return nil, nil, 0, 0, nil // nothing to search in an image or an archive
	}
	// buf is this call's and is not written again: the text is read
	// where it lies, not copied (a copy was a gigabyte of a 1M build).
	text := unsafe.String(unsafe.SliceData(buf), n)
	if isLog(name) {
		parts, metas, lines := logParts(text, 1, 0)
		if size > indexMax {
			return parts, metas, 0, 0, nil
		}
		return parts, metas, lines, uint64(n), nil
	}
	meta := metaText(in)
	head, body := indexHead(in, meta, text)
	return []search.Part{{Head: head, Text: body, Meta: meta}}, nil, 0, 0, nil
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
			switch ignored, known := e.st.Ignored(p, false), e.indexed(d.Ino); {
			case ignored && known:
				e.drop(d.Ino)
			case !ignored && (!known || e.st.Redactor().ByPath()):
				e.refresh(d.Ino, true) // new, or under other redaction rules
			case known && e.retyped(d.Ino, e.entry(d.Ino)):
				e.refresh(d.Ino, false) // moved into another tree: its type with it
			}
		}
	}
}
