package search

import (
	"sort"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
)

// The term dictionary: the posting lists of a loaded segment (base,
// sorted terms found by binary search, the lists where they lie) under
// the lists made or changed since (Index.over, in the heap). A term in
// over shadows the base's: the first change to a base list copies its
// skip entries into over, and its bytes on their first append (their
// capacity ends where they do).

// base is the read-only dictionary of a loaded segment.
type base struct {
	seg *segment
	// hot keeps the lists queries asked for, as postings that point into
	// the segment, with their live counts (idf), so that a common term
	// is not counted again on every query.
	hot *lru.Cache[string, *postings]
}

// hotTerms is how many of a segment's lists stay ready in memory.
const hotTerms = 1 << 14

func newBase(seg *segment) *base {
	c, _ := lru.New[string, *postings](hotTerms)
	return &base{seg: seg, hot: c}
}

// term is the i-th term of the segment.
func (b *base) term(i int) string {
	s := b.seg
	from := uint32(0)
	if i > 0 {
		from = s.termEnds[i-1]
	}
	end := s.termEnds[i]
	if from > end || int(end) > len(s.termBlob) {
		return ""
	}
	return s.termBlob[from:end]
}

// find is the index of term in the segment, or -1.
func (b *base) find(term string) int {
	i := sort.Search(b.seg.terms, func(i int) bool { return strings.Compare(b.term(i), term) >= 0 })
	if i < b.seg.terms && b.term(i) == term {
		return i
	}
	return -1
}

// lookup returns the list of term, nil if the segment has none (or a
// list its own bounds do not hold).
func (b *base) lookup(term string) *postings {
	if b == nil {
		return nil
	}
	if p, ok := b.hot.Get(term); ok {
		return p
	}
	i := b.find(term)
	if i < 0 {
		return nil
	}
	p := b.list(i)
	if p != nil {
		b.hot.Add(term, p)
	}
	return p
}

// docsOf is the documents of ino in the segment.
func (b *base) docsOf(ino uint64) []uint32 {
	s := b.seg
	o := s.inoOrder
	i := sort.Search(len(o), func(k int) bool { return s.inos[o[k]] >= ino })
	j := i
	for j < len(o) && s.inos[o[j]] == ino {
		j++
	}
	if i == j {
		return nil
	}
	return o[i:j:j]
}

// list makes the postings of the i-th list, checked against its own
// bounds (nil if they do not hold).
func (b *base) list(i int) *postings {
	s := b.seg
	from, sfrom := uint64(0), uint32(0)
	if i > 0 {
		from, sfrom = s.listEnds[i-1], s.skipEnds[i-1]
	}
	end, send := s.listEnds[i], s.skipEnds[i]
	if from > end || end > uint64(len(s.lists)) || sfrom > send || int(send) > len(s.skips) {
		return nil
	}
	p := &postings{b: s.lists[from:end:end], n: s.counts[i], last: s.lasts[i]}
	sk := s.skips[sfrom:send:send]
	if len(sk) != p.blocks() || !skipsHold(sk, len(p.b), s.docs, p.last) {
		return nil
	}
	if len(sk) > 0 {
		p.first = sk[0]
		if len(sk) > 1 {
			p.ext = &postingsExt{more: sk[1:]}
		}
	}
	return p
}

// skipsHold reports whether skip entries fit a list of size bytes whose
// last document is last, in an index of n documents.
func skipsHold(sk []skip, size, n int, last uint32) bool {
	prev := uint32(0)
	for j, s := range sk {
		if s.end < prev || int(s.end) > size || int(s.last) >= n || j > 0 && s.last <= sk[j-1].last {
			return false
		}
		prev = s.end
	}
	return len(sk) == 0 || int(sk[len(sk)-1].end) == size && sk[len(sk)-1].last == last
}

// list returns the posting list of term (nil if none), for reading.
// Caller holds the lock, for reading at least.
func (x *Index) list(term string) *postings {
	if p, ok := x.over[term]; ok {
		return p
	}
	return x.base.lookup(term)
}

// listForWrite returns the list of term to add to, made in over if need
// be. Caller holds the write lock.
func (x *Index) listForWrite(term string) *postings {
	if p := x.over[term]; p != nil {
		return p
	}
	p := &postings{}
	if bp := x.base.lookup(term); bp != nil {
		// Its entries are copied (add changes the last one); its bytes
		// are copied by the first append.
		p.b, p.n, p.last, p.first = bp.b, bp.n, bp.last, bp.first
		if bp.ext != nil {
			p.ext = &postingsExt{more: append([]skip(nil), bp.ext.more...)}
		}
	}
	x.over[term] = p
	return p
}

// eachList calls fn for every term and its list, the base's first (in
// term order, those over shadows left out), then over's.
func (x *Index) eachList(fn func(term string, p *postings)) {
	if b := x.base; b != nil {
		for i := range b.seg.terms {
			t := b.term(i)
			if _, ok := x.over[t]; ok {
				continue
			}
			if p := b.list(i); p != nil {
				fn(t, p)
			}
		}
	}
	for t, p := range x.over {
		fn(t, p)
	}
}

// terms is the number of terms (an upper bound once over shadows base
// terms).
func (x *Index) terms() int {
	n := len(x.over)
	if x.base != nil {
		n += x.base.seg.terms
	}
	return n
}
