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
	w := &segWriter{w: bufio.NewWriterSize(out, 1<<20)}
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
	w.raw(segMagic[:])
	for _, v := range []uint64{uint64(n), uint64(t), uint64(nskips), im.TotalLen, uint64(im.Live), uint64(im.Dead)} {
		w.raw(binary.LittleEndian.AppendUint64(nil, v))
	}
	col := func(size int, count int, put func(b []byte, i int) []byte) {
		b := make([]byte, 0, size*count)
		for i := range count {
			b = put(b, i)
		}
		w.array(b)
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
	w.arrayOf(at, func() {
		for _, d := range im.Docs {
			w.raw([]byte(d.Order))
		}
	})
	at = 0
	col(4, t, func(b []byte, i int) []byte { at += len(im.Terms[order[i]]); return le.AppendUint32(b, uint32(at)) })
	w.arrayOf(at, func() {
		for _, i := range order {
			w.raw([]byte(im.Terms[i]))
		}
	})
	at = 0
	col(8, t, func(b []byte, i int) []byte { at += len(im.Lists[order[i]]); return le.AppendUint64(b, uint64(at)) })
	w.arrayOf(at, func() {
		for _, i := range order {
			w.raw(im.Lists[i])
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
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// skipSize is the bytes of a skip entry in a segment.
const skipSize = 20

type segWriter struct {
	w   *bufio.Writer
	n   int
	err error
}

func (w *segWriter) raw(b []byte) {
	if w.err == nil {
		var k int
		k, w.err = w.w.Write(b)
		w.n += k
	}
}

func (w *segWriter) array(b []byte) { w.arrayOf(len(b), func() { w.raw(b) }) }

// arrayOf writes an array of size bytes that write puts out.
func (w *segWriter) arrayOf(size int, write func()) {
	w.raw(binary.LittleEndian.AppendUint64(nil, uint64(size)))
	start := w.n
	write()
	if w.err == nil && w.n-start != size {
		w.err = fmt.Errorf("search: segment: an array of %d bytes wrote %d", size, w.n-start)
	}
	w.raw(make([]byte, (8-size%8)%8))
}

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
	r := segReader{b: data}
	if !bytes.HasPrefix(data, segMagic[:]) {
		return nil, fmt.Errorf("%w: no magic", errSegment)
	}
	r.b = r.b[len(segMagic):]
	var h [6]uint64
	for i := range h {
		h[i] = r.u64()
	}
	if r.err != nil || h[0] > 1<<32 || h[1] > 1<<32 || h[2] > 1<<34 {
		return nil, fmt.Errorf("%w: header", errSegment)
	}
	s := &segment{docs: int(h[0]), terms: int(h[1]), nskips: int(h[2]), totalLen: h[3], live: int(h[4]), dead: int(h[5])}
	n, t := s.docs, s.terms
	s.inos, s.groups = u64s(r.array(8*n)), u64s(r.array(8*n))
	s.parts, s.lengths = u32s(r.array(4*n)), u32s(r.array(4*n))
	s.flags = r.array(n)
	s.orderEnds = u32s(r.array(4 * n))
	s.orders = bytesString(r.array(-1))
	s.termEnds = u32s(r.array(4 * t))
	s.termBlob = bytesString(r.array(-1))
	s.listEnds = u64s(r.array(8 * t))
	s.lists = r.array(-1)
	s.counts, s.lasts = u32s(r.array(4*t)), u32s(r.array(4*t))
	s.skipEnds = u32s(r.array(4 * t))
	s.skips = skipsOf(r.array(skipSize * s.nskips))
	s.inoOrder = u32s(r.array(-1))
	s.groupOrder = u32s(r.array(-1))
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after its arrays", errSegment, len(r.b))
	}
	return s, nil
}

type segReader struct {
	b   []byte
	err error
}

func (r *segReader) u64() uint64 {
	if len(r.b) < 8 {
		r.err = fmt.Errorf("%w: ends early", errSegment)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// array returns the next array, which must be of size bytes (-1: any).
func (r *segReader) array(size int) []byte {
	n := r.u64()
	if r.err != nil {
		return nil
	}
	padded := n + (8-n%8)%8
	if size >= 0 && n != uint64(size) || padded > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: an array of %d bytes (want %d) with %d left", errSegment, n, size, len(r.b))
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[padded:]
	return b
}

// littleEndian: the host's byte order is the segment's.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// castable reports whether b can be used in place as elements of size.
func castable(b []byte, size uintptr) bool {
	return littleEndian && len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%size == 0
}

func u64s(b []byte) []uint64 {
	if castable(b, 8) {
		return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
	}
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out
}

func u32s(b []byte) []uint32 {
	if castable(b, 4) {
		return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
	}
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// skipsOf is a segment's skip entries: in place where skip has their
// layout (five uint32, short in the first byte of the fifth).
func skipsOf(b []byte) []skip {
	if unsafe.Sizeof(skip{}) == skipSize && unsafe.Offsetof(skip{}.short) == 16 && castable(b, 4) {
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
