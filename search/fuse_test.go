package search

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestGate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, p := range []float64{0.5, 0.1, 1e-3, 1e-6, 1e-9, 1e-15, 1e-20} {
		z := tailZ(p)
		if back := 0.5 * math.Erfc(z/math.Sqrt2); math.Abs(back-max(p, 1e-15))/max(p, 1e-15) > 1e-3 {
			t.Errorf("tailZ(%g) = %v, whose tail is %g", p, z, back)
		}
	}
	// Noise passes the gate of the best of m at the rate Alpha says.
	o := FuseOptions{Alpha: 0.05}.withDefaults()
	for _, m := range []int{1, 10, 200} {
		g, pass := newGate(float64(m), o), 0
		const trials = 4000
		for range trials {
			best := math.Inf(-1)
			for range m {
				best = max(best, r.NormFloat64())
			}
			if g.weight(best) > 0 {
				pass++
			}
		}
		if rate := float64(pass) / trials; rate < 0.035 || rate > 0.06 {
			t.Errorf("best of %d: passes %.3f, want about 0.05", m, rate)
		}
	}
}

func lexHits(inos ...uint64) []Hit {
	var hs []Hit
	for i, ino := range inos {
		hs = append(hs, Hit{Ino: ino, Part: uint32(ino % 3), Score: float64(100 - i)})
	}
	return hs
}

func TestFuseRanks(t *testing.T) {
	lex := lexHits(1, 2, 3, 2) // 2 listed twice counts once, at rank 2
	d := Dist{Rows: 1000, Inos: 1000, Mean: 0.1, Std: 0.05}
	vec := []VHit{
		{Ino: 3, Chunk: 4, Score: 0.1 + 0.05*8}, // z 8: boosted to the top
		{Ino: 9, Chunk: 1, Score: 0.1 + 0.05*9}, // z 9: admitted
		{Ino: 8, Score: 0.1 + 0.05*3},           // z 3: noise, not admitted
		{Ino: 1, Score: 0.1 + 0.05*1},           // z 1: in both lists, no boost
	}
	got := Fuse(lex, vec, d, 0, FuseOptions{})
	ids := func(fs []Fused) (out []uint64) {
		for _, f := range fs {
			out = append(out, f.Ino)
		}
		return out
	}
	if !slices.Equal(ids(got), []uint64{3, 1, 2, 9}) {
		t.Fatalf("order %v: %+v", ids(got), got)
	}
	f3, f1, f9 := got[0], got[1], got[3]
	if f3.LexRank != 3 || f3.VecRank != 1 || f3.Chunk != 4 || f3.Part != 0 || f3.Weight != 1 || math.Abs(f3.Z-8) > 1e-5 {
		t.Fatalf("boosted %+v", f3)
	}
	if f1.LexRank != 1 || f1.VecRank != 4 || f1.Weight != 0 || f1.Score != 1.0/61 {
		t.Fatalf("unboosted %+v", f1)
	}
	if f9.LexRank != 0 || f9.VecRank != 2 || f9.Weight != 1 || f9.Score != 1.0/62 {
		t.Fatalf("admitted %+v", f9)
	}
	// k cuts; with no vector list, too small an index or a flat
	// distribution the lexical list comes back as it was.
	if got := Fuse(lex, vec, d, 2, FuseOptions{}); !slices.Equal(ids(got), []uint64{3, 1}) {
		t.Fatalf("k 2: %v", ids(got))
	}
	for _, d := range []Dist{{}, {Rows: 20, Inos: 20, Mean: 0.1, Std: 0.05}, {Rows: 1000, Inos: 1000, Mean: 0.5}} {
		got := Fuse(lex, vec, d, 10, FuseOptions{})
		if !slices.Equal(ids(got), []uint64{1, 2, 3}) || got[0].VecRank != 0 {
			t.Fatalf("dist %+v: %+v", d, got)
		}
	}
	// Vector-only, and a tie: the lexical side first.
	if got := Fuse(nil, vec, d, 10, FuseOptions{}); !slices.Equal(ids(got), []uint64{3, 9}) {
		t.Fatalf("vector only: %v", ids(got))
	}
	tie := Fuse(lexHits(5), []VHit{{Ino: 6, Score: 0.1 + 0.05*20}}, d, 10, FuseOptions{})
	if !slices.Equal(ids(tie), []uint64{5, 6}) || tie[0].Score != tie[1].Score {
		t.Fatalf("tie %+v", tie)
	}
	if got := Fuse(nil, nil, Dist{}, 10, FuseOptions{}); len(got) != 0 {
		t.Fatalf("empty: %+v", got)
	}
}

