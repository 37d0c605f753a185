package search

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestImageRoundTrip: an index saved (Image, Encode) and loaded into
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
	var buf bytes.Buffer
	if err := x.Image().Encode(gob.NewEncoder(&buf)); err != nil {
		t.Fatal(err)
	}
	y := NewIndex()
	if err := y.Load(gob.NewDecoder(&buf)); err != nil {
		t.Fatal(err)
	}
	if got := search(y); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a load:\n got %v\nwant %v", got, want)
	}
	for term, p := range x.post {
		if q := y.post[term]; q == nil || !reflect.DeepEqual(p.skipList(), q.skipList()) || len(p.skipList()) != p.blocks() {
			t.Fatalf("term %q: skips %v, loaded %v", term, p.skipList(), q)
		}
	}
	if c := x.post[Tokens("coffee")[0]]; c == nil || c.blocks() < 2 {
		t.Fatalf("coffee: %v: the lists are too short to test the skips", c)
	}
	// Both take the same change and still agree.
	for _, ix := range []*Index{x, y} {
		ix.Put(61, []Part{{Text: "coffee piano river"}}, 1001, "D1_61")
		ix.Remove(12)
	}
	if got, want := search(y), search(x); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a change:\n got %v\nwant %v", got, want)
	}
}

// A snapshot whose skip entries disagree with its lists is refused.
func TestImageSkipsChecked(t *testing.T) {
	ps := &postings{}
	for d := uint32(0); d < 300; d++ {
		ps.add(d, 1+d%3, 100)
	}
	good := encodeSkips([][]skip{ps.skipList()})
	for name, bad := range map[string]func(w *wireSkips){
		"a block too many":       func(w *wireSkips) { w.Counts[0]++ },
		"ends past the list":     func(w *wireSkips) { w.End[1] = uint32(len(ps.b) + 1) },
		"documents out of order": func(w *wireSkips) { w.Last[1] = w.Last[0] },
		"a column short":         func(w *wireSkips) { w.TF = w.TF[:1] },
	} {
		w := encodeSkips([][]skip{ps.skipList()})
		bad(&w)
		q := &postings{b: ps.b, n: ps.n, last: ps.last}
		if err := w.set(q, 0, 300); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	q := &postings{b: ps.b, n: ps.n, last: ps.last}
	if err := good.set(q, 0, 300); err != nil || !reflect.DeepEqual(q.skipList(), ps.skipList()) {
		t.Fatalf("good skips: %v", err)
	}
}
