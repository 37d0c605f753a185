package main

import (
	"os"
	"runtime/debug"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/resident"
	"github.com/mnemofs/mnemofs/views"
)

// startTrim bounds the mapped snapshot's and Badger tables' pages that
// searches touch, which count in the resident set until given back
// (internal/resident), at half of --cache-size. Stop it before the store
// closes: it pins Badger's tables while it advises them.
func startTrim(data string, cacheBytes int64, kv backend.KV, eng *views.Engine) *resident.Trimmer {
	var pin resident.Pin
	if m, ok := backend.AsMapped(kv); ok {
		pin = m.PinMapped
	}
	trim := resident.Start(data, max(cacheBytes/2, 16<<20), time.Second, pin)
	eng.SetAfterSearch(trim.Poke)
	return trim
}

// lowerGC: a mount runs for days; once the index is read or built (a
// batch job, at Go's default), the heap may grow to 1.5 times what is
// live, not twice, for a little more GC work. GOGC set by the user wins.
func lowerGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
}
