package views

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// staleFloor: below this many changes since a snapshot, it is always
// brought up to date rather than built again (load).
const staleFloor = 4096

// load starts the catalog and index from the snapshot file, if it
// is usable, and applies what changed in the store since it was written
// (persist.go). It reports false when they must be built from the store;
// they are then empty.
func (p *persister) load() bool {
	if !p.on() {
		return false
	}
	t0 := time.Now()
	r, err := openSnap(p.path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			p.log.Printf("views: not using the index snapshot %s: %v; building the index from the store", p.path, err)
		}
		return false
	}
	defer r.close()
	if why := p.fits(r.head); why != "" {
		p.log.Printf("views: not using the index snapshot %s: %s; building the index from the store", p.path, why)
		return false
	}
	// The store's walk of what changed runs meanwhile.
	type sinceResult struct {
		since store.Since
		err   error
	}
	sinceCh := make(chan sinceResult, 1)
	go func() {
		s, err := p.src.ChangedSince(r.head.Version)
		sinceCh <- sinceResult{s, err}
	}()
	entries := r.head.Entries
	l, err := r.load()
	if err == nil {
		p.cat.use(l.cat)
		p.idx.Adopt(l.idx, p.idx.Gen()) // the worker's own: nothing changes it meanwhile
	}
	sr := <-sinceCh
	since := sr.since
	switch {
	case err == nil && sr.err != nil:
		err = sr.err
	case err == nil && since.Settings:
		err = errors.New("the policy changed since it was written")
	case err == nil && len(since.Changed) > max(staleFloor, entries/2):
		// Most of it is stale (a large import since): each change
		// applied reads its memory with lookups, where a build reads
		// them all by range scans, at about twice the speed.
		err = fmt.Errorf("%d nodes changed since it was written, against %d memories in it: a build is faster", len(since.Changed), entries)
	}
	if err != nil {
		p.cat.reset()
		p.idx.Reset()
		p.log.Printf("views: not using the index snapshot %s: %v; building the index from the store", p.path, err)
		return false
	}
	gen := p.cat.markBuilt()
	p.mu.Lock()
	p.savedGen = gen
	p.mu.Unlock()
	p.red.restore(l.maps.Redact)
	if p.emb.on() {
		// As a build would: each memory is checked against its stored
		// vectors (the embedder skips those it has), so one whose
		// embedding a stop or a new model left undone still gets it.
		p.cat.eachIno(p.emb.enqueue)
	}
	p.ix.warmAttrs(since.Changed)
	changes := p.sinceChanges(since, l.maps.Dirs)
	p.ix.applyBatch(changes)
	if len(changes) > 0 {
		p.soon()
	}
	how := "removals from the store's log"
	if !since.Logged {
		how = "removals found by a walk of every inode: the log does not reach back to the snapshot"
	}
	p.log.Printf("views: read the index of %d memories from its snapshot and applied %d changes since (%s), in %v",
		entries, len(changes), how, time.Since(t0).Round(time.Millisecond))
	return true
}

// loadedSnap is what a snapshot holds, read and checked (snapReader.load).
type loadedSnap struct {
	maps snapCatalog
	cat  *loadedCatalog
	idx  *search.Index
}

// load reads the rest of the snapshot: the catalog's maps, then, once the
// whole file's checksum holds, the catalog and the index from their
// mapped segments, the index's groups sorted (the first search would
// otherwise wait for it). Nothing is used on an error.
func (r *snapReader) load() (*loadedSnap, error) {
	l := &loadedSnap{idx: search.NewIndex()}
	if err := r.catalog(&l.maps); err != nil {
		return nil, err
	}
	catSeg, idxSeg, err := r.segments()
	if err != nil {
		return nil, err
	}
	if l.cat, err = readCatalog(&l.maps, catSeg, r.head.Entries); err != nil {
		return nil, err
	}
	if err := l.idx.LoadSegment(idxSeg); err != nil {
		return nil, fmt.Errorf("reading its index: %w", err)
	}
	// What the loads read (the columns they checked) leaves the process's
	// memory; the page cache keeps it.
	dropResident(catSeg)
	dropResident(idxSeg)
	l.idx.SortGroups()
	return l, nil
}

// fits checks a snapshot's header against this program, store and
// user; it says what makes it unusable ("" when it fits).
func (p *persister) fits(h snapHeader) string {
	id, err := p.src.ID()
	switch {
	case err != nil:
		return err.Error()
	case h.Format != snapFormat:
		return "it is of another format"
	case h.Program != programID():
		return "another build of mnemofs wrote it"
	case h.Store != id:
		return "it is of another store"
	case h.User != p.src.User():
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
func (p *persister) sinceChanges(since store.Since, dirs map[uint64]store.Link) []store.Change {
	var out []store.Change
	if since.Logged {
		for _, ino := range since.Removed {
			if p.cat.has(ino) {
				out = append(out, store.Change{Kind: store.Removed, Ino: ino})
			}
		}
	} else {
		p.cat.eachIno(func(ino uint64) {
			if _, ok := slices.BinarySearch(since.Live, ino); !ok {
				out = append(out, store.Change{Kind: store.Removed, Ino: ino})
			}
		})
	}
	for _, ino := range since.Changed {
		a, err := p.src.Attr(ino)
		switch {
		case err != nil:
			out = append(out, store.Change{Kind: store.Changed, Ino: ino}) // refresh decides
		case a.IsDir():
			if l, ok := dirs[ino]; ino != store.RootIno && (!ok || len(a.Links) == 0 || a.Links[0] != l) {
				out = append(out, store.Change{Kind: store.Moved, Ino: ino})
			}
		default:
			kind := store.Changed
			if ent := p.cat.entry(ino); ent != nil && ent.ctime != 0 && a.Ctime == ent.ctime && a.Size == ent.size &&
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
