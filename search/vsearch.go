package search

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
)

// VHit is one memory found by vector search.
type VHit struct {
	Ino   uint64
	Chunk uint32  // its best chunk
	Score float32 // the cosine of that chunk and the query
}

// Dist describes the cosines of a query with every chunk vector of the
// index (all of them, whatever the filter keeps): how many, their mean and
// standard deviation. Fuse measures a hit against it.
type Dist struct {
	Rows int // chunk vectors
	Inos int // memories
	Mean float64
	Std  float64
}

// shardRows is the fewest rows a search gives a goroutine of its own (1.5
// MiB at 384 dimensions, about 0.2 ms): smaller shards gain little over
// the cost of starting them. At 10k rows of 384 splitting in two takes
// the p50 from 0.66 to 0.42 ms; at 3k it gains nothing.
const shardRows = 4096

// Search returns the k memories whose best chunk is closest to q (cosine),
// best first (ties: lower inode first), keeping only those for which
// filter, if set, returns true; filter is called under the index's read
// lock. A query of the wrong dimension or of length zero finds nothing
// (SearchDist says why).
func (v *Vectors) Search(q []float32, k int, filter func(ino uint64) bool) []VHit {
	hits, _, _ := v.SearchDist(q, k, filter)
	return hits
}

// SearchDist is Search that also returns the distribution of the query's
// cosines with all chunk vectors (estimated from an even sample of them
// when the search is approximate, ivf.go), and an error (ErrDim, or a
// query that cannot be normalised).
func (v *Vectors) SearchDist(q []float32, k int, filter func(ino uint64) bool) ([]VHit, Dist, error) {
	return v.search(q, k, filter, true)
}

// SearchExact is Search over every row, even where an approximate index
// would answer (ivf.go): the reference its recall is measured against.
func (v *Vectors) SearchExact(q []float32, k int, filter func(ino uint64) bool) []VHit {
	hits, _, _ := v.search(q, k, filter, false)
	return hits
}

func (v *Vectors) search(q []float32, k int, filter func(ino uint64) bool, approx bool) ([]VHit, Dist, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.dim != 0 && len(q) != v.dim {
		return nil, Dist{}, fmt.Errorf("%w: query has %d values, index %d", ErrDim, len(q), v.dim)
	}
	inv, err := invNorm(q)
	if err != nil {
		return nil, Dist{}, fmt.Errorf("search: query: %w", err)
	}
	n := len(v.rows)
	if n == 0 {
		return nil, Dist{}, nil
	}
	qn := make([]float32, len(q))
	for i, f := range q {
		qn[i] = f * inv
	}
	if approx && v.ivf.ready(n) {
		sc := getVScratch(1, len(v.slots))
		defer vScratchPool.Put(sc)
		hits, d := v.ivfSearch(qn, k, filter, sc)
		return hits, d, nil
	}
	sc := getVScratch(n, len(v.slots))
	defer vScratchPool.Put(sc)
	sum, sumsq := v.score(qn, sc.scores[:n])
	mean := sum / float64(n)
	d := Dist{Rows: n, Inos: len(v.slots), Mean: mean, Std: math.Sqrt(max(0, sumsq/float64(n)-mean*mean))}
	if k <= 0 {
		return nil, d, nil
	}
	v.bestPerSlot(sc)
	if filter == nil {
		hits, _ := v.pick(sc, k, k, nil)
		return hits, d, nil
	}
	// The filter is asked best first, only until k memories are kept:
	// rank the best few first, and every memory only when it rejects too
	// many of them.
	if hits, ok := v.pick(sc, k, 8*k+64, filter); ok {
		return hits, d, nil
	}
	hits, _ := v.pick(sc, k, len(v.slots), filter)
	return hits, d, nil
}

