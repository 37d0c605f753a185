package search

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unsafe"

	"github.com/mnemofs/mnemofs/internal/columns"
)

// The segment: an index image laid out to be used where it lies (views
// maps the snapshot file's segment into memory, read-only), so that a
// load neither decodes nor copies the term dictionary and the posting
// lists: a query reads its terms' lists from the mapping, the kernel pages
// them in and may drop them again, and only the terms changed since stay
// in the heap (Index.over).
//
// Layout, little-endian: segMagic, six uint64 (documents, terms, skip
// entries, total length, live, dead), then these arrays in this order,
// each as a uint64 byte length, its bytes, and zeros up to a multiple of 8:
//
//	inos []uint64, groups []uint64, parts []uint32, lengths []uint32,
//	flags []byte (bit 0 live, bit 1 question), orderEnds []uint32, orders,
//	termEnds []uint32, terms (sorted, concatenated), listEnds []uint64,
//	lists, counts []uint32, lasts []uint32, skipEnds []uint32 (per term,
//	the end of its entries), skips (five uint32 each: last, end, maxTF,
//	minLen, short), inoOrder []uint32 (the live documents by inode, then
//	number), groupOrder []uint32 (the live documents by group, then
//	order: a load's groups need no sorting).
//
// The columns are used in place where the host is little-endian and they
// are aligned (a mapping is); otherwise they are copied.
var segMagic = [8]byte{'m', 'n', 'f', 's', 'i', 'd', 'x', 1}

