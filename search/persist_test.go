package search

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestImageRoundTrip: an index saved (Image, WriteSegment) and loaded into
// another ranks every query exactly as the original, neighbours, logs
// and the sequence prior included, and goes on taking changes.
func TestImageRoundTrip(t *testing.T) {
	x := NewIndex()
	words := []string{"coffee", "morning", "garden", "piano", "river", "summer", "vacation", "dog", "paint", "bread"}
	for i := uint64(1); i <= 60; i++ {
		w := words[i%10] + " " + words[(i*3)%10]
		if i%15 == 0 {
			w += "?" // a question lends its words to its reply
		}
		x.Put(i, []Part{{Text: w + " talk number " + fmt.Sprint(i), Meta: "user" + fmt.Sprint(i%3)}}, 1000+i%4, fmt.Sprintf("D1_%d", i))
	}
	var lines []Part
	for n := uint32(1); n <= 30; n++ {
		lines = append(lines, Part{Part: n, Text: words[n%10] + " line " + words[(n+4)%10]})
	}
	x.Put(500, lines, 0, "")             // a log: its lines a sequence of their own
	for i := uint64(600); i < 900; i++ { // long notes: lists of many blocks
		var w []string
		for j := range uint64(shortDoc + 10) {
			w = append(w, words[(i*j)%10])
		}
		x.Put(i, []Part{{Text: strings.Join(w, " ")}}, 2000, fmt.Sprintf("note-%d", i))
	}
	x.Remove(7)
	x.Remove(650)
	queries := []string{"coffee garden", "piano", "river summer vacation", "dog bread line", "paint talk"}
	search := func(ix *Index) [][]Hit {
		var out [][]Hit
		for _, q := range queries {
			out = append(out, ix.Search(Tokens(q), Options{K: 20, Neighbours: 0.5}))
		}
		return out
	}
	want := search(x)
	y := reload(t, x)
	if got := search(y); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a load:\n got %v\nwant %v", got, want)
	}
	for term, p := range x.over {
		if q := y.list(term); q == nil || !reflect.DeepEqual(p.skipList(), q.skipList()) || len(p.skipList()) != p.blocks() {
			t.Fatalf("term %q: skips %v, loaded %v", term, p.skipList(), q)
		}
	}
	if c := x.list(Tokens("coffee")[0]); c == nil || c.blocks() < 2 {
		t.Fatalf("coffee: %v: the lists are too short to test the skips", c)
	}
	// Both take the same change and still agree.
	for _, ix := range []*Index{x, y} {
		ix.Put(61, []Part{{Text: "coffee piano river"}}, 1001, "D1_61")
		ix.Remove(12)
		ix.Move(13, 1002, "D1_62")
		ix.Append(500, []Part{{Part: 31, Text: "coffee appended line"}})
		ix.Put(14, []Part{{Text: "garden again"}}, 1002, "D1_14")
	}
	if got, want := search(y), search(x); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a change:\n got %v\nwant %v", got, want)
	}
	// A loaded index saved again and loaded gives the same again, the
	// lists changed since its load included; and so does a compaction.
	z := reload(t, y)
	if got, want := search(z), search(x); !reflect.DeepEqual(got, want) {
		t.Fatalf("saved again:\n got %v\nwant %v", got, want)
	}
	for _, ix := range []*Index{x, z} {
		for i := uint64(600); i < 900; i++ {
			ix.Remove(i)
		}
		for i := uint64(2000); i < 3200; i++ { // enough dead for a compaction
			ix.Put(i, []Part{{Text: "coffee filler"}}, 3000, fmt.Sprint(i))
		}
		for i := uint64(2000); i < 3200; i++ {
			ix.Remove(i)
		}
	}
	if z.base != nil {
		t.Fatalf("no compaction: the segment is still used")
	}
	if got, want := search(z), search(x); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a compaction:\n got %v\nwant %v", got, want)
	}
}

