package search

import (
	"math"
	"math/bits"
)

// Coverage: a document ranked on its own (a note, not a window) scores
// its BM25 times the share of the query's terms it matches, to the power
// Tuning.Cover (0: off). A term counts as matched in the text or in the
// metadata field; expansion terms match none (a document matched by them
// alone counts as matching one). The factor is at most 1, so the bounds
// of top-k pruning (prune.go) stay bounds.

// ql is a query's posting lists and their IDFs (times their weights);
// cover[i] is the query term that list i matches (its place among the
// query's distinct terms found, which number n), -1 for an expansion.
type ql struct {
	lists []*postings
	idfs  []float64
	cover []int
	n     int
}

// metaOnly marks a query term found in the metadata field alone.
const metaOnly = -2

// coverage is the factor of a plain document's own score for the share of
// the query's terms it matches (parts: its score by list): (m/n)^Cover. A
// note that holds every word of the query then ranks above one that
// matches a single word however well (a rare tag), while BM25 still
// orders those that hold as many. Windows are left as they are: a window
// already saturates each term over its documents.
func (q ql) coverage(parts []float64, t *Tuning) float64 {
	n := min(q.n, 64) // (the terms past 64 are left out of the count)
	if t.Cover == 0 || n <= 1 {
		return 1
	}
	var seen uint64
	for i, v := range parts {
		if c := q.cover[i]; v > 0 && c >= 0 && c < 64 {
			seen |= 1 << c
		}
	}
	m := max(bits.OnesCount64(seen), 1) // matched by expansions alone: as one term
	return math.Pow(float64(m)/float64(n), t.Cover)
}

// sum adds vs in order.
func sum(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s
}