// WriteSegment writes the image as a segment, its terms sorted.
func (im *Image) WriteSegment(out io.Writer) error {
	bw := bufio.NewWriterSize(out, 1<<20)
	w := &columns.Writer{W: bw}
	n, t := len(im.Docs), len(im.Terms)
	order := make([]int, t)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(im.Terms[a], im.Terms[b]) })
	nskips := 0
	for _, sk := range im.skips {
		nskips += len(sk)
	}
	w.Raw(segMagic[:])
	for _, v := range []uint64{uint64(n), uint64(t), uint64(nskips), im.TotalLen, uint64(im.Live), uint64(im.Dead)} {
		w.U64(v)
	}
	col := func(size int, count int, put func(b []byte, i int) []byte) {
		b := make([]byte, 0, size*count)
		for i := range count {
			b = put(b, i)
		}
		w.Array(b)
	}
	le := binary.LittleEndian
	col(8, n, func(b []byte, i int) []byte { return le.AppendUint64(b, im.Docs[i].Ino) })
	col(8, n, func(b []byte, i int) []byte { return le.AppendUint64(b, im.Docs[i].Group) })
	col(4, n, func(b []byte, i int) []byte { return le.AppendUint32(b, im.Docs[i].Part) })
	col(4, n, func(b []byte, i int) []byte { return le.AppendUint32(b, im.Docs[i].Length) })
	col(1, n, func(b []byte, i int) []byte {
		f := byte(0)
		if im.Docs[i].Live {
			f |= 1
		}
		if im.Docs[i].Question {
			f |= 2
		}
		return append(b, f)
	})
	at := 0
	col(4, n, func(b []byte, i int) []byte { at += len(im.Docs[i].Order); return le.AppendUint32(b, uint32(at)) })
	w.ArrayOf(at, func() {
		for _, d := range im.Docs {
			w.Raw([]byte(d.Order))
		}
	})
	at = 0
	col(4, t, func(b []byte, i int) []byte { at += len(im.Terms[order[i]]); return le.AppendUint32(b, uint32(at)) })
	w.ArrayOf(at, func() {
		for _, i := range order {
			w.Raw([]byte(im.Terms[i]))
		}
	})
	at = 0
	col(8, t, func(b []byte, i int) []byte { at += len(im.Lists[order[i]]); return le.AppendUint64(b, uint64(at)) })
	w.ArrayOf(at, func() {
		for _, i := range order {
			w.Raw(im.Lists[i])
		}
	})
	col(4, t, func(b []byte, i int) []byte { return le.AppendUint32(b, uint32(im.Counts[order[i]])) })
	col(4, t, func(b []byte, i int) []byte { return le.AppendUint32(b, im.Lasts[order[i]]) })
	at = 0
	col(4, t, func(b []byte, i int) []byte { at += len(im.skips[order[i]]); return le.AppendUint32(b, uint32(at)) })
	col(skipSize, t, func(b []byte, i int) []byte {
		for _, s := range im.skips[order[i]] {
			sh := uint32(0)
			if s.short {
				sh = 1
			}
			for _, v := range []uint32{s.last, s.end, s.maxTF, s.minLen, sh} {
				b = le.AppendUint32(b, v)
			}
		}
		return b
	})
	var byIno []uint32
	for i, d := range im.Docs {
		if d.Live {
			byIno = append(byIno, uint32(i))
		}
	}
	slices.SortFunc(byIno, func(a, b uint32) int {
		if c := cmp.Compare(im.Docs[a].Ino, im.Docs[b].Ino); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	col(4, len(byIno), func(b []byte, i int) []byte { return le.AppendUint32(b, byIno[i]) })
	byGroup := slices.Clone(byIno)
	slices.SortFunc(byGroup, func(a, b uint32) int {
		da, db := &im.Docs[a], &im.Docs[b]
		switch {
		case da.Group != db.Group:
			return cmp.Compare(da.Group, db.Group)
		case naturalLess(da.Order, db.Order):
			return -1
		case naturalLess(db.Order, da.Order):
			return 1
		}
		return cmp.Compare(a, b)
	})
	col(4, len(byGroup), func(b []byte, i int) []byte { return le.AppendUint32(b, byGroup[i]) })
	if w.Err != nil {
		return w.Err
	}
	return bw.Flush()
}

// skipSize is the bytes of a skip entry in a segment.
const skipSize = 20

// segment is a parsed segment: its columns, in place where they can be.
type segment struct {
	docs, terms, nskips int
	totalLen            uint64
	live, dead          int
	inos, groups        []uint64
	parts, lengths      []uint32
	flags               []byte
	orderEnds           []uint32
	orders              string
	termEnds            []uint32
	termBlob            string
	listEnds            []uint64
	lists               []byte
	counts, lasts       []uint32
	skipEnds            []uint32
	skips               []skip
	inoOrder            []uint32
	groupOrder          []uint32
}

var errSegment = errors.New("search: segment: malformed")

// parseSegment reads a segment's header and finds its arrays, checking
// their sizes against the header.
func parseSegment(data []byte) (*segment, error) {
	if !bytes.HasPrefix(data, segMagic[:]) {
		return nil, fmt.Errorf("%w: no magic", errSegment)
	}
	r := columns.Reader{B: data[len(segMagic):], What: "its arrays"}
	var h [6]uint64
	for i := range h {
		h[i] = r.U64()
	}
	if r.Err != nil || h[0] > 1<<32 || h[1] > 1<<32 || h[2] > 1<<34 {
		return nil, fmt.Errorf("%w: header", errSegment)
	}
	s := &segment{docs: int(h[0]), terms: int(h[1]), nskips: int(h[2]), totalLen: h[3], live: int(h[4]), dead: int(h[5])}
	n, t := s.docs, s.terms
	s.inos, s.groups = columns.U64s(r.Array(8*n)), columns.U64s(r.Array(8*n))
	s.parts, s.lengths = columns.U32s(r.Array(4*n)), columns.U32s(r.Array(4*n))
	s.flags = r.Array(n)
	s.orderEnds = columns.U32s(r.Array(4 * n))
	s.orders = columns.String(r.Array(-1))
	s.termEnds = columns.U32s(r.Array(4 * t))
	s.termBlob = columns.String(r.Array(-1))
	s.listEnds = columns.U64s(r.Array(8 * t))
	s.lists = r.Array(-1)
	s.counts, s.lasts = columns.U32s(r.Array(4*t)), columns.U32s(r.Array(4*t))
	s.skipEnds = columns.U32s(r.Array(4 * t))
	s.skips = skipsOf(r.Array(skipSize * s.nskips))
	s.inoOrder = columns.U32s(r.Array(-1))
	s.groupOrder = columns.U32s(r.Array(-1))
	if r.Err != nil {
		return nil, fmt.Errorf("%w: %v", errSegment, r.Err)
	}
	if len(r.B) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after its arrays", errSegment, len(r.B))
	}
	return s, nil
}

// skipsOf is a segment's skip entries: in place where skip has their
// layout (five uint32, short in the first byte of the fifth).
func skipsOf(b []byte) []skip {
	if unsafe.Sizeof(skip{}) == skipSize && unsafe.Offsetof(skip{}.short) == 16 && columns.Castable(b, 4) {
		return unsafe.Slice((*skip)(unsafe.Pointer(&b[0])), len(b)/skipSize)
	}
	out := make([]skip, len(b)/skipSize)
	le := binary.LittleEndian
	for i := range out {
		e := b[skipSize*i:]
		out[i] = skip{last: le.Uint32(e), end: le.Uint32(e[4:]), maxTF: le.Uint32(e[8:]), minLen: le.Uint32(e[12:]), short: le.Uint32(e[16:]) != 0}
	}
	return out
}
