package fusefs

import (
	"time"

	"github.com/mnemofs/mnemofs/metrics"
)

// Latency of each kind of request, as seen by the handler (meta/stats.json).
var (
	latLookup  = metrics.Ops.Get("lookup")
	latGetattr = metrics.Ops.Get("getattr")
	latSetattr = metrics.Ops.Get("setattr")
	latReaddir = metrics.Ops.Get("readdir")
	latCreate  = metrics.Ops.Get("create")
	latMkdir   = metrics.Ops.Get("mkdir")
	latUnlink  = metrics.Ops.Get("unlink")
	latRename  = metrics.Ops.Get("rename")
	latOpen    = metrics.Ops.Get("open")
	latRead    = metrics.Ops.Get("read")
	latWrite   = metrics.Ops.Get("write")
	latFlush   = metrics.Ops.Get("flush")
	latFsync   = metrics.Ops.Get("fsync")
	latRelease = metrics.Ops.Get("release")
	latSearch  = metrics.Ops.Get("search")
)

// observe records the time since t0; use as defer observe(h, time.Now()).
func observe(h *metrics.Histogram, t0 time.Time) { h.Observe(time.Since(t0)) }
