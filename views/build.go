package views

import (
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/mnemofs/mnemofs/store"
)

// The build: every memory read from the store (by range scans,
// store.ScanMemories) and indexed, when no snapshot can be used.

// testHookBuilding, when set by a test, runs before a build indexes each
// memory.
var testHookBuilding atomic.Pointer[func()]

// testNoScan, when set by a test, has the build read each memory as a
// change would, not take what the scans read (the two are compared).
var testNoScan atomic.Bool

// build indexes every memory; it reports false when a stop cut it short.
func (ix *indexer) build() bool {
	t0 := time.Now()
	var inos []uint64
	err := ix.src.MemoryInos(func(ino uint64) error {
		inos = append(inos, ino)
		return nil
	})
	if err != nil {
		ix.log.Printf("views: listing memories: %v", err)
	}
	n, own, stopped := 0, 0, false
	ix.src.ScanMemoriesPrepared(inos, indexMax, ix.prepareScanned, func(m *store.Scanned) bool {
		if n%256 == 0 && ix.w.isStopped() {
			stopped = true
			return false
		}
		if h := testHookBuilding.Load(); h != nil {
			(*h)()
		}
		switch {
		case testNoScan.Load():
			ix.apply(store.Change{Kind: store.Changed, Ino: m.Ino})
		default:
			if m.Own {
				own++
			}
			ix.applyScanned(m)
		}
		if n%4096 == 4095 {
			// Each memory not scanned, and each directory, reads an
			// inode, which the store caches: at a million memories the
			// cache alone held 250 MB by the end.
			ix.src.DuringPass()
		}
		n++
		return true
	})
	ix.scanned.Store(int64(own))
	if stopped {
		return false
	}
	if d := time.Since(t0); d > time.Second {
		n := ix.cat.size()
		ix.log.Printf("views: indexed %d memories in %v (%d read by range scans)", n, d.Round(time.Millisecond), own)
		ix.src.AfterPass() // the build read every memory: what the store's caches hold is not hot
		// A big build leaves garbage several times the index's size, and
		// on a mount's single scheduler thread the collector lags the
		// build: hand what is not live back to the system once.
		debug.FreeOSMemory()
	}
	return err == nil
}

// prepareScanned makes what indexing m needs of its content alone, on the
// scan's goroutine for it (store.ScanMemoriesPrepared): tokenizing is
// about half of a build's work, and so runs beside the adding instead of
// before it.
func (ix *indexer) prepareScanned(m *store.Scanned) {
	if !m.Own || m.Err != nil || !m.Attr.IsReg() || len(m.Attr.Links) == 0 || m.Info.Ignored || testNoScan.Load() {
		return
	}
	m.Prepared = ix.prepare(m.Info, m.Attr, m.Content)
}
