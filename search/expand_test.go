package search

import (
	"slices"
	"testing"

	"github.com/mnemofs/mnemofs/search/wordnet"
)

func expanded(ws []Weighted) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Term)
	}
	return out
}

func TestExpandTimeWords(t *testing.T) {
	tun := Tuning{When: 0.3}
	if got := expanded(Expand("When did Ann move to Paris?", &tun)); !slices.Contains(got, "yesterday") || !slices.Contains(got, "week") {
		t.Fatalf("when-question: %q", got)
	}
	if got := Expand("Where did Ann move?", &tun); len(got) != 0 {
		t.Fatalf("not a when-question: %v", got)
	}
	if got := expanded(Expand("In what year did she start?", &tun)); !slices.Contains(got, "ago") {
		t.Fatalf("what year: %q", got)
	}
}

func TestExpandWordNet(t *testing.T) {
	if wordnet.Default() == nil {
		t.Skip("no WordNet database installed")
	}
	tun := Tuning{Synonyms: 0.2, Hyponyms: 0.1}
	got := Expand("How many children does she have? Which sports?", &tun)
	w := map[string]float64{}
	for _, e := range got {
		w[e.Term] = e.Weight
	}
	if w["kid"] != 0.2 || w[Tokens("surfing")[0]] != 0.1 || w["child"] != 0 {
		t.Fatalf("expansion %v", got)
	}
}

// TestMetaField: a query term matches a document's metadata words again
// at Tuning.Meta, so the turn a person speaks gains on one that names them.
func TestMetaField(t *testing.T) {
	x := NewIndex()
	x.Put(1, []Part{{Text: "Thanks Nate, that helps a lot with the garden"}}, 1, "a")
	x.Put(2, []Part{{Text: "Nate\nI planted tomatoes in the garden", Meta: "Nate"}}, 1, "b")
	x.Put(3, []Part{{Text: "Unrelated"}}, 2, "c")
	ratio := func(meta float64) float64 {
		tun := DefaultTuning
		tun.Meta = meta
		h := x.Search(Tokens("Nate garden"), Options{K: 2, Tuning: &tun})
		if len(h) != 2 {
			t.Fatalf("hits %+v", h)
		}
		s := map[uint64]float64{h[0].Ino: h[0].Score, h[1].Ino: h[1].Score}
		return s[2] / s[1]
	}
	if without, with := ratio(0), ratio(1.5); with <= without*1.2 {
		t.Fatalf("the speaker's turn scores %.2f of the other without the field, %.2f with it", without, with)
	}
}

// TestExtraBudget: extra terms are taken best first within extraShare
// times the query's own postings (at least extraMin): a very common
// expansion term is left out, a rare one kept.
func TestExtraBudget(t *testing.T) {
	x := NewIndex()
	for i := range 3000 {
		text := "common filler"
		if i == 7 {
			text = "rare zebra"
		}
		if i == 8 {
			text = "the query word"
		}
		x.Put(uint64(i+1), []Part{{Text: text}}, uint64(i+1), "n")
	}
	lists := x.queryTerms(Tokens("query"), []Weighted{{"common", 0.5}, {"zebra", 0.5}}).lists
	if len(lists) != 2 || lists[1] != x.list("zebra") {
		t.Fatalf("%d lists; want the query's and zebra's", len(lists))
	}
}
