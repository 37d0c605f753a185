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
	b    []byte
	last uint32 // the last document number added
	n    uint32 // postings in b
	// first is the skip entry of block 0; a list of more blocks keeps
	// the others in ext (most lists have one block and no ext).
	first skip
	ext   *postingsExt
	// pendDoc and pendTF count a document's occurrences of the term
	// while it is added (Index.addLocked): the document's number + 1,
	// and the count so far.
	pendDoc, pendTF uint32
}

// postingsExt is what a list of more than one block adds.
type postingsExt struct {
	more []skip // the skip entries of blocks 1, 2, …
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

// liveCount is a list's live postings, df of its first n, counted at
// removal generation gen (the postings added since are live).
type liveCount struct {
	gen uint64
	df  int
	n   uint32
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
		if p.n > 0 {
			if p.ext == nil {
				p.ext = &postingsExt{}
			}
			p.ext.more = append(p.ext.more, skip{})
		}
		*p.skipAt(int(p.n / blockSize)) = skip{maxTF: tf, minLen: length}
	}
	s := p.skipAt(int(p.n / blockSize))
	s.last, s.end = doc, uint32(len(p.b))
	s.maxTF, s.minLen = max(s.maxTF, tf), min(s.minLen, length)
	s.short = s.short || length <= shortDoc
	p.last = doc
	p.n++
}

// each calls fn for every posting in order.
func (p *postings) each(fn func(doc, tf uint32)) {
	for c := p.cursor(); ; {
		doc, tf, ok := c.next()
		if !ok {
			return
		}
		fn(doc, tf)
	}
}

// liveCount is the count of live postings kept at removal generation gen,
// or -1.
func (p *postings) liveCount(gen uint64) int {
	if p.ext != nil {
		if c := p.ext.df.Load(); c != nil && c.gen == gen {
			return c.df + int(p.n-c.n)
		}
	}
	return -1
}

// blocks is the number of blocks of the list.
func (p *postings) blocks() int { return int(p.n+blockSize-1) / blockSize }

// skipAt is the skip entry of block i.
func (p *postings) skipAt(i int) *skip {
	if i == 0 {
		return &p.first
	}
	return &p.ext.more[i-1]
}

// skipList is every skip entry, in a slice of its own.
func (p *postings) skipList() []skip {
	if p.n == 0 {
		return nil
	}
	if p.ext == nil {
		return []skip{p.first}
	}
	return append([]skip{p.first}, p.ext.more...)
}

// block returns a cursor on block i of the list.
func (p *postings) block(i int) cursor {
	from, doc := uint32(0), uint32(0)
	if i > 0 {
		prev := p.skipAt(i - 1)
		from, doc = prev.end, prev.last
	}
	s := p.skipAt(i)
	return cursor{b: p.b[from:s.end], doc: doc, max: s.last}
}

// cursor returns a cursor on the whole list.
func (p *postings) cursor() cursor { return cursor{b: p.b, max: p.last} }

// bound is the highest BM25 contribution of a posting with frequency at
// most tf in a document of at least length l, at idf: BM25 grows with the
// frequency and falls with the length.
func bound(idf, tf, l float64, t *Tuning, avg float64) float64 {
	return idf * tf * (t.K1 + 1) / (tf + t.K1*(1-t.B+t.B*l/avg))
}

// ubound is the highest contribution of any posting of the list.
func (p *postings) ubound(idf float64, t *Tuning, avg float64) float64 {
	u := 0.0
	for i := range p.blocks() {
		s := p.skipAt(i)
		u = math.Max(u, bound(idf, float64(s.maxTF), float64(s.minLen), t, avg))
	}
	return u
}

// cursor walks a posting list; a list cut short or with an overlong
// varint ends where it stops making sense.
// cursor reads a list's postings; max is the highest document it may
// name (the list's or the block's last, which a loaded segment's checks
// hold below the document count): a gap past it ends the list, as a
// malformed list must not name a document the index does not have.
type cursor struct {
	b   []byte
	doc uint32
	max uint32
}

func (c *cursor) next() (doc, tf uint32, ok bool) {
	if len(c.b) == 0 {
		return 0, 0, false
	}
	gap, n := binary.Uvarint(c.b)
	if n <= 0 { // a list cut short or overlong: it ends here
		c.b = nil
		return 0, 0, false
	}
	t, m := binary.Uvarint(c.b[n:])
	if m <= 0 {
		c.b = nil
		return 0, 0, false
	}
	if gap > uint64(c.max-c.doc) || c.doc > c.max {
		c.b = nil
		return 0, 0, false
	}
	c.b = c.b[n+m:]
	c.doc += uint32(gap)
	return c.doc, uint32(t), true
}
