package search

import (
	"container/heap"
	"math"
	"sync"
)

// Options shape a search.
type Options struct {
	// K is how many files to return.
	K int
	// Filter, if set, keeps only files for which it returns true.
	Filter func(ino uint64) bool
	// Neighbours is the weight of a document's neighbours' scores in its
	// own (0: off). Short documents that continue each other (chat turns,
	// log lines) often hold the answer one step away from the words that
	// find them: mostly the step after (a reply, a result), sometimes the
	// one before.
	Neighbours float64
}

// Neighbours only count in sequences of short documents (isSequence: a
// log's lines, or at least minGroup siblings named alike but for their
// numbers, like a session's turns), each document of at most shortDoc
// terms.
const (
	minGroup = 4
	shortDoc = 80
)

// A score reaches window steps forward (a reply, a result) at full weight
// and backward at backShare of it, each step decay times the one before.
const (
	window    = 2
	backShare = 0.5
	decay     = 0.5
	// sequenceWeight scales the sequence prior (see Search).
	sequenceWeight = 1.0
)

// Hit is one ranked file.
type Hit struct {
	Ino   uint64
	Part  uint32  // the best-matching document of the file
	Score float64 // fused score
	Base  float64 // the document's own BM25 score
}

// Search ranks files for the query terms (from Tokens).
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
	avg := float64(x.totalLen) / float64(x.live)
	acc := getScratch(len(x.docs))
	defer putScratch(acc)
	base, score := acc.base, acc.score
	seen := map[string]bool{}
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := x.post[t]
		if ps == nil {
			continue
		}
		df := 0
		for c := (cursor{b: ps.b}); ; {
			doc, _, ok := c.next()
			if !ok {
				break
			}
			if x.docs[doc].live {
				df++
			}
		}
		idf := math.Log(1 + (float64(x.live)-float64(df)+0.5)/(float64(df)+0.5))
		for c := (cursor{b: ps.b}); ; {
			doc, tfi, ok := c.next()
			if !ok {
				break
			}
			d := &x.docs[doc]
			if !d.live {
				continue
			}
			tf := float64(tfi)
			if base[doc] == 0 {
				acc.touched = append(acc.touched, doc)
			}
			base[doc] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(d.length)/avg))
		}
	}
	add := func(id uint32, v float64) {
		if score[id] == 0 && base[id] == 0 {
			acc.touched = append(acc.touched, id) // a neighbour without a score of its own
		}
		score[id] += v
	}
	for _, id := range acc.touched[:len(acc.touched):len(acc.touched)] {
		s := base[id]
		score[id] += s
		d := &x.docs[id]
		if o.Neighbours <= 0 {
			continue
		}
		g := x.groups[d.group]
		if !x.seq[d.group] || d.length > shortDoc || d.pos >= len(g) || g[d.pos] != id {
			continue
		}
		w := o.Neighbours * s
		for step := 1; step <= window; step++ {
			if d.pos-step >= 0 {
				add(g[d.pos-step], w*backShare)
			}
			if d.pos+step < len(g) {
				add(g[d.pos+step], w)
			}
			w *= decay
		}
	}
	if o.Neighbours > 0 {
		// Sequence prior: every member of a sequence of short documents
		// (a session) also scores its sequence's best match, so the
		// sessions about the question come first, and within them the
		// turns that match or follow a match.
		gbest := map[uint64]float64{}
		for _, id := range acc.touched[:len(acc.touched):len(acc.touched)] {
			d := &x.docs[id]
			if x.seq[d.group] && d.length <= shortDoc && base[id] > gbest[d.group] {
				gbest[d.group] = base[id]
			}
		}
		for gid, v := range gbest {
			for _, id := range x.groups[gid] {
				add(id, sequenceWeight*v)
			}
		}
	}
	// Best first; the filter is asked only until K files are found. Most
	// queries need only the best few: keep a bounded heap of them first,
	// and rank every candidate only when the filter rejects too many.
	if out, ok := x.pick(acc, o, 8*o.K+64); ok {
		return out
	}
	out, _ := x.pick(acc, o, len(acc.touched))
	return out
}

// pick returns the best K files among the touched documents, looking at
// no more than the limit best documents; ok is false when that was too few.
func (x *Index) pick(acc *scratch, o Options, limit int) ([]Hit, bool) {
	best := make(minHeap, 0, min(limit, len(acc.touched)))
	for _, id := range acc.touched {
		sc := acc.score[id]
		if sc <= 0 {
			continue
		}
		k := x.docs[id].key
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
	done := map[uint64]bool{}
	var out []Hit
	for _, h := range ranked {
		if len(out) == o.K {
			return out, true
		}
		if done[h.Ino] {
			continue // a lower-scoring part of a file already decided
		}
		done[h.Ino] = true
		if o.Filter == nil || o.Filter(h.Ino) {
			out = append(out, h)
		}
	}
	return out, len(out) == o.K || !cut
}

func (x *Index) ensureGroups() {
	x.mu.RLock()
	stale := false
	for _, ids := range x.groups {
		if ids == nil {
			stale = true
			break
		}
	}
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
// only the touched entries are cleared after use.
type scratch struct {
	base, score []float64
	touched     []uint32
}

var scratchPool sync.Pool

func getScratch(n int) *scratch {
	s, _ := scratchPool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if len(s.base) < n {
		s.base, s.score = make([]float64, n+n/4), make([]float64, n+n/4)
	}
	return s
}

func putScratch(s *scratch) {
	for _, id := range s.touched {
		s.base[id], s.score[id] = 0, 0
	}
	s.touched = s.touched[:0]
	scratchPool.Put(s)
}
