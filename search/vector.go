package search

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// ErrDim is returned for a vector whose length is not the index's
// dimension.
var ErrDim = errors.New("search: vector dimension mismatch")

// Vectors is an in-memory index of L2-normalised float32 embeddings, one
// or more chunk vectors per memory (inode). A memory scores the best
// cosine of its chunks.
//
// The vectors live in one contiguous slab, row after row, so a search is a
// single sequential pass over memory (beyond ApproxRows rows, a pass over
// the rows of the nearest lists of an inverted file: ivf.go). Removing a row moves the last row
// into its place (swap-remove): the slab stays dense and no compaction is
// ever needed. Each memory holding at least one row has a dense slot
// number too (moved the same way), so a search keeps its per-memory best
// in arrays rather than maps.
//
// All methods are safe for concurrent use.
type Vectors struct {
	mu    sync.RWMutex
	fixed int // the dimension given at construction (0: the first Put's)
	dim   int
	slab  []float32 // len(rows)*dim values
	rows  []vrow    // by row number
	slots []vslot   // by slot number
	slot  map[uint64]uint32
	gen   uint64
	// ivf files the rows of a large index under centroids (ivf.go);
	// training: a goroutine trains or files it; reset counts Resets.
	ivf      *ivf
	training bool
	reset    uint64
}

// vrow is what a row of the slab belongs to.
type vrow struct {
	slot  uint32
	chunk uint32
}

// vslot is one memory and its rows.
type vslot struct {
	ino  uint64
	rows []uint32
}

// NewVectors returns an empty index of dimension dim; with dim 0 the
// first Put fixes it.
func NewVectors(dim int) *Vectors {
	return &Vectors{fixed: max(dim, 0), dim: max(dim, 0), slot: map[uint64]uint32{}}
}

// Dim is the dimension of the vectors (0 until fixed).
func (v *Vectors) Dim() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.dim
}

// Len is the number of chunk vectors.
func (v *Vectors) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.rows)
}

// Inos is the number of memories with at least one vector.
func (v *Vectors) Inos() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.slots)
}

// Gen changes whenever the index changes.
func (v *Vectors) Gen() uint64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.gen
}

// Reset empties the index; the dimension goes back to the one given to
// NewVectors.
func (v *Vectors) Reset() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.dim, v.slab, v.rows, v.slots, v.slot = v.fixed, nil, nil, nil, map[uint64]uint32{}
	v.ivf = nil
	v.reset++
	v.gen++
}

// Put replaces the chunk vectors of ino with vecs (chunk i is vecs[i]);
// each is stored L2-normalised. No vectors is Remove. A vector of the
// wrong dimension (ErrDim), with a NaN or infinite value, or of length
// zero is an error, and the index is left unchanged.
func (v *Vectors) Put(ino uint64, vecs [][]float32) error {
	if len(vecs) == 0 {
		v.Remove(ino)
		return nil
	}
	if len(vecs) > math.MaxUint32 {
		return fmt.Errorf("search: %d chunks", len(vecs))
	}
	// Check and normalise outside the lock.
	d := len(vecs[0])
	norms := make([]float32, len(vecs))
	for i, x := range vecs {
		if len(x) != d {
			return fmt.Errorf("%w: chunk %d has %d values, chunk 0 %d", ErrDim, i, len(x), d)
		}
		n, err := invNorm(x)
		if err != nil {
			return fmt.Errorf("search: chunk %d: %w", i, err)
		}
		norms[i] = n
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.dim == 0 {
		if d == 0 {
			return fmt.Errorf("%w: empty vector", ErrDim)
		}
		v.dim = d
	}
	if d != v.dim {
		return fmt.Errorf("%w: %d values, index has %d", ErrDim, d, v.dim)
	}
	v.removeLocked(ino)
	s := uint32(len(v.slots))
	v.slot[ino] = s
	rows := make([]uint32, len(vecs))
	base := len(v.slab)
	v.slab = slices.Grow(v.slab, len(vecs)*d)[:base+len(vecs)*d]
	for i, x := range vecs {
		rows[i] = uint32(len(v.rows))
		v.rows = append(v.rows, vrow{slot: s, chunk: uint32(i)})
		dst, n := v.slab[base+i*d:base+(i+1)*d], norms[i]
		for j, f := range x {
			dst[j] = f * n
		}
		v.ivfRowAdded(rows[i])
	}
	v.slots = append(v.slots, vslot{ino: ino, rows: rows})
	v.gen++
	v.ivfMaybeTrain()
	return nil
}

// invNorm is 1/|x|, or an error for a vector that cannot be normalised.
func invNorm(x []float32) (float32, error) {
	var ss float64
	for _, f := range x {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return 0, errors.New("not a finite vector")
		}
		ss += float64(f) * float64(f)
	}
	if ss == 0 || math.IsInf(ss, 0) {
		return 0, errors.New("vector of length zero or out of range")
	}
	return float32(1 / math.Sqrt(ss)), nil
}

// Remove drops the vectors of ino.
func (v *Vectors) Remove(ino uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.removeLocked(ino) {
		v.gen++
		// Give memory back once the slab is a quarter full.
		if c := cap(v.slab); c > 1<<20 && len(v.slab) < c/4 {
			v.slab = slices.Clip(slices.Clone(v.slab))
			v.rows = slices.Clip(slices.Clone(v.rows))
		}
	}
}

// removeLocked drops ino's rows and slot by swap-remove; it reports
// whether there were any.
func (v *Vectors) removeLocked(ino uint64) bool {
	s, ok := v.slot[ino]
	if !ok {
		return false
	}
	// Highest row first: a swap never moves one of ino's own rows that is
	// still to be removed (they are all lower).
	rows := v.slots[s].rows
	for len(rows) > 0 {
		hi := 0
		for i, r := range rows {
			if r > rows[hi] {
				hi = i
			}
		}
		v.dropRow(rows[hi])
		rows[hi] = rows[len(rows)-1]
		rows = rows[:len(rows)-1]
	}
	last := uint32(len(v.slots) - 1)
	if s != last {
		moved := v.slots[last]
		v.slots[s] = moved
		v.slot[moved.ino] = s
		for _, r := range moved.rows {
			v.rows[r].slot = s
		}
	}
	v.slots[last] = vslot{}
	v.slots = v.slots[:last]
	delete(v.slot, ino)
	return true
}

// dropRow moves the last row into row r and shortens the slab.
func (v *Vectors) dropRow(r uint32) {
	last := uint32(len(v.rows) - 1)
	if r != last {
		d := v.dim
		copy(v.slab[int(r)*d:int(r+1)*d], v.slab[int(last)*d:])
		m := v.rows[last]
		v.rows[r] = m
		for i, x := range v.slots[m.slot].rows {
			if x == last {
				v.slots[m.slot].rows[i] = r
				break
			}
		}
	}
	v.ivfRowMoved(r, last)
	v.rows = v.rows[:last]
	v.slab = v.slab[:int(last)*v.dim]
}
