package search

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// An inverted-file index (IVF) over the rows of Vectors, for indexes too
// large to scan at every query. Once an index holds ivfMin rows, a
// goroutine trains ivfLists centroids by spherical k-means on a sample of
// the rows, then files every row under its nearest centroid, a slice of
// rows at a time under the write lock (Put and Remove keep the lists in
// step meanwhile). When every row is filed, a search scores the centroids
// and only the rows of the ivfProbe nearest lists (about 6% of the rows),
// widening the probe when a filter leaves fewer than k. The mean and
// spread of the cosines (Dist) are then estimated from an even sample of
// rows. An index that grows to ivfRetrain times the rows it was trained on
// drops its lists and trains again (exact search meanwhile); so does one
// that shrinks below half of ivfMin.
//
// Recall against exact search is measured by scripts/vecbench -ivf.

var (
	// ivfMin: fewer rows are searched exactly (at 250k rows of 384
	// dimensions an exact search reads 366 MiB, ~30 ms here).
	ivfMin = 250_000
	// ivfLists is the number of centroids, ivfProbe the lists a search
	// reads; ivfSample rows per centroid train them.
	ivfLists  = 256
	ivfProbe  = 16
	ivfSample = 64
)

const (
	ivfIters   = 8    // k-means rounds
	ivfSlice   = 1024 // rows filed per hold of the write lock
	ivfRetrain = 4
	ivfDistN   = 1024 // rows sampled for Dist
)

// ivf is the quantizer and the lists. Guarded by Vectors.mu.
type ivf struct {
	cent  []float32  // ivfLists × dim, unit length
	lists [][]uint32 // row numbers filed under each centroid
	list  []uint16   // by row: its list (rows below filed)
	pos   []uint32   // by row: its index in its list
	filed int        // rows [0, filed) are filed; the rest wait
	rows  int        // rows when trained
}

// ready reports whether every row is filed.
func (x *ivf) ready(n int) bool { return x != nil && x.filed == n }

// nearest is the centroid closest to the row vector r.
func (x *ivf) nearest(r []float32, scores []float32) uint16 {
	dotRows(r, x.cent, scores)
	best := 0
	for c, s := range scores {
		if s > scores[best] {
			best = c
		}
	}
	return uint16(best)
}

// file puts row r (of vector vec) in its list.
func (x *ivf) file(r uint32, vec, scores []float32) {
	c := x.nearest(vec, scores)
	x.list[r], x.pos[r] = c, uint32(len(x.lists[c]))
	x.lists[c] = append(x.lists[c], r)
}

// unfile takes filed row r out of its list.
func (x *ivf) unfile(r uint32) {
	c, p := x.list[r], x.pos[r]
	l := x.lists[c]
	last := l[len(l)-1]
	l[p], x.pos[last] = last, p
	x.lists[c] = l[:len(l)-1]
}

// ivfRowAdded files row r, just appended, if the rows before it are.
// Caller holds the write lock.
func (v *Vectors) ivfRowAdded(r uint32) {
	x := v.ivf
	if x == nil {
		return
	}
	x.list, x.pos = append(x.list, 0), append(x.pos, 0)
	if x.filed == int(r) {
		x.file(r, v.slab[int(r)*v.dim:int(r+1)*v.dim], make([]float32, len(x.cent)/v.dim))
		x.filed++
	}
}

// ivfRowMoved is dropRow's news: the last row moves into row r (r == last:
// the last row goes). Caller holds the write lock.
func (v *Vectors) ivfRowMoved(r, last uint32) {
	x := v.ivf
	if x == nil {
		return
	}
	if int(r) < x.filed {
		x.unfile(r)
	}
	if r != last && int(last) < x.filed {
		// The moved row keeps its list, under its new number.
		c, p := x.list[last], x.pos[last]
		x.lists[c][p], x.list[r], x.pos[r] = r, c, p
	} else if r != last && int(r) < x.filed {
		// An unfiled row moves into the filed ones: file it now.
		x.file(r, v.slab[int(last)*v.dim:int(last+1)*v.dim], make([]float32, len(x.cent)/v.dim))
	}
	x.list, x.pos = x.list[:last], x.pos[:last]
	x.filed = min(x.filed, int(last))
	if int(last) < ivfMin/2 {
		v.ivf = nil // small again: exact search
	}
}