// A malformed segment is refused, and leaves the index empty; a list
// whose skip entries do not fit it is not used.
func TestSegmentChecked(t *testing.T) {
	x := NewIndex()
	for i := uint64(1); i <= 300; i++ {
		x.Put(i, []Part{{Text: fmt.Sprintf("coffee word%d", i%7)}}, 1, fmt.Sprint(i))
	}
	var buf bytes.Buffer
	if err := x.Image().WriteSegment(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	for name, bad := range map[string]func(b []byte) []byte{
		"cut short":      func(b []byte) []byte { return b[:len(b)-9] },
		"no magic":       func(b []byte) []byte { b[0] = 'x'; return b },
		"a longer array": func(b []byte) []byte { binary.LittleEndian.PutUint64(b[56:], 9999); return b },
		"more documents": func(b []byte) []byte { binary.LittleEndian.PutUint64(b[8:], 301); return b },
		"bytes after":    func(b []byte) []byte { return append(b, make([]byte, 8)...) },
	} {
		y := NewIndex()
		y.Put(1, []Part{{Text: "coffee"}}, 1, "1")
		if err := y.LoadSegment(bad(bytes.Clone(good))); err == nil {
			t.Errorf("%s: accepted", name)
		} else if y.Len() != 0 {
			t.Errorf("%s: %d documents left", name, y.Len())
		}
	}
	y := NewIndex()
	if err := y.LoadSegment(bytes.Clone(good)); err != nil {
		t.Fatal(err)
	}
	s := y.base.seg
	i := y.base.find("coffe") // the stem
	if i < 0 || y.list("coffe") == nil || len(s.skips) < 3 {
		t.Fatalf("coffee: term %d, %d skip entries", i, len(s.skips))
	}
	y.base.hot.Purge()
	s.skips[s.skipEnds[i]-1].end++ // past the list
	if p := y.list("coffe"); p != nil {
		t.Fatalf("a list whose skips do not fit it: used")
	}
}

// A list cut short (its last varint unfinished) ends there.
func TestCursorStopsOnACutList(t *testing.T) {
	for _, b := range [][]byte{{0x80}, {5, 0x80}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		c := cursor{b: b, max: ^uint32(0)}
		n := 0
		for _, _, ok := c.next(); ok; _, _, ok = c.next() {
			if n++; n > len(b) {
				t.Fatalf("%x: no end", b)
			}
		}
	}
}

// A list whose gaps name a document past its last (a malformed segment
// whose checksum holds) ends before it: a search must not index past the
// document table.
func TestCursorStopsPastItsLast(t *testing.T) {
	var p postings
	p.add(2, 1, 10)
	p.add(5, 1, 10)
	p.b = binary.AppendUvarint(p.b, 1000) // a third posting, at 1005
	p.b = binary.AppendUvarint(p.b, 1)
	var got []uint32
	p.each(func(doc, _ uint32) { got = append(got, doc) })
	if !slices.Equal(got, []uint32{2, 5}) {
		t.Errorf("postings read %v, want [2 5]", got)
	}
	c := p.block(0)
	n := 0
	for _, _, ok := c.next(); ok; _, _, ok = c.next() {
		n++
	}
	if n != 2 {
		t.Errorf("the block read %d postings, want 2", n)
	}
}

// A loaded segment's documents are named from the segment and the heap
// columns, not copied into the heap as added documents; each reads back
// as the index that wrote it had it, a moved one at its new place.
func TestLoadedDocumentsReadBack(t *testing.T) {
	x := NewIndex()
	for i := uint64(1); i <= 300; i++ {
		text := fmt.Sprintf("note %d about coffee", i)
		if i%7 == 0 {
			text += "?"
		}
		x.Put(i, []Part{{Text: text}}, 1000+i%5, fmt.Sprintf("turn_%d", i))
	}
	x.Put(900, []Part{{Part: 1, Text: "one line"}, {Part: 2, Text: "two line?"}}, 0, "")
	x.Remove(10)
	y := reload(t, x)
	if len(y.dt.added) != 0 || int(y.dt.nbase) != x.ndocs() || y.ndocs() != x.ndocs() {
		t.Fatalf("loaded: %d added, %d from the segment, %d in all; want 0, %d, %d", len(y.dt.added), y.dt.nbase, y.ndocs(), x.ndocs(), x.ndocs())
	}
	same := func(when string) {
		t.Helper()
		for id := range uint32(x.ndocs()) {
			if x.key(id) != y.key(id) || x.group(id) != y.group(id) || x.order(id) != y.order(id) ||
				x.length(id) != y.length(id) || x.isLive(id) != y.isLive(id) || x.question(id) != y.question(id) {
				t.Fatalf("%s: document %d: %v %d %q %d %v %v, loaded %v %d %q %d %v %v", when, id,
					x.key(id), x.group(id), x.order(id), x.length(id), x.isLive(id), x.question(id),
					y.key(id), y.group(id), y.order(id), y.length(id), y.isLive(id), y.question(id))
			}
		}
	}
	same("after the load")
	for _, ix := range []*Index{x, y} {
		ix.Move(20, 1003, "turn_999")
		ix.Remove(30)
	}
	same("after a move and a removal")
	if p, ok := y.dt.moved[y.docsOf(20)[0]]; !ok || p.group != 1003 || p.order != "turn_999" {
		t.Fatalf("the moved document's place: %+v %v", p, ok)
	}
}

// reload is x saved as a segment and loaded into a new index.
func reload(t *testing.T, x *Index) *Index {
	t.Helper()
	var buf bytes.Buffer
	if err := x.Image().WriteSegment(&buf); err != nil {
		t.Fatal(err)
	}
	y := NewIndex()
	if err := y.LoadSegment(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return y
}
