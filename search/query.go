package search

import (
	"container/heap"
	"math"
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

// Neighbours only count in sequences of short documents: at least
// minGroup siblings (a session's turns, a log's lines), each document of at
// most shortDoc terms. A folder of a few long notes is no sequence.
const (
	minGroup = 4
	shortDoc = 80
)

// A score reaches window steps forward (a reply, a result) at full weight
// and backward at backShare of it, each step decay times the one before.
const (
	window    = 2
	backShare = 0.3
	decay     = 0.5
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
	base := map[uint32]float64{}
	seen := map[string]bool{}
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := x.post[t]
		if len(ps) == 0 {
			continue
		}
		df := 0
		for _, p := range ps {
			if x.docs[p.doc].live {
				df++
			}
		}
		idf := math.Log(1 + (float64(x.live)-float64(df)+0.5)/(float64(df)+0.5))
		for _, p := range ps {
			d := &x.docs[p.doc]
			if !d.live {
				continue
			}
			tf := float64(p.tf)
			base[p.doc] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(d.length)/avg))
		}
	}
	score := base
	if o.Neighbours > 0 {
		score = make(map[uint32]float64, len(base)*3)
		for id, s := range base {
			score[id] += s
			d := &x.docs[id]
			g := x.groups[d.group]
			if len(g) < minGroup || d.length > shortDoc || d.pos >= len(g) || g[d.pos] != id {
				continue
			}
			w := o.Neighbours * s
			for step := 1; step <= window; step++ {
				if d.pos-step >= 0 {
					score[g[d.pos-step]] += w * backShare
				}
				if d.pos+step < len(g) {
					score[g[d.pos+step]] += w
				}
				w *= decay
			}
		}
	}
	// Best document per file, filtered.
	best := map[uint64]Hit{}
	keep := map[uint64]bool{}
	for id, s := range score {
		k := x.docs[id].key
		ok, known := keep[k.Ino]
		if !known {
			ok = o.Filter == nil || o.Filter(k.Ino)
			keep[k.Ino] = ok
		}
		if !ok {
			continue
		}
		if h, found := best[k.Ino]; !found || s > h.Score || s == h.Score && k.Part < h.Part {
			best[k.Ino] = Hit{Ino: k.Ino, Part: k.Part, Score: s, Base: base[id]}
		}
	}
	h := &hitHeap{}
	for _, hit := range best {
		if h.Len() < o.K {
			heap.Push(h, hit)
		} else if better(hit, (*h)[0]) {
			(*h)[0] = hit
			heap.Fix(h, 0)
		}
	}
	out := make([]Hit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(Hit)
	}
	return out
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

// better orders hits: higher score first, then lower inode (deterministic).
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Ino < b.Ino
}

// hitHeap is a min-heap on better: the root is the worst kept hit.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(v any)        { *h = append(*h, v.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}
