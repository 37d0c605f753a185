package search

import (
	"cmp"
	"math"
	"slices"
)

// Rank fusion of the lexical and the vector lists.
//
// Fuse is Reciprocal Rank Fusion: a memory scores Σ w_i / (k0 + rank_i)
// over the lists it is in (ranks from 1, k0 = 60). Plain RRF trusts every
// list: with an embedding model that knows nothing (randomly initialised,
// or far out of its domain) the vector ranks are noise, and noise at full
// weight reorders the lexical list and pushes vector-only strangers into
// the top k. So the vector side counts only as far as it beats noise.
//
// The test is a significance test of the hit's cosine. Under the null
// hypothesis that the model carries no information about the query, a
// chunk's cosine with the query is a draw from the query's cosine
// distribution over all chunk vectors, whose mean and standard deviation
// SearchDist measures in the same pass; z-scores make the test blind to
// where a model's cosines sit (a random transformer's all lie near 0.9, a
// trained one's near 0.1). A vector hit is the best of m chunks, so it is
// measured against the best of m draws: it starts to count at the z that
// noise would give any of m chunks with probability Alpha (z0, from
// m·P(Z > z0) = Alpha, a union bound), and counts fully from the z it
// would reach with probability AlphaFull (z1), at weight
//
//	g = clamp((z - z0) / (z1 - z0), 0, 1)
//
// times the vector list's weight. m is every chunk of the index for a
// memory the lexical list does not hold (admitting it means picking it out
// of all of them), but only the chunks of the lexical list's memories for
// one it holds (a boost: the question is only whether the model singles
// it out among those). With the defaults a vector hit starts to count
// about 5.2 deviations out in an index of 10k chunks (5.6 at 100k) and
// fully at 6.0 (6.4); a boost among 50 one-chunk memories from 4.1 to
// 5.1. So with a model that knows nothing, a vector hit counts at all in
// at most about two queries in a thousand (one for admission, one for a
// boost), and otherwise the fused list is the lexical list in its order;
// while a model that puts the answer's chunk far out in the tail of the
// distribution (a trained encoder typically does) lifts it, or brings it
// in when the words missed it. Once the test is passed the two lists
// weigh the same, RRF's usual: the test, not a lower weight, is what
// protects the lexical ranking (with k0 = 60 a vector weight of 0.8 would
// keep even the best vector-only hit out of the top 15, however sure the
// model), and ties go to the lexical side. The rule needs no labelled data
// and holds for any index size and model; it gives up the small gains of
// a model too weak to single anything out, which is the point.
//
// The null hypothesis takes the cosines to be roughly normal. Lighter
// tails (random unit vectors' cosines are bounded) only make the test
// stricter; what it cannot see through is a lopsided corpus, where most
// vectors sit in one tight cluster (thousands of near-identical log
// lines): the cluster makes the deviation small, and to a model that
// knows nothing the few vectors outside it can look significant.

// FuseOptions shape Fuse; zero fields take the defaults.
type FuseOptions struct {
	K0      float64 // rank constant (60)
	Lexical float64 // weight of the lexical list (1)
	Vector  float64 // weight of the vector list at full confidence (1)
	// Alpha is the chance that noise would give a vector hit the cosine at
	// which it starts to count (0.001), AlphaFull the chance at which it
	// counts fully (0.00001).
	Alpha     float64
	AlphaFull float64
	// MinRows: with fewer chunk vectors in the index the distribution is
	// not known well enough and the vector list is ignored (32).
	MinRows int
}

func (o FuseOptions) withDefaults() FuseOptions {
	def := func(x *float64, d float64) {
		if *x <= 0 {
			*x = d
		}
	}
	def(&o.K0, 60)
	def(&o.Lexical, 1)
	def(&o.Vector, 1)
	def(&o.Alpha, 1e-3)
	def(&o.AlphaFull, 1e-5)
	o.AlphaFull = min(o.AlphaFull, o.Alpha/10)
	if o.MinRows <= 0 {
		o.MinRows = 32
	}
	return o
}

