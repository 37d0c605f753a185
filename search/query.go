package search

import (
	"container/heap"
	"math"
	"sort"
	"strings"
	"sync"
)

// Options shape a search.
type Options struct {
	// K is how many files to return.
	K int
	// Filter, if set, keeps only files for which it returns true. It is
	// asked once per file and query.
	Filter func(ino uint64) bool
	// Line, if set, keeps only the documents of a log (Part > 0) for which
	// it returns true, among those of files Filter keeps: a line's own
	// metadata (its users, its date) decides.
	Line func(ino uint64, part uint32) bool
	// Neighbours is the weight of a document's nearest neighbours in its
	// context window (0: off; see window.go). Short documents that
	// continue each other (chat turns, log lines) often hold the answer
	// one step away from the words that find them: mostly the step after
	// (a reply, a result), sometimes the one before.
	Neighbours float64
	// Extra are weighted query terms besides the query's own (expansion
	// terms, see Expand), each counting at its weight.
	Extra []Weighted
	// Tuning, if set, replaces DefaultTuning.
	Tuning *Tuning
}

// Weighted is a query term with a weight.
type Weighted struct {
	Term   string
	Weight float64
}

// Hit is one ranked document: a file (Part 0) or one line of a log.
type Hit struct {
	Ino   uint64
	Part  uint32  // the line of a log (from 1), 0 for a whole file
	Score float64 // fused score
	Base  float64 // the document's own BM25 score
}

// Search ranks documents for the query terms (from Tokens): files, and
// each line of a log on its own, so a log can give many hits.
func (x *Index) Search(terms []string, o Options) []Hit {
	if o.K <= 0 || len(terms) == 0 {
		return nil
	}
	if o.Neighbours > 0 {
		x.ensureGroups()
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.live == 0 {
		return nil
	}
	t := o.Tuning
	if t == nil {
		t = &DefaultTuning
	}
	avg := float64(x.totalLen) / float64(x.live)
	var rs []reach
	if o.Neighbours > 0 {
		rs = reaches(o.Neighbours, t)
	}
	q := x.queryLists(terms, o.Extra, t)
	lists := q.lists
	acc := getScratch(x.ndocs(), len(lists))
	defer putScratch(acc)
	// Windows first, in full (window.go): the short members of sequences.
	// Then every other document, pruned (prune.go), on top of what the
	// windows gave it.
	windows := rs != nil && x.nwin > 0
	bonus := 0.0
	if windows {
		bonus = x.scoreWindows(acc, lists, q.idfs, rs, t, avg)
	}
	keep := map[uint64]bool{}
	x.scorePlain(acc, q, o, keep, t, avg, bonus, windows)
	// Best first; the filter is asked only until K files are found. Most
	// queries need only the best few: keep a bounded heap of them first,
	// and rank every candidate only when the filter rejects too many.
	if out, ok := x.pick(acc, o, keep, 8*o.K+64); ok {
		return out
	}
	out, _ := x.pick(acc, o, keep, len(acc.touched))
	return out
}

// queryLists is queryTerms with each query term also matched in the
// metadata field, at Tuning.Meta.
func (x *Index) queryLists(terms []string, extra []Weighted, t *Tuning) ql {
	if t.Meta > 0 {
		extra = append([]Weighted(nil), extra...)
		for _, q := range terms {
			extra = append(extra, Weighted{metaPrefix + q, t.Meta})
		}
	}
	return x.queryTerms(terms, extra)
}

// queryTerms returns the posting lists of the distinct query terms found
// in the index and their IDF (times the weight, for the extra terms).
// Extra terms are taken best first (weight × IDF) while their postings
// come to no more than extraShare times the query's own terms' (at least
// extraMin): an expansion's cost is bounded by the query's, and what it
// leaves out are the common terms that would weigh least. An extra term
// of the metadata field (metaPrefix) covers its query term.
func (x *Index) queryTerms(terms []string, extra []Weighted) ql {
	var q ql
	seen := map[string]bool{}
	own := 0
	place := map[string]int{}
	for _, t := range terms {
		if ps := x.list(t); ps != nil && !seen[t] {
			seen[t] = true
			place[t] = q.n
			q.lists = append(q.lists, ps)
			q.idfs = append(q.idfs, x.idf(ps))
			q.cover = append(q.cover, q.n)
			q.n++
			own += int(ps.n)
		}
	}
	type cand struct {
		ps    *postings
		idf   float64
		t     string
		cover int
	}
	var cands []cand
	for _, w := range extra {
		if seen[w.Term] || w.Weight <= 0 {
			continue
		}
		ps := x.list(w.Term)
		if ps == nil {
			continue
		}
		seen[w.Term] = true
		c := cand{ps, w.Weight * x.idf(ps), w.Term, -1}
		if m, ok := strings.CutPrefix(w.Term, metaPrefix); ok {
			if i, ok := place[m]; ok {
				c.cover = i
			} else {
				c.cover = metaOnly
			}
		}
		cands = append(cands, c)
	}
	sort.Slice(cands, func(a, b int) bool {
		if cands[a].idf != cands[b].idf {
			return cands[a].idf > cands[b].idf
		}
		return cands[a].t < cands[b].t
	})
	budget := max(extraShare*own, extraMin)
	for _, c := range cands {
		if int(c.ps.n) > budget {
			continue
		}
		budget -= int(c.ps.n)
		if c.cover == metaOnly {
			// A word of the metadata alone covers a term of its own.
			c.cover = q.n
			q.n++
		}
		q.lists = append(q.lists, c.ps)
		q.idfs = append(q.idfs, c.idf)
		q.cover = append(q.cover, c.cover)
	}
	return q
}

// Extra terms may take extraShare times the postings of the query's own,
// and always extraMin. (On LoCoMo four times loses no recall and halves
// the p95 of an unbounded expansion; twice loses 0.001 recall@5.)
const (
	extraShare = 4
	extraMin   = 1024
)

// idf is a posting list's IDF among the live documents. Once documents
// were removed, the list's live postings are counted, and the count of a
// list of more than one block kept until the next removal.
func (x *Index) idf(ps *postings) float64 {
	df := int(ps.n) // every posting is live while nothing was removed
	if x.dead > 0 {
		if c := ps.liveCount(x.rmGen); c >= 0 {
			df = c
		} else {
			df = 0
			for c := ps.cursor(); ; {
				doc, _, ok := c.next()
				if !ok {
					break
				}
				if x.lens[doc]&deadBit == 0 {
					df++
				}
			}
			if ps.ext != nil {
				ps.ext.df.Store(&liveCount{gen: x.rmGen, df: df, n: ps.n})
			}
		}
	}
	return math.Log(1 + (float64(x.live)-float64(df)+0.5)/(float64(df)+0.5))
}

// pick returns the best K documents among the touched ones, looking at
// no more than the limit best; ok is false when that was too few.
func (x *Index) pick(acc *scratch, o Options, keep map[uint64]bool, limit int) ([]Hit, bool) {
	best := make(minHeap, 0, min(limit, len(acc.touched)))
	for _, id := range acc.touched {
		sc := acc.score[id]
		if sc <= 0 {
			continue
		}
		if best.Len() == limit && sc < best[0].Score {
			continue // worse than every kept hit, whatever its key
		}
		k := x.key(id)
		h := Hit{Ino: k.Ino, Part: k.Part, Score: sc, Base: acc.base[id]}
		if best.Len() < limit {
			heap.Push(&best, h)
		} else if better(h, best[0]) {
			best[0] = h
			heap.Fix(&best, 0)
		}
	}
	cut := best.Len() == limit
	ranked := make([]Hit, best.Len())
	for i := len(ranked) - 1; i >= 0; i-- {
		ranked[i] = heap.Pop(&best).(Hit)
	}
	var out []Hit
	for _, h := range ranked {
		if len(out) == o.K {
			return out, true
		}
		if x.kept(h, o, keep) {
			out = append(out, h)
		}
	}
	return out, len(out) == o.K || !cut
}

// SortGroups puts every group's documents in order now, which the first
// search with neighbours would otherwise do (after Load: all of them).
func (x *Index) SortGroups() { x.ensureGroups() }

func (x *Index) ensureGroups() {
	x.mu.RLock()
	stale := len(x.stale) > 0
	x.mu.RUnlock()
	if stale {
		x.mu.Lock()
		x.sortedGroups()
		x.mu.Unlock()
	}
}

// better orders hits: higher score first, then lower inode and part
// (deterministic).
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Ino != b.Ino {
		return a.Ino < b.Ino
	}
	return a.Part < b.Part
}

