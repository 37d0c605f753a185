package search

import (
	"container/heap"
	"sort"
)

// Top-k pruning (MaxScore, Turtle and Flood 1995, with block bounds). A
// document that is not scored as a window scores its own BM25 plus what
// the windows gave it (the sequence prior), nothing else; each term's part
// of that is bounded by its list's bound, and within one block by the
// block's (postings.go). Once K documents the filters keep are found, the
// K-th score is a threshold: a document whose bound is below it cannot be
// among the K best, so the lists whose bounds together stay below it only
// add to documents the others found (they are "non-essential"), and are
// skipped forward to those documents block by block, not decoded in full.
//
// Windowed documents (short members of a sequence) are scored before, in
// full (Search), and skipped here: their scores take in their neighbours'
// words, which no list bounds.

// pcur is a cursor on one query term's list, by blocks.
type pcur struct {
	ps      *postings
	idf, ub float64
	bi, sbi int // the block of the cursor; the block a shallow move reached
	qi      int // the list's place in the query's order
	bb      float64
	bbi     int // bb is the bound of block bbi-1
	c       cursor
	doc, tf uint32
	done    bool
}

func (p *pcur) start() {
	if p.ps.n == 0 {
		p.done = true
		return
	}
	p.c = p.ps.block(0)
	p.next()
}

// next moves to the next posting.
func (p *pcur) next() {
	for {
		if d, tf, ok := p.c.next(); ok {
			p.doc, p.tf = d, tf
			return
		}
		p.bi++
		if p.bi >= p.ps.blocks() {
			p.done = true
			return
		}
		p.c = p.ps.block(p.bi)
	}
}

// seek moves to the first posting at or after document d, skipping whole
// blocks that end before it.
func (p *pcur) seek(d uint32) {
	if p.done || p.doc >= d {
		return
	}
	ps, nb := p.ps, p.ps.blocks()
	if ps.skipAt(p.bi).last < d {
		for p.bi < nb && ps.skipAt(p.bi).last < d {
			p.bi++
		}
		if p.bi == nb {
			p.done = true
			return
		}
		p.c = p.ps.block(p.bi)
		p.next()
	}
	for !p.done && p.doc < d {
		p.next()
	}
}

// blockBound bounds the list's part of document d's score from the skip
// entries alone: the bound of the block that would hold d (0 past the end).
func (p *pcur) blockBound(d uint32, t *Tuning, avg float64) float64 {
	ps, nb := p.ps, p.ps.blocks()
	p.sbi = max(p.sbi, p.bi)
	for p.sbi < nb && ps.skipAt(p.sbi).last < d {
		p.sbi++
	}
	if p.sbi == nb {
		return 0
	}
	s := ps.skipAt(p.sbi)
	return bound(p.idf, float64(s.maxTF), float64(s.minLen), t, avg)
}

// blockUB is the bound of the cursor's block.
func (p *pcur) blockUB(t *Tuning, avg float64) float64 {
	if p.bbi != p.bi+1 {
		s := p.ps.skipAt(p.bi)
		p.bb, p.bbi = bound(p.idf, float64(s.maxTF), float64(s.minLen), t, avg), p.bi+1
	}
	return p.bb
}

// pcand is a document kept by the pruned search.
type pcand struct {
	h  Hit
	id uint32
}

type pcands []pcand

func (h pcands) Len() int           { return len(h) }
func (h pcands) Less(i, j int) bool { return better(h[j].h, h[i].h) }
func (h pcands) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *pcands) Push(v any)        { *h = append(*h, v.(pcand)) }
func (h *pcands) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// slack keeps a bound from pruning a document that the rounding of a sum
// in another order would put level with the threshold.
const slack = 1 + 1e-9