// score writes the cosine of q with every row to out and returns the sum
// of the cosines and of their squares. A large index is split into one
// contiguous shard of rows per GOMAXPROCS, each of at least shardRows.
func (v *Vectors) score(q, out []float32) (sum, sumsq float64) {
	n, d := len(out), v.dim
	shards := min(runtime.GOMAXPROCS(0), n/shardRows)
	if shards <= 1 {
		return scoreRows(q, v.slab[:n*d], out)
	}
	type part struct {
		sum, sumsq float64
		_          [48]byte // one cache line each
	}
	parts := make([]part, shards)
	var wg sync.WaitGroup
	for s := range shards {
		lo, hi := s*n/shards, (s+1)*n/shards
		wg.Go(func() {
			parts[s].sum, parts[s].sumsq = scoreRows(q, v.slab[lo*d:hi*d], out[lo:hi])
		})
	}
	wg.Wait()
	for _, p := range parts {
		sum += p.sum
		sumsq += p.sumsq
	}
	return sum, sumsq
}

// scoreRows is score for one shard, in blocks of rows small enough for
// their cosines to be summed while still in the cache.
func scoreRows(q, slab, out []float32) (sum, sumsq float64) {
	const block = 256
	d := len(q)
	for lo := 0; lo < len(out); lo += block {
		hi := min(lo+block, len(out))
		dotRows(q, slab[lo*d:hi*d], out[lo:hi])
		for _, c := range out[lo:hi] {
			sum += float64(c)
			sumsq += float64(c) * float64(c)
		}
	}
	return sum, sumsq
}

// bestPerSlot sets each memory's best cosine and the row it comes from
// (ties: the lower chunk).
func (v *Vectors) bestPerSlot(sc *vScratch) {
	best, row := sc.best[:len(v.slots)], sc.row[:len(v.slots)]
	for i := range best {
		best[i] = float32(math.Inf(-1))
	}
	for r, c := range sc.scores[:len(v.rows)] {
		s := v.rows[r].slot
		if c > best[s] || c == best[s] && v.rows[r].chunk < v.rows[row[s]].chunk {
			best[s], row[s] = c, uint32(r)
		}
	}
}

// pick returns the best k memories that filter keeps among the best limit
// memories; ok is false when those held fewer than k kept ones and there
// were more.
func (v *Vectors) pick(sc *vScratch, k, limit int, filter func(uint64) bool) ([]VHit, bool) {
	h := vheap(make([]VHit, 0, min(limit, len(v.slots))))
	for s, c := range sc.best[:len(v.slots)] {
		if len(h) == limit && c < h[0].Score {
			continue // most of them: no need to look up the memory
		}
		x := VHit{Ino: v.slots[s].ino, Chunk: v.rows[sc.row[s]].chunk, Score: c}
		if len(h) < limit {
			h.push(x)
		} else if vbetter(x, h[0]) {
			h[0] = x
			h.down(0)
		}
	}
	cut := len(h) == limit && limit < len(v.slots)
	slices.SortFunc(h, func(a, b VHit) int {
		if vbetter(a, b) {
			return -1
		}
		return 1
	})
	out := make([]VHit, 0, min(k, len(h)))
	for _, x := range h {
		if len(out) == k {
			break
		}
		if filter == nil || filter(x.Ino) {
			out = append(out, x)
		}
	}
	return out, len(out) == k || !cut
}

// vbetter orders hits: higher score first, then lower inode.
func vbetter(a, b VHit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Ino < b.Ino
}

// vheap is a min-heap on vbetter: the root is the worst kept hit.
type vheap []VHit

func (h *vheap) push(x VHit) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !vbetter(s[p], s[i]) {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h vheap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && vbetter(h[c], h[c+1]) {
			c++ // the worse child
		}
		if !vbetter(h[i], h[c]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// vScratch is per-query space, reused: the cosine of every row, and each
// memory's best cosine and row.
type vScratch struct {
	scores, best []float32
	row          []uint32
}

var vScratchPool sync.Pool

func getVScratch(rows, slots int) *vScratch {
	s, _ := vScratchPool.Get().(*vScratch)
	if s == nil {
		s = &vScratch{}
	}
	if len(s.scores) < rows {
		s.scores = make([]float32, rows+rows/4)
	}
	if len(s.best) < slots {
		s.best, s.row = make([]float32, slots+slots/4), make([]uint32, slots+slots/4)
	}
	return s
}