// minHeap is a min-heap on better: the root is the worst kept hit.
type minHeap []Hit

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(v any)        { *h = append(*h, v.(Hit)) }
func (h *minHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// scratch is per-query score space, dense by document number and reused:
// only the touched entries are cleared after use. Windowed documents also
// get a slot of per-query-term frequencies (slot[id] is its number plus
// one, 0 for none).
type scratch struct {
	base, score []float64
	touched     []uint32
	slot        []uint32
	slotted     []uint32
	tfs         []float64
	nq          int
}

// One scratch is kept between queries, past garbage collections: at 1M
// documents it is 21 MiB, and a sync.Pool alone drops it at every
// collection (a new one is made while the old one waits in the pool's
// victim cache). Queries that run while it is taken use the pool.
var (
	keptScratch struct {
		sync.Mutex
		s *scratch
	}
	scratchPool sync.Pool
)

func getScratch(n, nq int) *scratch {
	keptScratch.Lock()
	s := keptScratch.s
	keptScratch.s = nil
	keptScratch.Unlock()
	if s == nil {
		s, _ = scratchPool.Get().(*scratch)
	}
	if s == nil {
		s = &scratch{}
	}
	if len(s.base) < n {
		m := n + n/16 // room to grow, without a copy per new document
		s.base, s.score, s.slot = make([]float64, m), make([]float64, m), make([]uint32, m)
	}
	s.nq = nq
	return s
}

// tf returns the term frequencies of document id's window, made if need be.
func (s *scratch) tf(id uint32) []float64 {
	i := s.slot[id]
	if i == 0 {
		s.slotted = append(s.slotted, id)
		i = uint32(len(s.slotted))
		s.slot[id] = i
		for range s.nq {
			s.tfs = append(s.tfs, 0)
		}
	}
	return s.tfs[int(i-1)*s.nq : int(i)*s.nq]
}

func putScratch(s *scratch) {
	for _, id := range s.touched {
		s.base[id], s.score[id] = 0, 0
	}
	for _, id := range s.slotted {
		s.slot[id] = 0
	}
	s.touched, s.slotted, s.tfs = s.touched[:0], s.slotted[:0], s.tfs[:0]
	keptScratch.Lock()
	if keptScratch.s == nil {
		keptScratch.s, s = s, nil
	}
	keptScratch.Unlock()
	if s != nil {
		scratchPool.Put(s)
	}
}
