package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// check verifies the index's invariants: a dense slab, rows and slots
// pointing at each other, the slot map matching the slots.
func (v *Vectors) check() error {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if len(v.slab) != len(v.rows)*v.dim {
		return fmt.Errorf("slab %d values, %d rows of %d", len(v.slab), len(v.rows), v.dim)
	}
	if len(v.slot) != len(v.slots) {
		return fmt.Errorf("%d slots, map of %d", len(v.slots), len(v.slot))
	}
	seen := make([]bool, len(v.rows))
	for s, sl := range v.slots {
		if v.slot[sl.ino] != uint32(s) {
			return fmt.Errorf("ino %d maps to %d, is in slot %d", sl.ino, v.slot[sl.ino], s)
		}
		if len(sl.rows) == 0 {
			return fmt.Errorf("slot %d has no rows", s)
		}
		for _, r := range sl.rows {
			if int(r) >= len(v.rows) || seen[r] || v.rows[r].slot != uint32(s) {
				return fmt.Errorf("slot %d row %d inconsistent", s, r)
			}
			seen[r] = true
		}
	}
	for r, ok := range seen {
		if !ok {
			return fmt.Errorf("row %d in no slot", r)
		}
	}
	return nil
}

// vec returns the stored (normalised) vector of ino's chunk c.
func (v *Vectors) vec(ino uint64, c uint32) []float32 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, r := range v.slots[v.slot[ino]].rows {
		if v.rows[r].chunk == c {
			return v.slab[int(r)*v.dim : int(r+1)*v.dim]
		}
	}
	return nil
}

// bruteForce ranks the memories of ref (normalised chunk vectors) for q
// in float64.
func bruteForce(ref map[uint64][][]float32, q []float32, k int, filter func(uint64) bool) []VHit {
	var all []VHit
	qn := normalised(q)
	for ino, vecs := range ref {
		if filter != nil && !filter(ino) {
			continue
		}
		best := VHit{Ino: ino, Score: float32(math.Inf(-1))}
		for c, x := range vecs {
			var s float64
			for i := range x {
				s += float64(x[i]) * float64(qn[i])
			}
			if float32(s) > best.Score {
				best.Chunk, best.Score = uint32(c), float32(s)
			}
		}
		all = append(all, best)
	}
	slices.SortFunc(all, func(a, b VHit) int {
		if vbetter(a, b) {
			return -1
		}
		return 1
	})
	return all[:min(k, len(all))]
}

func normalised(x []float32) []float32 {
	n, _ := invNorm(x)
	out := make([]float32, len(x))
	for i, f := range x {
		out[i] = f * n
	}
	return out
}

// sameHits compares a search with the reference: the same scores rank by
// rank, and each hit's score right for its memory (near-ties may come in
// either order).
func sameHits(got, want []VHit, ref map[uint64][][]float32, q []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d hits, want %d", len(got), len(want))
	}
	qn := normalised(q)
	for i := range got {
		if d := math.Abs(float64(got[i].Score - want[i].Score)); d > 1e-5 {
			return fmt.Errorf("hit %d: %+v, want %+v", i, got[i], want[i])
		}
		x := ref[got[i].Ino]
		if x == nil || int(got[i].Chunk) >= len(x) {
			return fmt.Errorf("hit %d: %+v not in the index", i, got[i])
		}
		var s float64
		for j := range qn {
			s += float64(x[got[i].Chunk][j]) * float64(qn[j])
		}
		if math.Abs(s-float64(got[i].Score)) > 1e-5 {
			return fmt.Errorf("hit %d: %+v, its chunk scores %v", i, got[i], s)
		}
	}
	return nil
}

func TestVectorsMatchBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dim := rapid.IntRange(1, 20).Draw(t, "dim")
		v := NewVectors(0)
		ref := map[uint64][][]float32{}
		genVec := rapid.SliceOfN(rapid.IntRange(-3, 3), dim, dim).Filter(func(x []int) bool {
			return slices.ContainsFunc(x, func(i int) bool { return i != 0 })
		})
		toF := func(x []int) []float32 {
			out := make([]float32, len(x))
			for i, n := range x {
				out[i] = float32(n)
			}
			return out
		}
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			ino := rapid.Uint64Range(1, 15).Draw(t, "ino")
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				v.Remove(ino)
				delete(ref, ino)
			default:
				var vecs, norm [][]float32
				for range rapid.IntRange(1, 4).Draw(t, "chunks") {
					x := toF(genVec.Draw(t, "vec"))
					vecs, norm = append(vecs, x), append(norm, normalised(x))
				}
				if err := v.Put(ino, vecs); err != nil {
					t.Fatal(err)
				}
				ref[ino] = norm
			}
			if err := v.check(); err != nil {
				t.Fatal(err)
			}
		}
		if v.Len() != countRows(ref) || v.Inos() != len(ref) {
			t.Fatalf("Len %d Inos %d, want %d %d", v.Len(), v.Inos(), countRows(ref), len(ref))
		}
		for ino, vecs := range ref {
			for c, x := range vecs {
				if !slices.Equal(v.vec(ino, uint32(c)), x) {
					t.Fatalf("ino %d chunk %d: %v, want %v", ino, c, v.vec(ino, uint32(c)), x)
				}
			}
		}
		var filter func(uint64) bool
		if rapid.Bool().Draw(t, "filtered") {
			odd := rapid.Bool().Draw(t, "odd")
			filter = func(ino uint64) bool { return ino%2 == 1 == odd }
		}
		for range 5 {
			q := toF(genVec.Draw(t, "query"))
			k := rapid.IntRange(1, 20).Draw(t, "k")
			if err := sameHits(v.Search(q, k, filter), bruteForce(ref, q, k, filter), ref, q); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func countRows(ref map[uint64][][]float32) (n int) {
	for _, x := range ref {
		n += len(x)
	}
	return n
}

func randVec(r *rand.Rand, dim int) []float32 {
	x := make([]float32, dim)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// A large index is searched in parallel shards; the filter then falls
// back to ranking every memory when it rejects most.
func TestVectorsLargeParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const dim = 12
	v, ref := NewVectors(dim), map[uint64][][]float32{}
	for ino := uint64(1); ino <= 15000; ino++ {
		var vecs, norm [][]float32
		for range 1 + int(ino%3) {
			x := randVec(r, dim)
			vecs, norm = append(vecs, x), append(norm, normalised(x))
		}
		if err := v.Put(ino, vecs); err != nil {
			t.Fatal(err)
		}
		ref[ino] = norm
	}
	for ino := uint64(1); ino <= 15000; ino += 7 {
		v.Remove(ino)
		delete(ref, ino)
	}
	if v.Len() < 4*shardRows {
		t.Fatalf("only %d rows", v.Len())
	}
	if err := v.check(); err != nil {
		t.Fatal(err)
	}
	rare := func(ino uint64) bool { return ino%1000 == 3 }
	for i := range 20 {
		q := randVec(r, dim)
		f := map[bool]func(uint64) bool{true: rare}[i%2 == 0]
		if err := sameHits(v.Search(q, 10, f), bruteForce(ref, q, 10, f), ref, q); err != nil {
			t.Fatal(err)
		}
	}
}

func TestVectorsEdges(t *testing.T) {
	v := NewVectors(0)
	if v.Search([]float32{1, 0}, 5, nil) != nil || v.Dim() != 0 || v.Len() != 0 {
		t.Fatal("empty index")
	}
	if err := v.Put(1, [][]float32{{1, 0, 0}, {0, 1}}); !errors.Is(err, ErrDim) {
		t.Fatalf("ragged chunks: %v", err)
	}
	if err := v.Put(1, [][]float32{{3, 4, 0}}); err != nil || v.Dim() != 3 {
		t.Fatalf("put: %v, dim %d", err, v.Dim())
	}
	if x := v.vec(1, 0); math.Abs(float64(x[0])-0.6) > 1e-7 || math.Abs(float64(x[1])-0.8) > 1e-7 {
		t.Fatalf("not normalised: %v", x)
	}
	for _, bad := range [][]float32{{1, 2}, {0, 0, 0}, {float32(math.NaN()), 1, 1}, {float32(math.Inf(1)), 0, 0}} {
		if err := v.Put(2, [][]float32{{1, 1, 1}, bad}); err == nil {
			t.Fatalf("put %v: no error", bad)
		}
	}
	if v.Len() != 1 || v.Inos() != 1 {
		t.Fatal("a failed Put changed the index")
	}
	if _, _, err := v.SearchDist([]float32{1, 0}, 5, nil); !errors.Is(err, ErrDim) {
		t.Fatalf("query of dim 2: %v", err)
	}
	if _, _, err := v.SearchDist([]float32{0, 0, 0}, 5, nil); err == nil {
		t.Fatal("zero query: no error")
	}
	if err := v.Put(2, [][]float32{{0, 0, 1}, {1, 0, 0}}); err != nil {
		t.Fatal(err)
	}
	// k larger than the index; the best chunk counts.
	hits := v.Search([]float32{1, 0, 0.1}, 50, nil)
	if len(hits) != 2 || hits[0].Ino != 2 || hits[0].Chunk != 1 || hits[1].Ino != 1 {
		t.Fatalf("hits %+v", hits)
	}
	if h := v.Search([]float32{1, 0, 0}, 0, nil); h != nil {
		t.Fatalf("k 0: %+v", h)
	}
	if h := v.Search([]float32{1, 0, 0}, 5, func(uint64) bool { return false }); len(h) != 0 {
		t.Fatalf("all filtered: %+v", h)
	}
	// Replacing keeps one set of chunks; removing everything keeps the
	// dimension until Reset.
	if err := v.Put(2, [][]float32{{0, 1, 0}}); err != nil || v.Len() != 2 {
		t.Fatalf("replace: %v, %d rows", err, v.Len())
	}
	v.Remove(1)
	v.Remove(2)
	v.Remove(3)
	if v.Len() != 0 || v.Dim() != 3 || v.check() != nil {
		t.Fatalf("after removes: %d rows, dim %d", v.Len(), v.Dim())
	}
	if err := v.Put(4, [][]float32{{1, 0}}); !errors.Is(err, ErrDim) {
		t.Fatalf("dim changed: %v", err)
	}
	v.Reset()
	if err := v.Put(4, [][]float32{{1, 0}}); err != nil || v.Dim() != 2 {
		t.Fatalf("after reset: %v", err)
	}
	if err := NewVectors(4).Put(1, [][]float32{{1, 0}}); !errors.Is(err, ErrDim) {
		t.Fatalf("fixed dim: %v", err)
	}
}

func TestVectorsDist(t *testing.T) {
	v := NewVectors(2)
	for i, x := range [][]float32{{1, 0}, {0, 1}, {-1, 0}, {1, 1}} {
		if err := v.Put(uint64(i+1), [][]float32{x}); err != nil {
			t.Fatal(err)
		}
	}
	_, d, err := v.SearchDist([]float32{1, 0}, 1, nil)
	// Cosines 1, 0, -1, 0.7071.
	mean := (1 + 0 - 1 + math.Sqrt2/2) / 4
	std := math.Sqrt((1+0+1+0.5)/4 - mean*mean)
	if err != nil || d.Rows != 4 || d.Inos != 4 || math.Abs(d.Mean-mean) > 1e-6 || math.Abs(d.Std-std) > 1e-6 {
		t.Fatalf("dist %+v (%v), want mean %v std %v", d, err, mean, std)
	}
}

func TestVectorsConcurrent(t *testing.T) {
	const dim = 16
	v := NewVectors(dim)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range 400 {
				ino := uint64(r.IntN(200))
				switch i % 3 {
				case 0:
					v.Remove(ino)
				default:
					if err := v.Put(ino, [][]float32{randVec(r, dim), randVec(r, dim)}); err != nil {
						t.Error(err)
					}
				}
			}
		})
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 10))
			for range 300 {
				hits := v.Search(randVec(r, dim), 5, func(ino uint64) bool { return ino%2 == 0 })
				for i := 1; i < len(hits); i++ {
					if vbetter(hits[i], hits[i-1]) || hits[i].Ino%2 != 0 {
						t.Errorf("hits %+v", hits)
					}
				}
				_ = v.Len()
			}
		})
	}
	wg.Wait()
	if err := v.check(); err != nil {
		t.Fatal(err)
	}
}

func TestVectorsShrink(t *testing.T) {
	v := benchVectors(t, 3000)
	for ino := uint64(1); ino <= 2500; ino++ {
		v.Remove(ino)
	}
	if err := v.check(); err != nil || v.Len() != 500 || cap(v.slab) > 4*500*benchDim {
		t.Fatalf("%v: %d rows, slab cap %d", err, v.Len(), cap(v.slab))
	}
	if h := v.Search(v.vec(2900, 0), 1, nil); len(h) != 1 || h[0].Ino != 2900 {
		t.Fatalf("hits %+v", h)
	}
}