// corpus is an index of n memories of 1-3 random chunk vectors. With a
// common direction added to every vector (and query) the cosines all sit
// near one value, as a randomly initialised transformer's do.
type corpus struct {
	v      *Vectors
	r      *rand.Rand
	dim    int
	common []float32
}

func newCorpus(seed uint64, n, dim int, anisotropic bool) *corpus {
	c := &corpus{v: NewVectors(dim), r: rand.New(rand.NewPCG(seed, 7)), dim: dim}
	if anisotropic {
		c.common = randVec(c.r, dim)
	}
	for ino := uint64(1); ino <= uint64(n); ino++ {
		var vecs [][]float32
		for range 1 + c.r.IntN(3) {
			vecs = append(vecs, c.noise())
		}
		if err := c.v.Put(ino, vecs); err != nil {
			panic(err)
		}
	}
	return c
}

// noise is a vector that knows nothing.
func (c *corpus) noise() []float32 {
	x := randVec(c.r, c.dim)
	for i := range c.common {
		x[i] = x[i]*0.3 + c.common[i]
	}
	return x
}

// near is a unit vector at cosine cos with unit vector q.
func (c *corpus) near(q []float32, cos float64) []float32 {
	n := normalised(randVec(c.r, c.dim))
	var dot float64
	for i := range n {
		dot += float64(n[i] * q[i])
	}
	x := make([]float32, c.dim)
	for i := range n {
		x[i] = n[i] - float32(dot)*q[i] // orthogonal to q
	}
	x = normalised(x)
	for i := range x {
		x[i] = float32(cos)*q[i] + float32(math.Sqrt(1-cos*cos))*x[i]
	}
	return x
}

// lexical is a lexical ranking of 50 memories with the relevant set rel
// (5 memories) mostly near the top: four in the first ten, one in 11-25.
func (c *corpus) lexical(n int) (lex []Hit, rel map[uint64]bool) {
	perm := c.r.Perm(n)
	inos := make([]uint64, 50)
	for i := range inos {
		inos[i] = uint64(perm[i] + 1)
	}
	rel = map[uint64]bool{}
	for i, at := range append(c.r.Perm(10)[:4], 10+c.r.IntN(15)) {
		rel[uint64(perm[i]+1)] = true
		inos[i], inos[at] = inos[at], inos[i]
	}
	return lexHits(inos...), rel
}

func recallAt(ranked []uint64, rel map[uint64]bool, k int) (n int) {
	for _, ino := range ranked[:min(k, len(ranked))] {
		if rel[ino] {
			n++
		}
	}
	return n
}

