package search

import (
	"fmt"
	"testing"
)

// TestSequencePriorNeedsAMatch: the turns of a session that neither they
// nor their window match are no results, however well their session
// matches; the turns that match, and their neighbours, are.
func TestSequencePriorNeedsAMatch(t *testing.T) {
	x := NewIndex()
	texts := []string{"we plan a kayak trip", "sounds good", "bring sandwiches", "the weather", "pay in cash", "see you", "bye now", "later then"}
	for i, s := range texts {
		x.Put(uint64(i+1), []Part{{Text: s}}, 7, fmt.Sprintf("turn_%d.md", i))
	}
	hits := x.Search(Tokens("kayak trip"), Options{K: 20, Neighbours: 0.5})
	got := map[uint64]bool{}
	for _, h := range hits {
		got[h.Ino] = true
	}
	if !got[1] || !got[2] {
		t.Fatalf("hits %+v: want the matching turn and the one after it", hits)
	}
	if len(hits) >= len(texts) {
		t.Fatalf("every turn of the session is a result (%d hits): %+v", len(hits), hits)
	}
	for _, h := range hits {
		if h.Ino >= 6 {
			t.Errorf("turn %d (%q), far from any match, is a result: %+v", h.Ino, texts[h.Ino-1], h)
		}
	}
}
