package cache

import (
	"math"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// EntryOverhead is what Sized charges for each entry on top of the size
// its caller gives: the map slot, list element, key and bookkeeping.
const EntryOverhead = 128

// Sized is an LRU cache bounded in bytes rather than entries.
//
// golang-lru counts entries, so Sized charges every entry its size in
// bytes plus EntryOverhead, keeps the running sum, and after each Add
// evicts the least recently used entries until the sum is within the
// bound. The entry limit of the underlying simplelru is set to
// bound/EntryOverhead+1, which the byte bound always reaches first, so it
// never evicts on its own. An entry costing more than the whole bound is
// not kept.
//
// With admission on (NewSizedAdmit), a key gets in on its second miss
// within a window: Probe remembers the keys that missed once in a second
// simplelru of keys only (the "ghost" list), whose cost is taken out of
// the bound. A key read once (an index build, a grep -r over everything)
// then costs no more than with the cache off and evicts nothing.
//
// One mutex guards the LRU and the counters (simplelru is not safe for
// concurrent use, and lookups reorder it). A nil *Sized is a disabled
// cache: it keeps nothing, counts nothing and reports zero stats.
type Sized[K comparable, V any] struct {
	mu        sync.Mutex
	lru       *simplelru.LRU[K, sizedEntry[V]]
	ghost     *simplelru.LRU[K, struct{}] // nil: no admission
	max, used int64
	bound     int64 // as configured (max plus the ghost list's share)
	hits      uint64
	misses    uint64
	evictions uint64
}

type sizedEntry[V any] struct {
	v    V
	cost int64
}

// NewSized returns a cache holding at most maxBytes, or nil (disabled)
// when maxBytes <= 0.
func NewSized[K comparable, V any](maxBytes int64) *Sized[K, V] {
	if maxBytes <= 0 {
		return nil
	}
	c := &Sized[K, V]{max: maxBytes, bound: maxBytes}
	n := maxBytes/EntryOverhead + 1
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	l, err := simplelru.NewLRU[K, sizedEntry[V]](int(n), func(_ K, e sizedEntry[V]) {
		c.used -= e.cost // called with c.mu held: every LRU call is
	})
	if err != nil {
		panic(err) // only for n <= 0
	}
	c.lru = l
	return c
}

// NewSizedAdmit is NewSized with second-miss admission: the last
// maxBytes/8192 (at least 64) keys that missed once are remembered, and
// their EntryOverhead each comes out of maxBytes.
func NewSizedAdmit[K comparable, V any](maxBytes int64) *Sized[K, V] {
	n := max(64, maxBytes/8192)
	c := NewSized[K, V](maxBytes - n*EntryOverhead)
	if c == nil {
		return nil
	}
	g, err := simplelru.NewLRU[K, struct{}](int(min(n, math.MaxInt32)), nil)
	if err != nil {
		panic(err)
	}
	c.ghost, c.bound = g, maxBytes
	return c
}

// Probe is the first step of a read with admission: it reports whether k
// is worth a full Lookup (and a fill on a miss): k has an entry, or (for a
// new access) missed once recently. Otherwise it counts the miss and, for
// a new access, remembers k. Later reads of one access (the rest of a
// sequential read) are not new: they neither admit nor are remembered.
// Without admission it always reports true.
func (c *Sized[K, V]) Probe(k K, newAccess bool) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ghost == nil || c.lru.Contains(k) || newAccess && c.ghost.Remove(k) {
		return true
	}
	if newAccess {
		c.ghost.Add(k, struct{}{})
	}
	c.misses++
	return false
}

// Get returns the value of k, counting a hit or a miss.
func (c *Sized[K, V]) Get(k K) (V, bool) { return c.Lookup(k, nil) }

// Lookup returns the value of k if valid (nil: any) accepts it, counting
// a hit; an entry valid rejects is dropped and counts as a miss.
func (c *Sized[K, V]) Lookup(k K, valid func(V) bool) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Get(k)
	if ok && valid != nil && !valid(e.v) {
		c.lru.Remove(k)
		if c.ghost != nil {
			c.ghost.Add(k, struct{}{}) // it was in use: the next miss fills it
		}
		ok = false
	}
	if !ok {
		c.misses++
		return zero, false
	}
	c.hits++
	return e.v, true
}

// Add keeps v under k, charged size bytes (plus EntryOverhead), replacing
// any value k had, and evicts the least recently used entries until the
// cache is within its bound. It reports whether v was kept.
func (c *Sized[K, V]) Add(k K, v V, size int) bool {
	if c == nil {
		return false
	}
	cost := int64(size) + EntryOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(k) // the old value's cost goes with it
	if cost > c.max {
		return false
	}
	c.lru.Add(k, sizedEntry[V]{v, cost})
	c.used += cost
	for c.used > c.max {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			break
		}
		c.evictions++
	}
	return true
}

// Remove drops k.
func (c *Sized[K, V]) Remove(k K) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.lru.Remove(k)
	if c.ghost != nil {
		c.ghost.Remove(k)
	}
	c.mu.Unlock()
}

// Purge drops every entry and remembered key (the counters are kept).
func (c *Sized[K, V]) Purge() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.lru.Purge()
	if c.ghost != nil {
		c.ghost.Purge()
	}
	c.mu.Unlock()
}

// Stats are the counters of one cache, as meta/stats.json shows them.
type Stats struct {
	Hits      uint64  `json:"hits"`
	Misses    uint64  `json:"misses"`
	HitRate   float64 `json:"hit_rate"` // hits / (hits + misses); 0 before any lookup
	Entries   int     `json:"entries"`
	Bytes     int64   `json:"bytes,omitempty"`       // charged bytes held (Sized)
	MaxBytes  int64   `json:"max_bytes,omitempty"`   // the bound (Sized; 0: off), admission list included
	MaxItems  int     `json:"max_entries,omitempty"` // the bound (entry-counted caches)
	Evictions uint64  `json:"evictions,omitempty"`
}

func (s *Stats) rate() {
	if n := s.Hits + s.Misses; n > 0 {
		s.HitRate = math.Round(float64(s.Hits)/float64(n)*10000) / 10000
	}
}

// Stats returns the cache's counters (zero for a disabled cache).
func (c *Sized[K, V]) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	s := Stats{Hits: c.hits, Misses: c.misses, Entries: c.lru.Len(), Bytes: c.used,
		MaxBytes: c.bound, Evictions: c.evictions}
	c.mu.Unlock()
	s.rate()
	return s
}