// ivfMaybeTrain starts training when the index has grown large enough (or
// far beyond what it was trained on). Caller holds the write lock.
func (v *Vectors) ivfMaybeTrain() {
	n := len(v.rows)
	if v.training || n < ivfMin || (v.ivf != nil && n < ivfRetrain*v.ivf.rows) {
		return
	}
	v.ivf, v.training = nil, true
	go v.ivfTrain()
}

// ivfTrain trains the centroids on a sample of the rows, installs them and
// files every row, a slice at a time.
func (v *Vectors) ivfTrain() {
	v.mu.RLock()
	n, d, gen := len(v.rows), v.dim, v.reset
	r := rand.New(rand.NewPCG(uint64(n), 0x1f))
	ns := min(n, ivfLists*ivfSample)
	sample := make([]float32, 0, ns*d)
	for _, i := range r.Perm(n)[:ns] {
		sample = append(sample, v.slab[i*d:(i+1)*d]...)
	}
	v.mu.RUnlock()
	cent := kmeans(sample, d, ivfLists, r)

	v.mu.Lock()
	if v.reset != gen || len(v.rows) < ivfMin/2 {
		v.training = false
		v.mu.Unlock()
		return
	}
	m := len(v.rows)
	x := &ivf{cent: cent, lists: make([][]uint32, len(cent)/d), list: make([]uint16, m), pos: make([]uint32, m), rows: m}
	v.ivf = x
	v.mu.Unlock()
	scores := make([]float32, len(cent)/d)
	for {
		runtime.Gosched() // on a mount's single P, let requests in
		v.mu.Lock()
		if v.ivf != x {
			v.training = false
			v.mu.Unlock()
			return
		}
		for end := min(x.filed+ivfSlice, len(v.rows)); x.filed < end; x.filed++ {
			r := x.filed
			x.file(uint32(r), v.slab[r*d:(r+1)*d], scores)
		}
		done := x.filed == len(v.rows)
		if done {
			v.training = false
			v.gen++
		}
		v.mu.Unlock()
		if done {
			return
		}
	}
}

// kmeans is spherical k-means over the rows of sample (dim d): k unit
// centroids, seeded with k distinct rows. A centroid left without rows is
// seeded again with a random row.
func kmeans(sample []float32, d, k int, r *rand.Rand) []float32 {
	n := len(sample) / d
	k = min(k, n)
	cent := make([]float32, 0, k*d)
	for _, i := range r.Perm(n)[:k] {
		cent = append(cent, sample[i*d:(i+1)*d]...)
	}
	scores := make([]float32, k)
	sums := make([]float64, k*d)
	counts := make([]int, k)
	x := &ivf{cent: cent}
	for range ivfIters {
		clear(sums)
		clear(counts)
		for i := range n {
			row := sample[i*d : (i+1)*d]
			c := int(x.nearest(row, scores))
			counts[c]++
			for j, f := range row {
				sums[c*d+j] += float64(f)
			}
		}
		for c := range k {
			dst := cent[c*d : (c+1)*d]
			if counts[c] == 0 {
				i := r.IntN(n)
				copy(dst, sample[i*d:(i+1)*d])
				continue
			}
			var ss float64
			for _, s := range sums[c*d : (c+1)*d] {
				ss += s * s
			}
			inv := 1 / math.Sqrt(max(ss, 1e-30))
			for j, s := range sums[c*d : (c+1)*d] {
				dst[j] = float32(s * inv)
			}
		}
		runtime.Gosched()
	}
	return cent
}

