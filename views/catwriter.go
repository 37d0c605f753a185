package views

import (
	"encoding/binary"
	"io"
	"time"

	"github.com/mnemofs/mnemofs/internal/columns"
)

// catWriter writes a catalog segment: records copied from a base (whose
// string numbers it keeps: its table starts as the base's) or encoded from
// entries.
type catWriter struct {
	base  *catBase
	strs  []string
	index map[string]uint64
	inos  []uint64
	ends  []uint64
	mods  []int64
	recs  []byte
}

func newCatWriter(base *catBase) *catWriter {
	w := &catWriter{base: base, index: map[string]uint64{}}
	if base != nil {
		for i := range base.strEnds {
			s, _ := base.str(uint64(i))
			w.strs = append(w.strs, s)
			if _, ok := w.index[s]; !ok {
				w.index[s] = uint64(i)
			}
		}
	}
	return w
}

// add appends entry ent, or entry i of the base (ent nil); entries come
// in increasing inode order.
func (w *catWriter) add(ent *Entry, i int) {
	if ent == nil {
		w.inos = append(w.inos, w.base.inos[i])
		w.mods = append(w.mods, w.base.mods[i])
		w.recs = append(w.recs, w.base.record(i)...)
	} else {
		w.inos = append(w.inos, ent.Ino)
		w.mods = append(w.mods, modKey(ent.Modified))
		w.encode(ent)
	}
	w.ends = append(w.ends, uint64(len(w.recs)))
}

func (w *catWriter) num(s string) uint64 {
	i, ok := w.index[s]
	if !ok {
		i = uint64(len(w.strs))
		w.strs = append(w.strs, s)
		w.index[s] = i
	}
	return i
}

func (w *catWriter) uv(v uint64) { w.recs = binary.AppendUvarint(w.recs, v) }

func (w *catWriter) optStr(s string) {
	if s == "" {
		w.uv(0)
	} else {
		w.uv(w.num(s) + 1)
	}
}

func (w *catWriter) strList(vs []string) {
	w.uv(uint64(len(vs)))
	for _, s := range vs {
		w.uv(w.num(s))
	}
}

func (w *catWriter) bytes(b []byte) {
	w.uv(uint64(len(b)))
	w.recs = append(w.recs, b...)
}

func (w *catWriter) time(t time.Time) {
	if t.IsZero() {
		w.uv(0)
		return
	}
	b, err := t.MarshalBinary()
	if err != nil { // an offset MarshalBinary cannot keep: the instant in UTC
		b, _ = t.UTC().MarshalBinary()
	}
	w.bytes(b)
}

func (w *catWriter) encode(ent *Entry) {
	w.optStr(ent.Type)
	w.strList(ent.Users)
	w.strList(ent.Tags)
	w.time(ent.Created)
	w.time(ent.Modified)
	w.uv(uint64(ent.nextLine))
	w.uv(ent.indexedSize)
	w.uv(ent.parent)
	w.bytes([]byte(ent.name))
	w.recs = binary.AppendVarint(w.recs, ent.ctime)
	w.uv(ent.size)
	if ent.log == nil {
		w.uv(0)
		return
	}
	w.uv(uint64(len(ent.log.lines)) + 1)
	for _, l := range ent.log.lines {
		w.uv(uint64(l.Line))
		w.strList(l.Users)
		w.optStr(l.Speaker)
		w.time(l.Created)
		w.strList(l.Tags)
		w.uv(l.off)
		w.uv(uint64(l.size))
	}
}

// writeTo writes the segment.
func (w *catWriter) writeTo(out io.Writer) error {
	aw := columns.Writer{W: out}
	aw.Raw(catMagic[:])
	aw.U64(uint64(len(w.inos)))
	aw.U64(uint64(len(w.strs)))
	aw.Array(columns.Bytes64(w.inos))
	aw.Array(columns.Bytes64(w.ends))
	mods := make([]uint64, len(w.mods))
	for i, m := range w.mods {
		mods[i] = uint64(m)
	}
	aw.Array(columns.Bytes64(mods))
	aw.Array(w.recs)
	var ends []uint32
	var blob []byte
	for _, s := range w.strs {
		blob = append(blob, s...)
		ends = append(ends, uint32(len(blob)))
	}
	aw.Array(columns.Bytes32(ends))
	aw.Array(blob)
	return aw.Err
}
