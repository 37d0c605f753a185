package main

import (
	"os"
	"runtime/debug"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/resident"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// startTrim bounds the mapped snapshot's and Badger tables' pages that
// searches touch, which count in the resident set until given back
// (internal/resident), at a quarter of --cache-size: a search over long
// posting lists touches several MiB of them at once, on top. Stop it before the store
// closes: it pins Badger's tables while it advises them.
func startTrim(data string, cacheBytes int64, kv backend.KV, eng *views.Engine) *resident.Trimmer {
	var pin resident.Pin
	if m, ok := backend.AsMapped(kv); ok {
		pin = m.PinMapped
	}
	trim := resident.Start(data, max(cacheBytes/4, 8<<20), time.Second, pin)
	eng.SetAfterSearch(trim.Poke)
	return trim
}

// lowerGC: a mount runs for days; once the index is read or built (a
// batch job, at Go's default), the heap may grow to 1.25 times what is
// live, not twice. What is live is mostly a few large arrays (the
// document table, the search scratch, Badger's memtable and block cache),
// cheap to mark: at 1M memories a mount collected 13 times in 1,000
// searches at 50% (1% of its CPU), 19-20 times at 25% (1-2%), and its
// heap stayed about 30 MiB smaller. GOGC set by the user wins.
func lowerGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
	}
}

// afterLoad runs once the index is read or built, until done: the
// collector lowered, the CPUs given back, and every second the inode and
// directory caches shed past the node bound (they keep what a find read;
// the kernel's nodes are bounded by fusefs itself).
func afterLoad(eng *views.Engine, st *store.Store, cpus *procs, maxNodes int, done <-chan struct{}) {
	<-eng.Loaded()
	lowerGC()
	cpus.indexSize(eng.Documents())
	cpus.loadedIndex()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-t.C:
			if tick%30 == 0 { // the store grows while mounted
				cpus.indexSize(eng.Documents())
			}
			st.ShedInodes(maxNodes)
			st.ShedListings(4 * maxNodes)
		case <-done:
			return
		}
	}
}
