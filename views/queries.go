package views

import (
	"context"

	"github.com/mnemofs/mnemofs/cache"
	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// The engine's searches and generated files, answered by the querier
// (query.go, context.go, turns.go, meta.go, guide.go): each waits for
// the changes queued before it (Ready) where it reads the catalog.

// SetTuning replaces the ranking's parameters (search.DefaultTuning) for
// the searches that follow: for a harness that chooses them on held-out
// data (scripts/locomo -loo). Call it when no search runs.
func (e *Engine) SetTuning(t search.Tuning) { e.q.setTuning(t) }

// SetCacheBytes bounds the query-result cache (<= 0 turns it off; the
// default is cache.Split's share of cache.DefaultBytes). Call it before
// Start.
func (e *Engine) SetCacheBytes(bytes int64) { e.q.setCacheBytes(bytes) }

// SetAfterSearch sets fn to run after every search, before Start: the
// mount checks there what the search brought into its resident set
// (internal/resident).
func (e *Engine) SetAfterSearch(fn func()) { e.q.setAfterSearch(fn) }

// CacheStats returns the counters of the query-result cache.
func (e *Engine) CacheStats() cache.Stats { return e.q.cacheStats() }

// AddCacheStats adds the query-result cache to the store's stats.
func (e *Engine) AddCacheStats(s *store.Stats) { e.q.addCacheStats(s) }

// Search runs q within scope.
func (e *Engine) Search(q Query, scope Filter) []Result {
	rs, _ := e.SearchCtx(context.Background(), q, scope)
	return rs
}

// SearchCtx is Search, given up (with ctx's error) when ctx is done: the
// filter then keeps nothing, so the index finishes at once.
func (e *Engine) SearchCtx(ctx context.Context, q Query, scope Filter) ([]Result, error) {
	return e.q.search(ctx, q, scope)
}

// WithSnippets returns a copy of rs, results of q, with their snippets.
// A search leaves them out: reading and tokenizing each result's text was
// half of what a search cost (BENCHMARKS.md), and a search/ listing shows
// none; .results, `mnemofs search` and MCP ask for them.
func (e *Engine) WithSnippets(q Query, rs []Result) []Result { return e.q.withSnippets(q, rs, e.st) }

// WithSnippetsFor is WithSnippets for the reader of scope (ForReader).
func (e *Engine) WithSnippetsFor(q Query, rs []Result, scope Filter) []Result {
	if scope.Reader == nil {
		return e.WithSnippets(q, rs)
	}
	return e.q.withSnippets(q, rs, scope.Reader)
}

// Context builds the context/<query> file: the memories most relevant to
// the query, then the newest working/ memories, within q.Budget tokens. A
// result that is a log's line brings that turn and its neighbours
// (turnSection), after the summary.md of its directory when there is one.
func (e *Engine) Context(q Query, scope Filter) []byte {
	b, _ := e.ContextCtx(context.Background(), q, scope)
	return b
}

// ContextCtx is Context, given up (with ctx's error) when ctx is done.
func (e *Engine) ContextCtx(ctx context.Context, q Query, scope Filter) ([]byte, error) {
	return e.q.contextFile(ctx, q, scope)
}

// LineResult is the content of a search result for line n of the log
// ino within filter f (the view's scope and the query's filters): a
// header naming the log and the lines, then the lines as they are in the
// log, each after its number and ':' for the match or '-' for a
// neighbour (as grep -n -C prints them).
func (e *Engine) LineResult(ino uint64, n uint32, f Filter) ([]byte, error) {
	return e.q.lineResult(ino, n, f)
}

// Redactions counts the redactions per rule of the policy; only the
// memories keep decides count in Indexed (nil: all), and stored says
// whether to give the store-wide Stored counts.
func (e *Engine) Redactions(keep func(ino uint64) bool, stored bool) []Redaction {
	return e.q.redactions(keep, stored)
}

// StatsJSON is the health report with the index backlog of e: changes
// queued for the catalog and search index and not yet applied. A
// restricted reader (may, or a store open for a user) gets only the
// counts of what it may see (store.StatsFor).
func (e *Engine) StatsJSON(may May) ([]byte, error) { return statsJSON(e.st, e.q, may) }

// StatsJSONFor is meta/stats.json as the view v shows the store: the
// memories and sizes v sees (a shared log's by the lines it shows), as
// meta/stats.json of a mount for v's user counts them.
func (e *Engine) StatsJSONFor(v UserView) ([]byte, error) {
	if v.User() == "" {
		return e.StatsJSON(nil)
	}
	return statsJSON(v, e.q, v.Visible)
}

// Guide is the text of GuideName.
func (e *Engine) Guide(o GuideOptions) []byte { return e.q.guide(o) }

// SetEncoder turns on embeddings and hybrid search; call before Start.
func (e *Engine) SetEncoder(enc Encoder) { e.emb.setEncoder(enc) }

// EmbedStats reports the embedding worker; nil without a model.
func (e *Engine) EmbedStats() *EmbedStats { return e.emb.stats() }
