package views

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/mnemofs/mnemofs/internal/columns"
)

// The catalog's segment: the entries of a snapshot laid out to be used
// where they lie (snapshot.go maps it), so that a start decodes no entry:
// one is decoded when it is asked for (and kept in a small cache), and
// only the entries changed since stay in the heap (catalog.over).
//
// Layout, little-endian: catMagic, the entry count and the string count
// (uint64 each), then these arrays, each as a uint64 byte length, its
// bytes and zeros up to a multiple of 8: inos []uint64 (sorted), ends
// []uint64 (where each record ends), mods []int64 (each entry's Modified,
// modKey), records, strEnds []uint32, strings (the values records name
// by number: users, tags, types, speakers).
//
// A record: uvarints of the type (string number + 1, 0 for none), the
// users and the tags (a count, then string numbers), Created and
// Modified (a length and time.MarshalBinary), nextLine, indexedSize,
// parent, the name (a length and its bytes), ctime (zig-zag), size, and
// for a log 1 + its line count, each line: its number, users, speaker
// (number + 1), Created, tags, offset and size; 0 for a file that is no
// log.
var catMagic = [8]byte{'m', 'n', 'f', 's', 'c', 'a', 't', 1}

// catBase is a parsed catalog segment.
type catBase struct {
	inos    []uint64
	ends    []uint64
	mods    []int64
	recs    []byte
	strEnds []uint32
	strs    string
	// cache keeps decoded entries: a log's is costly to make again.
	cache *lru.Cache[uint64, *Entry]
}

// baseCached is how many decoded entries a catBase keeps.
const baseCached = 4096

func parseCatBase(data []byte) (*catBase, error) {
	if !bytes.HasPrefix(data, catMagic[:]) || len(data) < 24 {
		return nil, errors.New("catalog segment: no magic")
	}
	n, ns := binary.LittleEndian.Uint64(data[8:]), binary.LittleEndian.Uint64(data[16:])
	if n > 1<<40 || ns > 1<<32 {
		return nil, errors.New("catalog segment: header")
	}
	r := columns.Reader{B: data[24:], What: "catalog segment"}
	b := &catBase{}
	b.inos = columns.U64s(r.Array(8 * int(n)))
	b.ends = columns.U64s(r.Array(8 * int(n)))
	b.mods = columns.I64s(r.Array(8 * int(n)))
	b.recs = r.Array(-1)
	b.strEnds = columns.U32s(r.Array(4 * int(ns)))
	b.strs = string(r.Array(-1))
	if r.Err != nil {
		return nil, r.Err
	}
	if len(r.B) != 0 {
		return nil, errors.New("catalog segment: bytes after its arrays")
	}
	for i := range b.inos {
		if i > 0 && (b.inos[i] <= b.inos[i-1] || b.ends[i] < b.ends[i-1]) {
			return nil, fmt.Errorf("catalog segment: entry %d out of order", i)
		}
	}
	if n > 0 && b.ends[n-1] != uint64(len(b.recs)) {
		return nil, errors.New("catalog segment: the records do not end it")
	}
	for i := range b.strEnds {
		if i > 0 && b.strEnds[i] < b.strEnds[i-1] || int(b.strEnds[i]) > len(b.strs) {
			return nil, fmt.Errorf("catalog segment: string %d out of bounds", i)
		}
	}
	b.cache, _ = lru.New[uint64, *Entry](baseCached)
	return b, nil
}

// modKey is t as the mods column keeps it: its Unix time in nanoseconds,
// the least for the zero time.
func modKey(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}

// str is string i of the table.
func (b *catBase) str(i uint64) (string, bool) {
	if i >= uint64(len(b.strEnds)) {
		return "", false
	}
	from := uint32(0)
	if i > 0 {
		from = b.strEnds[i-1]
	}
	return b.strs[from:b.strEnds[i]], true
}

// find is the position of ino, or -1.
func (b *catBase) find(ino uint64) int {
	if i, ok := slices.BinarySearch(b.inos, ino); ok {
		return i
	}
	return -1
}

// record is the bytes of entry i.
func (b *catBase) record(i int) []byte {
	from := uint64(0)
	if i > 0 {
		from = b.ends[i-1]
	}
	return b.recs[from:b.ends[i]]
}

// entry decodes entry i (nil if its record does not hold).
func (b *catBase) entry(i int) *Entry {
	ino := b.inos[i]
	if ent, ok := b.cache.Get(ino); ok {
		return ent
	}
	ent, err := b.decode(ino, b.record(i))
	if err != nil {
		return nil
	}
	b.cache.Add(ino, ent)
	return ent
}

func (b *catBase) decode(ino uint64, rec []byte) (*Entry, error) {
	d := recReader{Varints: columns.Varints{B: rec}, base: b}
	ent := &Entry{Ino: ino}
	ent.Type = d.optStr()
	ent.Users, ent.Tags = d.strs(), d.strs()
	ent.Created, ent.Modified = d.time(), d.time()
	ent.nextLine, ent.indexedSize, ent.parent = uint32(d.Uvarint()), d.Uvarint(), d.Uvarint()
	ent.name = string(d.Bytes())
	ent.ctime, ent.size = d.Varint(), d.Uvarint()
	if nl := d.Uvarint(); nl > 0 {
		if nl-1 > uint64(len(rec)) {
			return nil, errRecord
		}
		lines := make([]LineMeta, nl-1)
		for j := range lines {
			l := &lines[j]
			l.Line, l.Users, l.Speaker, l.Created, l.Tags = uint32(d.Uvarint()), d.strs(), d.optStr(), d.time(), d.strs()
			l.off, l.size = d.Uvarint(), uint32(d.Uvarint())
		}
		ent.log = (*logLines)(nil).extend(lines)
	}
	if d.Err || len(d.B) != 0 {
		return nil, errRecord
	}
	return ent, nil
}

var errRecord = errors.New("catalog segment: a record does not hold")

type recReader struct {
	columns.Varints
	base *catBase
}

func (d *recReader) str() string {
	s, ok := d.base.str(d.Uvarint())
	if !ok {
		d.Fail()
	}
	return s
}

func (d *recReader) optStr() string {
	i := d.Uvarint()
	if i == 0 {
		return ""
	}
	s, ok := d.base.str(i - 1)
	if !ok {
		d.Fail()
	}
	return s
}

func (d *recReader) strs() []string {
	n := d.Uvarint()
	if n == 0 || n > uint64(len(d.B)) {
		if n > 0 {
			d.Fail()
		}
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *recReader) time() time.Time {
	var t time.Time
	if b := d.Bytes(); len(b) > 0 {
		if err := t.UnmarshalBinary(b); err != nil {
			d.Fail()
		}
	}
	return t
}
