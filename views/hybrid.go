package views

import (
	"fmt"

	"github.com/mnemofs/mnemofs/search"
)

// Hybrid search, when a model is loaded and memories are embedded: the
// lexical list (deeper than k) and the vector list are fused by
// search.Fuse, which lets a vector hit count only as far as its cosine
// stands out from the query's cosines with every chunk, so a weak model
// (even a random one) leaves the lexical ranking as it is. Without a
// model, or before anything is embedded, search is lexical only and
// exactly as before.

const (
	fuseDepth = 50 // candidates taken from each list
)

// hybridOn reports whether a search of q can use vectors.
func (qr *querier) hybridOn(q Query) bool {
	return q.Text != "" && qr.emb.searchable()
}

// hybridKey extends a query-cache key with what the vector side depends on.
func (qr *querier) hybridKey(q Query) string {
	return fmt.Sprintf("|v%d|%q", qr.emb.vectorsGen(), q.Text)
}

// hybrid ranks with both lists; ok is false when the vector side failed
// (the caller then answers lexically).
func (qr *querier) hybrid(q Query, filter func(uint64) bool, line func(uint64, uint32) bool) ([]search.Fused, bool) {
	// The query's vector (the model's forward pass, ~10 ms for MiniLM on
	// one core) is computed while the lexical list is.
	type encoded struct {
		v   [][]float32
		err error
	}
	ch := make(chan encoded, 1)
	go func() {
		v, err := qr.emb.encode(q.Text)
		ch <- encoded{v, err}
	}()
	o := qr.searchOptions(q, filter, line)
	o.K = max(q.K, fuseDepth)
	lex := qr.idx.Search(q.Terms, o)
	r := <-ch
	qv, err := r.v, r.err
	if err != nil || len(qv) != 1 {
		return nil, false
	}
	vec, dist, err := qr.emb.nearest(qv[0], max(q.K, fuseDepth), filter)
	if err != nil {
		return nil, false
	}
	return search.Fuse(lex, vec, dist, q.K, search.FuseOptions{}), true
}
