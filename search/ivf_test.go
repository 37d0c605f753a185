package search

import (
	"math/rand/v2"
	"testing"
	"time"
)

// clustered returns n vectors of dim d around c random centres (noise
// spread sigma): embeddings of related texts gather so.
func clustered(r *rand.Rand, n, d, c int, sigma float64) [][]float32 {
	centres := make([][]float32, c)
	for i := range centres {
		centres[i] = make([]float32, d)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		ctr := centres[r.IntN(c)]
		x := make([]float32, d)
		for j := range x {
			x[j] = ctr[j] + float32(sigma*r.NormFloat64())
		}
		out[i] = x
	}
	return out
}

// withIVF lowers the IVF's thresholds for a test.
func withIVF(t *testing.T, min, lists, probe int) {
	m, l, p := ivfMin, ivfLists, ivfProbe
	ivfMin, ivfLists, ivfProbe = min, lists, probe
	t.Cleanup(func() { ivfMin, ivfLists, ivfProbe = m, l, p })
}

func waitIVF(t *testing.T, v *Vectors) {
	t.Helper()
	for range 1000 {
		v.mu.RLock()
		ok := v.ivf.ready(len(v.rows))
		v.mu.RUnlock()
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the IVF lists were never filed")
}

// checkIVF verifies that every row is in exactly the list and position it
// says.
func checkIVF(t *testing.T, v *Vectors) {
	t.Helper()
	v.mu.RLock()
	defer v.mu.RUnlock()
	x := v.ivf
	if x == nil {
		t.Fatal("no IVF")
	}
	seen := make([]int, len(v.rows))
	for c, l := range x.lists {
		for p, r := range l {
			if int(r) >= len(v.rows) || x.list[r] != uint16(c) || x.pos[r] != uint32(p) {
				t.Fatalf("row %d in list %d at %d, but it says list %d at %d (%d rows)", r, c, p, x.list[r], x.pos[r], len(v.rows))
			}
			seen[r]++
		}
	}
	for r, n := range seen {
		if (r < x.filed) != (n == 1) || n > 1 {
			t.Fatalf("row %d is in %d lists (%d filed)", r, n, x.filed)
		}
	}
}

// TestIVFRecall: past ivfMin rows the index files its rows under trained
// centroids; its searches find at least 90% of what exact search finds on
// clustered vectors, estimate the cosines' distribution, keep the lists
// right through replacements and removals, and widen for a filter.
func TestIVFRecall(t *testing.T) {
	withIVF(t, 8000, 64, 6)
	r := rand.New(rand.NewPCG(7, 7))
	const d = 64
	vecs := clustered(r, 12000, d, 40, 0.6)
	v := NewVectors(d)
	for i, x := range vecs {
		if err := v.Put(uint64(i+1), [][]float32{x}); err != nil {
			t.Fatal(err)
		}
	}
	waitIVF(t, v)
	checkIVF(t, v)

	queries := clustered(r, 200, d, 40, 0.6)
	var found, want int
	for _, q := range queries {
		exact := v.SearchExact(q, 10, nil)
		approx, dist, err := v.SearchDist(q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, full, _ := v.search(q, 10, nil, false)
		if dist.Rows != full.Rows || dist.Mean-full.Mean > 0.02 || full.Mean-dist.Mean > 0.02 || dist.Std-full.Std > 0.02 || full.Std-dist.Std > 0.02 {
			t.Errorf("estimated distribution %+v, exact %+v", dist, full)
		}
		in := map[uint64]bool{}
		for _, h := range approx {
			in[h.Ino] = true
		}
		for _, h := range exact {
			want++
			if in[h.Ino] {
				found++
			}
		}
	}
	if rec := float64(found) / float64(want); rec < 0.9 {
		t.Errorf("recall@10 against exact search: %.3f, want >= 0.9", rec)
	} else {
		t.Logf("recall@10 against exact search: %.3f", rec)
	}

	// Replace and remove a third, in a random order: the lists follow.
	for _, i := range r.Perm(len(vecs))[:4000] {
		if i%2 == 0 {
			v.Remove(uint64(i + 1))
		} else if err := v.Put(uint64(i+1), [][]float32{vecs[(i+1)%len(vecs)]}); err != nil {
			t.Fatal(err)
		}
	}
	checkIVF(t, v)
	// A new memory is its own query's best hit.
	probe := clustered(r, 1, d, 1, 0.1)[0]
	if err := v.Put(999999, [][]float32{probe}); err != nil {
		t.Fatal(err)
	}
	if hits := v.Search(probe, 1, nil); len(hits) != 1 || hits[0].Ino != 999999 {
		t.Errorf("the memory just put is not found by its own vector: %v", hits)
	}
	// A filter that keeps one memory far from the query widens the probe.
	far := uint64(2) // i = 1: replaced or untouched, never removed
	if hits := v.Search(probe, 10, func(ino uint64) bool { return ino == far }); len(hits) != 1 || hits[0].Ino != far {
		t.Errorf("filtered search: %v, want only inode %d", hits, far)
	}
	// Shrunk below half of ivfMin: exact search again.
	for i := range len(vecs) {
		v.Remove(uint64(i + 1))
	}
	v.mu.RLock()
	gone := v.ivf == nil
	v.mu.RUnlock()
	if !gone {
		t.Error("an index shrunk below half of ivfMin keeps its lists")
	}
	if hits := v.Search(probe, 1, nil); len(hits) != 1 || hits[0].Ino != 999999 {
		t.Errorf("after shrinking: %v", hits)
	}
	v.Reset()
	if v.Len() != 0 {
		t.Error("Reset left rows")
	}
}
