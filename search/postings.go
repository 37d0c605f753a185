package search

import (
	"encoding/binary"
	"math"
	"sync/atomic"
)

// postings is one term's posting list, compressed: for each document in
// increasing number, the gap from the previous number and the term's
// frequency, both as uvarints (two or three bytes a posting instead of
// eight). Documents only ever get larger numbers (compaction keeps the
// order), so appending keeps the list sorted.
//
// The list is cut into blocks of blockSize postings, each with a skip
// entry: its last document, where it ends, and what bounds the score of
// any posting in it (the highest frequency, the shortest document, and
// whether it holds a short document, one that may be scored as a
// window). A search skips the blocks that cannot matter without decoding
// them (prune.go).
type postings struct {
	b     []byte
	last  uint32 // the last document number added
	n     int    // postings in b
	skips []skip
	// df caches the count of live postings, valid while the index's
	// removal generation is the one it was counted at (idf).
	df atomic.Pointer[liveCount]
}

// skip describes one block of a posting list.
type skip struct {
	last   uint32 // its last document
	end    uint32 // the offset in b where it ends
	maxTF  uint32 // its highest term frequency
	minLen uint32 // its shortest document
	short  bool   // it holds a document of at most shortDoc terms
}

type liveCount struct {
	gen uint64
	df  int
}

// blockSize is how many postings a block holds.
const blockSize = 128

func (p *postings) add(doc, tf, length uint32) {
	gap := doc
	if p.n > 0 {
		gap = doc - p.last
	}
	p.b = binary.AppendUvarint(p.b, uint64(gap))
	p.b = binary.AppendUvarint(p.b, uint64(tf))
	if p.n%blockSize == 0 {
		p.skips = append(p.skips, skip{maxTF: tf, minLen: length})
	}
	s := &p.skips[len(p.skips)-1]
	s.last, s.end = doc, uint32(len(p.b))
	s.maxTF, s.minLen = max(s.maxTF, tf), min(s.minLen, length)
	s.short = s.short || length <= shortDoc
	p.last = doc
	p.n++
}

// each calls fn for every posting in order.
func (p *postings) each(fn func(doc, tf uint32)) {
	for c := (cursor{b: p.b}); ; {
		doc, tf, ok := c.next()
		if !ok {
			return
		}
		fn(doc, tf)
	}
}

// block returns a cursor on block i of the list.
func (p *postings) block(i int) cursor {
	from, doc := uint32(0), uint32(0)
	if i > 0 {
		from, doc = p.skips[i-1].end, p.skips[i-1].last
	}
	return cursor{b: p.b[from:p.skips[i].end], doc: doc}
}

// bound is the highest BM25 contribution of a posting with frequency at
// most tf in a document of at least length l, at idf: BM25 grows with the
// frequency and falls with the length.
func bound(idf, tf, l float64, t *Tuning, avg float64) float64 {
	return idf * tf * (t.K1 + 1) / (tf + t.K1*(1-t.B+t.B*l/avg))
}

// ubound is the highest contribution of any posting of the list.
func (p *postings) ubound(idf float64, t *Tuning, avg float64) float64 {
	u := 0.0
	for _, s := range p.skips {
		u = math.Max(u, bound(idf, float64(s.maxTF), float64(s.minLen), t, avg))
	}
	return u
}

// cursor walks a posting list; next is small enough to be inlined.
type cursor struct {
	b   []byte
	doc uint32
}

func (c *cursor) next() (doc, tf uint32, ok bool) {
	if len(c.b) == 0 {
		return 0, 0, false
	}
	gap, n := binary.Uvarint(c.b)
	t, m := binary.Uvarint(c.b[n:])
	c.b = c.b[n+m:]
	c.doc += uint32(gap)
	return c.doc, uint32(t), true
}
