// Package metrics keeps latency histograms of filesystem operations, cheap
// enough to record on every request (a few atomic adds), and summarises
// them as percentiles for meta/stats.json.
package metrics

import (
	"math/bits"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// buckets are powers of two of microseconds: [0,1), [1,2), [2,4), … ~1 h.
const buckets = 32

// Histogram counts durations in power-of-two buckets.
type Histogram struct {
	counts [buckets]atomic.Uint64
	sum    atomic.Uint64 // microseconds
}

// Observe records one duration.
func (h *Histogram) Observe(d time.Duration) {
	us := uint64(d.Microseconds())
	b := bits.Len64(us)
	if b >= buckets {
		b = buckets - 1
	}
	h.counts[b].Add(1)
	h.sum.Add(us)
}

// Summary is a histogram's digest.
type Summary struct {
	Count  uint64  `json:"count"`
	MeanUS float64 `json:"mean_us"`
	P50US  uint64  `json:"p50_us"`
	P95US  uint64  `json:"p95_us"`
	P99US  uint64  `json:"p99_us"`
}

// Summary returns count, mean and percentiles (upper bucket bounds, so
// within a factor of two).
func (h *Histogram) Summary() Summary {
	var c [buckets]uint64
	var n uint64
	for i := range c {
		c[i] = h.counts[i].Load()
		n += c[i]
	}
	s := Summary{Count: n}
	if n == 0 {
		return s
	}
	s.MeanUS = float64(h.sum.Load()) / float64(n)
	pct := func(p float64) uint64 {
		want := uint64(p*float64(n) + 0.5)
		var acc uint64
		for i, x := range c {
			acc += x
			if acc >= want && x > 0 {
				return 1 << i // upper bound of bucket i
			}
		}
		return 1 << (buckets - 1)
	}
	s.P50US, s.P95US, s.P99US = pct(0.50), pct(0.95), pct(0.99)
	return s
}

// Registry names histograms.
type Registry struct {
	mu sync.Mutex
	m  map[string]*Histogram
}

// Ops is the registry of filesystem operation latencies.
var Ops = &Registry{m: map[string]*Histogram{}}

// Get returns the histogram named name, creating it.
func (r *Registry) Get(name string) *Histogram {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.m[name]
	if h == nil {
		h = &Histogram{}
		r.m[name] = h
	}
	return h
}

// Summaries returns every histogram that has data, by name.
func (r *Registry) Summaries() map[string]Summary {
	r.mu.Lock()
	names := make([]string, 0, len(r.m))
	for k := range r.m {
		names = append(names, k)
	}
	r.mu.Unlock()
	sort.Strings(names)
	out := map[string]Summary{}
	for _, k := range names {
		if s := r.Get(k).Summary(); s.Count > 0 {
			out[k] = s
		}
	}
	return out
}
