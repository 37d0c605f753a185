package views

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mnemofs/mnemofs/cache"
	"github.com/mnemofs/mnemofs/store"
)

// The query-result cache: the results of Search, in a byte-bounded LRU
// (cache.Sized) keyed by the query's terms and k, the whole filter (query
// filters and the view's scope) and the catalog generation the search
// started at. Every change the engine applies (a memory written, moved,
// removed, appended to, a rebuild) updates the index and the catalog
// before it bumps the generation, and Search reads the generation after
// waiting for queued changes and before searching: results kept under a
// generation are never older than the state it names, and any change
// makes the next search miss. The same reasoning already serves the
// per-generation caches of filter.go (DirsWith, path).

// setCacheBytes bounds the query-result cache (Engine.SetCacheBytes).
func (qr *querier) setCacheBytes(bytes int64) {
	qr.qc = cache.NewSized[string, []Result](bytes)
}

// setAfterSearch sets fn to run after every search (Engine.SetAfterSearch).
func (qr *querier) setAfterSearch(fn func()) { qr.afterSearch = fn }

// cacheStats returns the counters of the query-result cache.
func (qr *querier) cacheStats() cache.Stats { return qr.qc.Stats() }

// addCacheStats adds the query-result cache to the store's stats.
func (qr *querier) addCacheStats(s *store.Stats) {
	if s.Cache == nil {
		s.Cache = map[string]cache.Stats{}
	}
	s.Cache["queries"] = qr.cacheStats()
}

// queryKey identifies a search: terms, k and filter at generation gen.
func queryKey(q Query, f Filter, gen uint64) string {
	var b strings.Builder
	b.WriteString(strconv.FormatUint(gen, 10))
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(q.K))
	for _, t := range q.Terms {
		b.WriteByte(0)
		b.WriteString(t)
	}
	b.WriteByte(1)
	b.WriteString(f.key())
	return b.String()
}

// cachedResults returns a copy of the results kept for key.
func (qr *querier) cachedResults(key string) ([]Result, bool) {
	rs, ok := qr.qc.Get(key)
	if !ok {
		return nil, false
	}
	return slices.Clone(rs), true
}

// keepResults caches a copy of rs under key, charged its strings' bytes.
func (qr *querier) keepResults(key string, rs []Result) {
	if qr.qc == nil || key == "" { // "": not to be cached (Filter.May)
		return
	}
	size := len(key)
	for _, r := range rs {
		size += 64 + len(r.Path) + len(r.Name) + len(r.Snippet)
	}
	qr.qc.Add(key, slices.Clone(rs), size)
}
