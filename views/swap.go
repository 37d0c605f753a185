package views

import (
	"runtime/debug"
	"sync/atomic"

	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// The swap after a build: once the first snapshot after a build from the
// store is written, the catalog and index the build made (every entry
// and posting list in the heap) are replaced by the ones the snapshot
// holds, used where they lie in the mapped file, as a start from the
// snapshot has them; memory after a build is then what it is after a
// start. They are read and checked in the snapshot's goroutine, and put
// in place by the worker only if nothing changed since the capture (else
// the next start reads the file). Once per build: each swap maps a file,
// and a mapping (never unmapped, snapshot.go) keeps the blocks of a file
// replaced since until the mount stops.

// swapSnap is a change of the views' own: the worker puts a prepared
// swap in place.
const swapSnap store.ChangeKind = -2

// swapIn is a catalog and an index read from the snapshot written from
// a capture at gen (muts, idxGen: the catalog's and index's counts then).
type swapIn struct {
	gen, muts, idxGen uint64
	cat               *loadedCatalog
	idx               *search.Index
}

type swapState struct {
	// wanted: a build finished and its snapshot was not yet swapped in.
	wanted  atomic.Bool
	pending atomic.Pointer[swapIn]
}

// prepareSwap reads the snapshot just written from im (captured at gen)
// and hands it to the worker.
func (p *persister) prepareSwap(im *snapImage, gen uint64) error {
	r, err := openSnap(p.path)
	if err != nil {
		return err
	}
	defer r.close()
	l, err := r.load()
	if err != nil {
		return err
	}
	p.swap.pending.Store(&swapIn{gen: gen, muts: im.muts, idxGen: im.idx.Gen, cat: l.cat, idx: l.idx})
	p.w.handle([]store.Change{{Kind: swapSnap}})
	return nil
}

// swapNow puts the prepared swap in place (in the worker), if nothing
// changed since its capture.
func (p *persister) swapNow() {
	s := p.swap.pending.Swap(nil)
	if s == nil {
		return
	}
	// The worker is the only writer: what it reads here cannot change
	// until it returns. The index is swapped first, outside mu (a search
	// holds the index's lock while it takes mu); meanwhile a search sees
	// the new index with the old catalog, which hold the same.
	if p.cat.unchangedSince(s.gen, s.muts) && p.idx.Adopt(s.idx, s.idxGen) {
		p.cat.use(s.cat)
		p.log.Printf("views: the catalog and index are now read from the snapshot")
		go debug.FreeOSMemory() // what the build held
	}
}
