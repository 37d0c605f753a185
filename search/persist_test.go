package search

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"reflect"
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
	x.Put(500, lines, 0, "") // a log: its lines a sequence of their own
	x.Remove(7)
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
	// Both take the same change and still agree.
	for _, ix := range []*Index{x, y} {
		ix.Put(61, []Part{{Text: "coffee piano river"}}, 1001, "D1_61")
		ix.Remove(12)
	}
	if got, want := search(y), search(x); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a change:\n got %v\nwant %v", got, want)
	}
}
