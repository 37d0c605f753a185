package views

import (
	"errors"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/mnemofs/mnemofs/store"
)

// loadSnapshot starts the catalog and index from the snapshot file, if it
// is usable, and applies what changed in the store since it was written
// (persist.go). It reports false when they must be built from the store;
// they are then empty.
func (e *Engine) loadSnapshot() bool {
	if !e.snapOn() {
		return false
	}
	t0 := time.Now()
	r, err := openSnap(e.snap.path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			e.log.Printf("views: not using the index snapshot %s: %v; building the index from the store", e.snap.path, err)
		}
		return false
	}
	defer r.close()
	if why := e.snapFits(r.head); why != "" {
		e.log.Printf("views: not using the index snapshot %s: %s; building the index from the store", e.snap.path, why)
		return false
	}
	// Three jobs at once: the store's walk of what changed, the catalog's
	// facets, and the index's decoding.
	type sinceResult struct {
		since store.Since
		err   error
	}
	sinceCh := make(chan sinceResult, 1)
	go func() {
		s, err := e.st.ChangedSince(r.head.Version)
		sinceCh <- sinceResult{s, err}
	}()
	// The catalog's entries go to the facets as they are decoded, the
	// index after them; collection is put off meanwhile (all of it is
	// kept anyway).
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	var cat snapCatalog
	chunks := make(chan []entryImage, 8)
	putDone := make(chan struct{})
	entries := 0
	go func() {
		defer close(putDone)
		e.mu.Lock()
		defer e.mu.Unlock()
		for chunk := range chunks {
			for _, im := range chunk {
				e.put(im.entry(), im.Hidden)
			}
			entries += len(chunk)
		}
	}()
	err = r.catalog(&cat, func(c []entryImage) { chunks <- c })
	close(chunks)
	sorted := make(chan struct{})
	if err == nil {
		err = r.index(e.idx)
	}
	go func(ok bool) {
		// The groups' order, which the first search would otherwise
		// wait for, while the facets and the store's walk finish.
		if ok {
			e.idx.SortGroups()
		}
		close(sorted)
	}(err == nil)
	<-putDone
	sr := <-sinceCh
	<-sorted
	since := sr.since
	switch {
	case err == nil && sr.err != nil:
		err = sr.err
	case err == nil && since.Settings:
		err = errors.New("the policy changed since it was written")
	}
	if err != nil {
		e.mu.Lock()
		e.resetCatalog()
		e.mu.Unlock()
		e.idx.Reset()
		e.log.Printf("views: not using the index snapshot %s: %v; building the index from the store", e.snap.path, err)
		return false
	}
	e.mu.Lock()
	e.gen++
	e.snap.built = true
	e.mu.Unlock()
	e.snap.mu.Lock()
	e.snap.savedGen = e.gen
	e.snap.mu.Unlock()
	e.red.mu.Lock()
	e.red.byIno = cat.Redact
	e.red.mu.Unlock()
	if e.emb != nil {
		// As a build would: each memory is checked against its stored
		// vectors (the embedder skips those it has), so one whose
		// embedding a stop or a new model left undone still gets it.
		for ino := range e.cat {
			e.emb.enqueue(ino)
		}
	}
	changes := e.sinceChanges(since, cat.Dirs)
	e.applyBatch(changes)
	if len(changes) > 0 {
		e.snapSoon()
	}
	e.log.Printf("views: read the index of %d memories from its snapshot and applied %d changes since, in %v",
		entries, len(changes), time.Since(t0).Round(time.Millisecond))
	return true
}

// snapFits checks a snapshot's header against this program, store and
// user; it says what makes it unusable ("" when it fits).
func (e *Engine) snapFits(h snapHeader) string {
	id, err := e.st.ID()
	switch {
	case err != nil:
		return err.Error()
	case h.Format != snapFormat:
		return "it is of another format"
	case h.Program != programID():
		return "another build of mnemofs wrote it"
	case h.Store != id:
		return "it is of another store"
	case h.User != e.st.User():
		return "it is of another user's mount"
	}
	return ""
}

// metaChanged is a change of the views' own, made only by sinceChanges:
// the memory's record may have changed, its content did not.
const metaChanged store.ChangeKind = -1

// sinceChanges turns what the store says changed into the changes the
// worker applies: the memories gone are removed, the files written are
// read again, and a directory that moved (or is new) is a move, so that
// what is under it is checked against the ignore rules and /archive.
func (e *Engine) sinceChanges(since store.Since, dirs map[uint64]store.Link) []store.Change {
	var out []store.Change
	for ino := range e.cat { // the worker's own: no lock
		if _, ok := slices.BinarySearch(since.Live, ino); !ok {
			out = append(out, store.Change{Kind: store.Removed, Ino: ino})
		}
	}
	for _, ino := range since.Changed {
		a, err := e.st.Attr(ino)
		switch {
		case err != nil:
			out = append(out, store.Change{Kind: store.Changed, Ino: ino}) // refresh decides
		case a.IsDir():
			if l, ok := dirs[ino]; ino != store.RootIno && (!ok || len(a.Links) == 0 || a.Links[0] != l) {
				out = append(out, store.Change{Kind: store.Moved, Ino: ino})
			}
		default:
			kind := store.Changed
			if ent := e.cat[ino]; ent != nil && ent.ctime != 0 && a.Ctime == ent.ctime && a.Size == ent.size &&
				len(a.Links) > 0 && a.Links[0] == (store.Link{Parent: ent.parent, Name: ent.name}) {
				// Neither content nor name nor mode changed (only its
				// access time, or its record): its words are as indexed.
				kind = metaChanged
			}
			out = append(out, store.Change{Kind: kind, Ino: ino})
		}
	}
	return out
}
