package search

import (
	"fmt"
	"math"
	"testing"
)

// A window saturates a term over its documents: a turn whose window holds
// both query words outranks one whose window holds one of them twice, with
// the same weights and lengths, even when that word is the rarer one.
// Summing the documents' own scores would rank them the other way.
func TestWindowRewardsComplementaryWords(t *testing.T) {
	x := NewIndex()
	texts := []string{"filler one", "filler two", "alpha", "alpha", "filler three", "filler four",
		"filler five", "beta", "alpha", "filler six", "filler seven", "filler eight"}
	for i, s := range texts {
		x.Put(uint64(i+1), []Part{{Part: 0, Text: s}}, 7, fmt.Sprintf("t%02d", i+1))
	}
	// Outside the sequence: "beta" is a little more common than "alpha".
	x.Put(100, []Part{{Part: 0, Text: "beta"}}, 99, "x")
	x.Put(101, []Part{{Part: 0, Text: "beta"}}, 99, "y")
	x.Put(102, []Part{{Part: 0, Text: "beta"}}, 99, "z")
	hits := x.Search(Tokens("alpha beta"), Options{K: 20, Neighbours: 0.5})
	rank := map[uint64]int{}
	for i, h := range hits {
		rank[h.Ino] = i + 1
	}
	// Ino 4 follows "alpha", ino 9 follows "beta".
	if rank[9] == 0 || rank[4] == 0 || rank[9] > rank[4] {
		t.Fatalf("the window with both words should rank first: %+v", hits)
	}
}

func TestWindowLength(t *testing.T) {
	x := NewIndex()
	for i, s := range []string{"one two", "three", "four five six", "seven", "eight nine"} {
		x.Put(uint64(i+1), []Part{{Part: 0, Text: s}}, 3, fmt.Sprintf("turn-%d", i+1))
	}
	x.ensureGroups()
	rs := reaches(0.5, &DefaultTuning)
	id := x.byIno[3][0]
	g, ok := x.windowed(id)
	if !ok {
		t.Fatal("a turn of a session should be windowed")
	}
	// Own 3 terms; before: 1 term at 0.5, 2 at 0.25; after: 1 at 0.25, 2 at 0.125.
	want := 3 + 0.5*1 + 0.25*2 + 0.25*1 + 0.125*2
	if got := x.windowLen(id, g, rs, 0); math.Abs(got-want) > 1e-9 {
		t.Fatalf("window length %v, want %v", got, want)
	}
	if got, want := windowAvg(2, rs), 2*(1+0.5+0.25+0.25+0.125); math.Abs(got-want) > 1e-9 {
		t.Fatalf("average window length %v, want %v", got, want)
	}
}

// A long member of a sequence lends no words to its neighbours' windows.
func TestLongDocumentLendsNoWords(t *testing.T) {
	x := NewIndex()
	long := "zebra"
	for range shortDoc {
		long += " filler"
	}
	for i, s := range []string{"first note", long, "reply here", "other words", "more words"} {
		x.Put(uint64(i+1), []Part{{Part: 0, Text: s}}, 5, fmt.Sprintf("turn-%d", i+1))
	}
	hits := x.Search(Tokens("zebra"), Options{K: 10, Neighbours: 0.5})
	if len(hits) == 0 || hits[0].Ino != 2 {
		t.Fatalf("hits %+v", hits)
	}
	// The turn after the long one gets only the sequence prior, like
	// every other member.
	for _, h := range hits[1:] {
		if h.Score != hits[len(hits)-1].Score {
			t.Fatalf("a neighbour of the long document drew on it: %+v", hits)
		}
	}
}
