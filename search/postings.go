package search

import "encoding/binary"

// postings is one term's posting list, compressed: for each document in
// increasing number, the gap from the previous number and the term's
// frequency, both as uvarints (two or three bytes a posting instead of
// eight). Documents only ever get larger numbers (compaction keeps the
// order), so appending keeps the list sorted.
type postings struct {
	b    []byte
	last uint32 // the last document number added
	n    int    // postings in b
}

func (p *postings) add(doc, tf uint32) {
	gap := doc
	if p.n > 0 {
		gap = doc - p.last
	}
	p.b = binary.AppendUvarint(p.b, uint64(gap))
	p.b = binary.AppendUvarint(p.b, uint64(tf))
	p.last = doc
	p.n++
}

// each calls fn for every posting in order.
func (p *postings) each(fn func(doc, tf uint32)) {
	b, doc := p.b, uint32(0)
	for len(b) > 0 {
		gap, n := binary.Uvarint(b)
		b = b[n:]
		tf, m := binary.Uvarint(b)
		b = b[m:]
		doc += uint32(gap)
		fn(doc, uint32(tf))
	}
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