// Fused is one memory of a fused ranking.
type Fused struct {
	Ino   uint64
	Score float64 // the fused score
	// LexRank and VecRank are the memory's ranks (from 1) in the lexical
	// and vector lists, 0 when it is not in one.
	LexRank, VecRank int
	Part             uint32  // the lexical hit's best part (LexRank > 0)
	Chunk            uint32  // the vector hit's best chunk (VecRank > 0)
	Cos              float32 // the vector hit's cosine (VecRank > 0)
	Z                float64 // its z-score in the query's cosine distribution
	Weight           float64 // g: the confidence its vector rank counted with
}

// Fuse merges a lexical ranking (Index.Search) and a vector ranking
// (Vectors.SearchDist, with the distribution it returned) into the k best
// memories (k <= 0: all), best first; ties go to the better lexical rank,
// then the better vector rank, then the lower inode. A document (a file,
// or a log's line) listed twice in one list counts at its first place.
func Fuse(lexical []Hit, vector []VHit, d Dist, k int, o FuseOptions) []Fused {
	o = o.withDefaults()
	// A log's lines are lexical hits of their own; its vectors are the
	// file's, so a vector hit lifts the file's best line (at) and enters
	// as the whole file (Part 0) when no line of it is a lexical hit.
	at := make(map[uint64]int, len(lexical)+len(vector))
	seenKey := make(map[Key]bool, len(lexical))
	out := make([]Fused, 0, len(lexical)+len(vector))
	for i, h := range lexical {
		if k := (Key{h.Ino, h.Part}); seenKey[k] {
			continue
		} else {
			seenKey[k] = true
		}
		if _, dup := at[h.Ino]; !dup {
			at[h.Ino] = len(out)
		}
		out = append(out, Fused{Ino: h.Ino, LexRank: i + 1, Part: h.Part, Score: o.Lexical / (o.K0 + float64(i+1))})
	}
	if d.Rows >= o.MinRows && d.Std > 0 && d.Inos > 0 {
		perIno := float64(d.Rows) / float64(d.Inos) // chunks a memory
		admit := newGate(float64(d.Rows), o)
		boost := newGate(float64(len(at))*perIno, o)
		seen := map[uint64]bool{}
		for i, h := range vector {
			if seen[h.Ino] {
				continue
			}
			seen[h.Ino] = true
			z := (float64(h.Score) - d.Mean) / d.Std
			j, inLex := at[h.Ino]
			gt := admit
			if inLex {
				gt = boost
			}
			g := gt.weight(z)
			if !inLex {
				if g == 0 {
					continue // noise: not admitted
				}
				at[h.Ino], j = len(out), len(out)
				out = append(out, Fused{Ino: h.Ino})
			}
			f := &out[j]
			f.VecRank, f.Chunk, f.Cos, f.Z, f.Weight = i+1, h.Chunk, h.Score, z, g
			f.Score += g * o.Vector / (o.K0 + float64(i+1))
		}
	}
	slices.SortFunc(out, func(a, b Fused) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(rankKey(a.LexRank), rankKey(b.LexRank)); c != 0 {
			return c
		}
		if c := cmp.Compare(rankKey(a.VecRank), rankKey(b.VecRank)); c != 0 {
			return c
		}
		return cmp.Compare(a.Ino, b.Ino)
	})
	if k > 0 && len(out) > k {
		out = out[:k]
	}
	return out
}

// rankKey orders ranks with absent (0) last.
func rankKey(r int) int {
	if r == 0 {
		return math.MaxInt
	}
	return r
}

// gate is the z from which a vector hit counts (z0) and the z from which
// it counts fully (z1), for the best of m chunks.
type gate struct{ z0, z1 float64 }

func newGate(m float64, o FuseOptions) gate {
	m = max(m, 1)
	return gate{tailZ(o.Alpha / m), tailZ(o.AlphaFull / m)}
}

func (g gate) weight(z float64) float64 {
	if g.z1 <= g.z0 { // m so large that both probabilities hit tailZ's floor
		if z >= g.z0 {
			return 1
		}
		return 0
	}
	return min(1, max(0, (z-g.z0)/(g.z1-g.z0)))
}

// tailZ is the z that a standard normal value exceeds with probability p
// (p is kept within [1e-15, 0.5], where Erfcinv is accurate).
func tailZ(p float64) float64 { return math.Sqrt2 * math.Erfcinv(2*min(max(p, 1e-15), 0.5)) }