// (a) A model that knows nothing changes nothing: the fused top 10 holds
// the relevant memories the lexical top 10 holds, in the lexical order in
// all but a few queries.
func TestFuseNoiseKeepsLexical(t *testing.T) {
	for _, aniso := range []bool{false, true} {
		const n, queries, k = 5000, 400, 10
		c := newCorpus(11, n, 64, aniso)
		var lexRecall, fusedRecall, reordered, strangers, plainRecall, plainReordered int
		for range queries {
			lex, rel := c.lexical(n)
			vec, d, err := c.v.SearchDist(c.noise(), 50, nil)
			if err != nil {
				t.Fatal(err)
			}
			fused := Fuse(lex, vec, d, k, FuseOptions{})
			var li, fi []uint64
			for i := range k {
				li, fi = append(li, lex[i].Ino), append(fi, fused[i].Ino)
				if fused[i].LexRank == 0 {
					strangers++
				}
			}
			lexRecall += recallAt(li, rel, k)
			fusedRecall += recallAt(fi, rel, k)
			if !slices.Equal(li, fi) {
				reordered++
			}
			// The control: plain RRF, every vector hit at full weight.
			pi := plainRRF(lex, vec, k)
			plainRecall += recallAt(pi, rel, k)
			if !slices.Equal(li, pi) {
				plainReordered++
			}
		}
		t.Logf("anisotropic %v: recall@10 lexical %d fused %d of %d; top 10 reordered in %d of %d queries, %d vector-only; plain RRF: recall %d, reordered %d",
			aniso, lexRecall, fusedRecall, 5*queries, reordered, queries, strangers, plainRecall, plainReordered)
		if fusedRecall < lexRecall || reordered > queries/50 || strangers > 0 {
			t.Errorf("noise changed the ranking")
		}
		if plainRecall >= lexRecall || plainReordered < queries/2 {
			t.Errorf("the test cannot tell: plain RRF is as good")
		}
	}
}

// (b) A model that knows brings in the answer the words missed, and lifts
// one they ranked low.
func TestFuseInformativeVectors(t *testing.T) {
	const n, queries = 5000, 100
	c := newCorpus(12, n, 128, false)
	var admitted, lifted int
	for i := range queries {
		q := normalised(c.noise())
		lex, _ := c.lexical(n)
		// The answer: a memory the lexical list lacks (missing) or holds at
		// rank 30 (low), with one chunk at cosine 0.6 with the query (about
		// 7 deviations out at 128 dimensions), 0.45 for the low one.
		missing, low := uint64(n+1+i), lex[29].Ino
		if err := c.v.Put(missing, [][]float32{c.noise(), c.near(q, 0.6)}); err != nil {
			t.Fatal(err)
		}
		if err := c.v.Put(low, [][]float32{c.near(q, 0.45)}); err != nil {
			t.Fatal(err)
		}
		vec, d, err := c.v.SearchDist(q, 50, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range Fuse(lex, vec, d, 10, FuseOptions{}) {
			switch f.Ino {
			case missing:
				admitted++
				if f.LexRank != 0 || f.VecRank == 0 || f.Chunk != 1 {
					t.Fatalf("admitted %+v", f)
				}
			case low:
				lifted++
			}
		}
		c.v.Remove(missing)
	}
	t.Logf("in the fused top 10: %d of %d missing answers, %d of %d low ones", admitted, queries, lifted, queries)
	if admitted < queries*95/100 || lifted < queries*95/100 {
		t.Errorf("informative vectors ignored")
	}
}

// plainRRF is Reciprocal Rank Fusion without the test, both lists at
// weight 1, k0 = 60.
func plainRRF(lex []Hit, vec []VHit, k int) []uint64 {
	score := map[uint64]float64{}
	for i, h := range lex {
		score[h.Ino] += 1 / (60 + float64(i+1))
	}
	for i, h := range vec {
		score[h.Ino] += 1 / (60 + float64(i+1))
	}
	var out []uint64
	for ino := range score {
		out = append(out, ino)
	}
	slices.SortFunc(out, func(a, b uint64) int {
		if score[a] != score[b] {
			return cmp.Compare(score[b], score[a])
		}
		return cmp.Compare(a, b)
	})
	return out[:min(k, len(out))]
}

func TestGateFloor(t *testing.T) {
	g := newGate(1e20, FuseOptions{}.withDefaults())
	if g.weight(g.z0-0.1) != 0 || g.weight(g.z0) != 1 {
		t.Fatalf("gate %+v", g)
	}
}
