package cache

import (
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Fill is an LRU cache of values loaded from a store that other goroutines
// change, safe against a reader putting back a value a writer has just
// replaced. Writers call Set or Forget after their change is stored;
// readers call Get, and on a miss load the value and call Fill with the
// epoch Get returned: the value is kept only if nothing was Set or
// Forgotten in between (it may be stale otherwise).
type Fill[K comparable, V any] struct {
	mu           sync.Mutex
	epoch        uint64
	c            *lru.Cache[K, V]
	n            int
	hits, misses uint64
}

// NewFill holds up to n values.
func NewFill[K comparable, V any](n int) *Fill[K, V] {
	c, err := lru.New[K, V](n)
	if err != nil {
		panic(err) // only for n <= 0
	}
	return &Fill[K, V]{c: c, n: n}
}

// Get returns the cached value of k, or the epoch to Fill it with.
func (f *Fill[K, V]) Get(k K) (v V, ok bool, epoch uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok = f.c.Get(k)
	if ok {
		f.hits++
	} else {
		f.misses++
	}
	return v, ok, f.epoch
}

// Stats returns the hit counters and size of the cache.
func (f *Fill[K, V]) Stats() Stats {
	f.mu.Lock()
	s := Stats{Hits: f.hits, Misses: f.misses, Entries: f.c.Len(), MaxItems: f.n}
	f.mu.Unlock()
	s.rate()
	return s
}

// Fill caches v for k if nothing changed since Get returned epoch.
func (f *Fill[K, V]) Fill(k K, v V, epoch uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.epoch == epoch {
		f.c.Add(k, v)
	}
}

// Set caches the value a writer just stored.
func (f *Fill[K, V]) Set(k K, v V) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.epoch++
	f.c.Add(k, v)
}

// Purge drops everything (another process may have changed any of it).
func (f *Fill[K, V]) Purge() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.epoch++
	f.c.Purge()
}

// Forget drops k after a writer changed or removed it.
func (f *Fill[K, V]) Forget(k K) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.epoch++
	f.c.Remove(k)
}