// ivfSearch is SearchDist over the lists (x ready). Caller holds the read
// lock; sc has room for every row and slot.
func (v *Vectors) ivfSearch(q []float32, k int, filter func(uint64) bool, sc *vScratch) ([]VHit, Dist) {
	x, d, n := v.ivf, v.dim, len(v.rows)
	// Dist from an even sample of the rows.
	step := max(1, n/ivfDistN)
	var sum, sumsq float64
	var cnt int
	one := sc.scores[:1]
	for r := 0; r < n; r += step {
		dotRows(q, v.slab[r*d:(r+1)*d], one)
		sum += float64(one[0])
		sumsq += float64(one[0]) * float64(one[0])
		cnt++
	}
	mean := sum / float64(cnt)
	dist := Dist{Rows: n, Inos: len(v.slots), Mean: mean, Std: math.Sqrt(max(0, sumsq/float64(cnt)-mean*mean))}
	if k <= 0 {
		return nil, dist
	}
	nl := len(x.lists)
	cs := make([]float32, nl)
	dotRows(q, x.cent, cs)
	order := make([]int, nl)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case cs[a] > cs[b]:
			return -1
		case cs[a] < cs[b]:
			return 1
		}
		return a - b
	})
	best, row := sc.best[:len(v.slots)], sc.row[:len(v.slots)]
	for i := range best {
		best[i] = float32(math.Inf(-1))
	}
	var touched, probed []uint32
	var scores []float32
	done := 0
	for probe := ivfProbe; ; probe *= 4 {
		probe = min(probe, nl)
		probed = probed[:0]
		for _, c := range order[done:probe] {
			probed = append(probed, x.lists[c]...)
		}
		scores = slices.Grow(scores[:0], len(probed))[:len(probed)]
		v.scoreScattered(q, probed, scores)
		for i, r := range probed {
			c, s := scores[i], v.rows[r].slot
			if best[s] == float32(math.Inf(-1)) {
				touched = append(touched, s)
			}
			if c > best[s] || c == best[s] && v.rows[r].chunk < v.rows[row[s]].chunk {
				best[s], row[s] = c, r
			}
		}
		done = probe
		hits := v.pickTouched(touched, best, row, k, filter)
		if len(hits) == k || probe == nl {
			return hits, dist
		}
	}
}

// scoreScattered writes the cosine of q with each of rows to out, split
// over GOMAXPROCS goroutines when there are enough rows (each row is read
// from its own place in the slab: reads that one core's memory accesses
// cannot keep up with alone).
func (v *Vectors) scoreScattered(q []float32, rows []uint32, out []float32) {
	d := v.dim
	one := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := int(rows[i])
			dotRows(q, v.slab[r*d:(r+1)*d], out[i:i+1])
		}
	}
	shards := min(runtime.GOMAXPROCS(0), len(rows)/shardRows)
	if shards <= 1 {
		one(0, len(rows))
		return
	}
	var wg sync.WaitGroup
	for s := range shards {
		wg.Go(func() { one(s*len(rows)/shards, (s+1)*len(rows)/shards) })
	}
	wg.Wait()
}

// pickTouched is pick over the memories an IVF search reached: the best
// k that filter keeps, asked best first, looking at the best 8k+64 and
// at all of them only when the filter rejects too many.
func (v *Vectors) pickTouched(touched []uint32, best []float32, row []uint32, k int, filter func(uint64) bool) []VHit {
	limit := k
	if filter != nil {
		limit = 8*k + 64
	}
	for {
		h := vheap(make([]VHit, 0, min(limit, len(touched))))
		for _, s := range touched {
			c := best[s]
			if len(h) == limit && c < h[0].Score {
				continue
			}
			x := VHit{Ino: v.slots[s].ino, Chunk: v.rows[row[s]].chunk, Score: c}
			if len(h) < limit {
				h.push(x)
			} else if vbetter(x, h[0]) {
				h[0] = x
				h.down(0)
			}
		}
		slices.SortFunc(h, func(a, b VHit) int {
			if vbetter(a, b) {
				return -1
			}
			return 1
		})
		out := make([]VHit, 0, k)
		for _, x := range h {
			if len(out) == k {
				break
			}
			if filter == nil || filter(x.Ino) {
				out = append(out, x)
			}
		}
		if len(out) == k || len(h) < limit || limit >= len(touched) {
			return out
		}
		limit = len(touched)
	}
}

// Approximate reports whether searches read the IVF lists rather than
// every row (the index is large and its rows are all filed).
func (v *Vectors) Approximate() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.ivf.ready(len(v.rows))
}

// ApproxRows is how many chunk vectors an index holds before its searches
// become approximate (once the lists are filed).
func ApproxRows() int { return ivfMin }