// scorePlain scores the documents that are not windows (all of them when
// skipWin is false) by MaxScore, keeping the K best that the filters keep,
// and puts those among acc's touched documents. bonus bounds what the
// windows already gave a document (acc.score).
func (x *Index) scorePlain(acc *scratch, q ql, o Options, keep map[uint64]bool,
	t *Tuning, avg, bonus float64, skipWin bool) {
	lists, idfs := q.lists, q.idfs
	cs := make([]pcur, len(lists))
	for i, ps := range lists {
		cs[i] = pcur{ps: ps, idf: idfs[i], ub: ps.ubound(idfs[i], t, avg), qi: i}
		cs[i].start()
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].ub < cs[b].ub })
	// upto[i]: the sum of the bounds of lists 0..i-1.
	upto := make([]float64, len(cs)+1)
	for i, c := range cs {
		upto[i+1] = upto[i] + c.ub
	}
	best := make(pcands, 0, o.K)
	parts := make([]float64, len(lists)) // a document's score by query term
	theta := 0.0                         // the K-th kept score, once there are K
	ess := 0                             // lists before ess are non-essential
	k1, b := t.K1, t.B
	for {
		d, found := uint32(0), false
		for i := ess; i < len(cs); i++ {
			if c := &cs[i]; !c.done && (!found || c.doc < d) {
				d, found = c.doc, true
			}
		}
		if !found {
			break
		}
		full := len(best) == o.K
		if full {
			// The blocks' bounds first: most documents end here,
			// before their length is read.
			ub := upto[ess] + bonus
			for i := ess; i < len(cs); i++ {
				if c := &cs[i]; !c.done && c.doc == d {
					ub += c.blockUB(t, avg)
				}
			}
			if ub*slack < theta {
				for i := ess; i < len(cs); i++ {
					if c := &cs[i]; !c.done && c.doc == d {
						c.next()
					}
				}
				continue
			}
		}
		l := x.lens[d]
		norm := k1 * (1 - b + b*float64(l&^deadBit)/avg)
		own := 0.0
		for i := ess; i < len(cs); i++ {
			if c := &cs[i]; !c.done && c.doc == d {
				tf := float64(c.tf)
				parts[c.qi] = c.idf * tf * (k1 + 1) / (tf + norm)
				own += parts[c.qi]
				c.next()
			}
		}
		if l&deadBit != 0 {
			clear(parts)
			continue
		}
		if skipWin {
			if _, ok := x.windowed(d); ok {
				clear(parts)
				continue
			}
		}
		prior := 0.0
		if bonus > 0 {
			prior = acc.score[d]
		}
		pruned := false
		for i := ess - 1; i >= 0; i-- {
			if full && (own+prior+upto[i+1])*slack < theta {
				pruned = true
				break
			}
			c := &cs[i]
			if full && (own+prior+upto[i]+c.blockBound(d, t, avg))*slack < theta {
				continue
			}
			c.seek(d)
			if !c.done && c.doc == d {
				tf := float64(c.tf)
				parts[c.qi] = c.idf * tf * (k1 + 1) / (tf + norm)
				own += parts[c.qi]
			}
		}
		if pruned || own+prior <= 0 || full && (own+prior)*slack < theta {
			clear(parts)
			continue
		}
		// The score as an exhaustive search sums it, in the query's
		// order, whatever order the lists were read in, times the share
		// of the query's terms it holds (coverage: at most 1, so every
		// bound above still holds).
		own = q.coverage(parts, t) * sum(parts)
		clear(parts)
		total := own + prior
		if full && total < best[0].h.Score {
			continue // worse than every kept hit, whatever its key
		}
		k := x.key(d)
		h := Hit{Ino: k.Ino, Part: k.Part, Score: total, Base: own}
		if full && !better(h, best[0].h) || !x.kept(h, o, keep) {
			continue
		}
		if full {
			best[0] = pcand{h, d}
			heap.Fix(&best, 0)
		} else {
			heap.Push(&best, pcand{h, d})
		}
		if len(best) == o.K {
			theta = best[0].h.Score
			for ess < len(cs) && (upto[ess+1]+bonus)*slack < theta {
				ess++
			}
		}
	}
	for _, c := range best {
		if acc.base[c.id] == 0 && acc.score[c.id] == 0 {
			acc.touched = append(acc.touched, c.id)
		}
		acc.base[c.id], acc.score[c.id] = c.h.Base, c.h.Score
	}
}

// kept asks the filters about a hit, Filter once per file (keep).
func (x *Index) kept(h Hit, o Options, keep map[uint64]bool) bool {
	ok, asked := keep[h.Ino]
	if !asked {
		ok = o.Filter == nil || o.Filter(h.Ino)
		keep[h.Ino] = ok
	}
	return ok && (h.Part == 0 || o.Line == nil || o.Line(h.Ino, h.Part))
}
