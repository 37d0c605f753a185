package search

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSearchRanksAndRemoves(t *testing.T) {
	x := NewIndex()
	x.Put(1, []Part{{Part: 0, Text: "Alice likes ramen and sushi"}}, 100, "a")
	x.Put(2, []Part{{Part: 0, Text: "Bob likes pizza"}}, 100, "b")
	x.Put(3, []Part{{Part: 0, Text: "ramen ramen ramen noodles shop"}}, 100, "c")
	hits := x.Search(Tokens("ramen"), Options{K: 10})
	if len(hits) != 2 || hits[0].Ino != 3 || hits[1].Ino != 1 {
		t.Fatalf("hits %+v", hits)
	}
	x.Remove(3)
	hits = x.Search(Tokens("ramen"), Options{K: 10})
	if len(hits) != 1 || hits[0].Ino != 1 {
		t.Fatalf("after remove %+v", hits)
	}
	hits = x.Search(Tokens("ramen pizza"), Options{K: 10, Filter: func(ino uint64) bool { return ino == 2 }})
	if len(hits) != 1 || hits[0].Ino != 2 {
		t.Fatalf("filtered %+v", hits)
	}
	x.Put(1, []Part{{Part: 0, Text: "Alice now prefers curry"}}, 100, "a")
	if hits = x.Search(Tokens("ramen"), Options{K: 10}); len(hits) != 0 {
		t.Fatalf("stale content found %+v", hits)
	}
}

func TestNeighboursLiftTheAnswer(t *testing.T) {
	x := NewIndex()
	// A question in one turn, the answer in the next.
	x.Put(10, []Part{{Part: 0, Text: "Where did you go on vacation last summer?"}}, 7, "D1_9")
	x.Put(11, []Part{{Part: 0, Text: "We drove up the coast, it was lovely."}}, 7, "D1_10")
	x.Put(12, []Part{{Part: 0, Text: "Unrelated chatter about work."}}, 7, "D1_20")
	x.Put(13, []Part{{Part: 0, Text: "Something else entirely."}}, 8, "D2_1")
	x.Put(14, []Part{{Part: 0, Text: "More small talk."}}, 7, "D1_21")
	// Without the question rules the question comes first, its reply
	// second; with them (the defaults) the reply, which holds the
	// question's words at full weight, comes first.
	plain := DefaultTuning
	plain.Reply, plain.Ask = 0, 0
	hits := x.Search(Tokens("vacation summer"), Options{K: 3, Neighbours: 0.5, Tuning: &plain})
	if len(hits) < 2 || hits[0].Ino != 10 || hits[1].Ino != 11 {
		t.Fatalf("hits %+v", hits)
	}
	if h := x.Search(Tokens("vacation summer"), Options{K: 3, Neighbours: 0.5}); len(h) < 2 || h[0].Ino != 11 || h[1].Ino != 10 {
		t.Fatalf("with the question rules: hits %+v", h)
	}
	// Two steps on still counts, less; three steps and other groups do not.
	for _, h := range hits {
		if h.Ino == 13 || h.Ino == 14 || h.Ino == 12 && h.Score >= hits[1].Score {
			t.Fatalf("wrong neighbour scores: %+v", hits)
		}
	}
}

func TestLinesAreDocuments(t *testing.T) {
	x := NewIndex()
	x.Put(5, []Part{{Part: 1, Text: "first line about cats"}, {Part: 2, Text: "second line about dogs"}, {Part: 3, Text: "third line"}}, 0, "")
	hits := x.Search(Tokens("dogs"), Options{K: 5})
	if len(hits) != 1 || hits[0].Part != 2 {
		t.Fatalf("hits %+v", hits)
	}
}

func TestNaturalLess(t *testing.T) {
	for _, c := range [][2]string{{"D1_2", "D1_10"}, {"a", "b"}, {"x9", "x10"}, {"s2", "s02a"}} {
		if !naturalLess(c[0], c[1]) || naturalLess(c[1], c[0]) {
			t.Errorf("%q < %q expected", c[0], c[1])
		}
	}
}

func TestCompaction(t *testing.T) {
	x := NewIndex()
	for i := uint64(0); i < 3000; i++ {
		x.Put(i, []Part{{Part: 0, Text: "common word"}}, 1, lineOrder(uint32(i)))
	}
	for i := uint64(0); i < 2500; i++ {
		x.Remove(i)
	}
	if x.Len() != 500 || x.ndocs() >= 3000 {
		t.Fatalf("live %d docs %d", x.Len(), x.ndocs())
	}
	hits := x.Search(Tokens("common"), Options{K: 1000, Neighbours: 0.3})
	if len(hits) != 500 {
		t.Fatalf("%d hits", len(hits))
	}
}

func TestNoNeighboursInSmallGroups(t *testing.T) {
	x := NewIndex()
	x.Put(1, []Part{{Part: 0, Text: "platypus sighting"}}, 7, "a")
	x.Put(2, []Part{{Part: 0, Text: "todo list"}}, 7, "b")
	if hits := x.Search(Tokens("platypus"), Options{K: 5, Neighbours: 0.5}); len(hits) != 1 {
		t.Fatalf("hits %+v", hits)
	}
}

func BenchmarkSearch100k(b *testing.B) {
	x := NewIndex()
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega apple banana cherry grape lemon mango melon peach pear plum")
	for i := 0; i < 100000; i++ {
		var sb strings.Builder
		for k := 0; k < 60; k++ {
			sb.WriteString(words[(i*7+k*k*13+k)%len(words)])
			sb.WriteByte(' ')
		}
		x.Put(uint64(i+1), []Part{{Part: 0, Text: sb.String()}}, uint64(i/20), lineOrder(uint32(i%20)))
	}
	q := Tokens("banana omega")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.Search(q, Options{K: 10, Neighbours: 0.5})
	}
}

func TestFilterRejectingTheBestFallsBack(t *testing.T) {
	x := NewIndex()
	for i := 1; i <= 500; i++ {
		// Lower inode numbers score higher: more copies of the word.
		x.Put(uint64(i), []Part{{Part: 0, Text: strings.Repeat("kiwi ", 1+(500-i)/50) + "filler text here"}}, uint64(i), "a")
	}
	hits := x.Search(Tokens("kiwi"), Options{K: 5, Filter: func(ino uint64) bool { return ino > 400 }})
	if len(hits) != 5 || hits[0].Ino <= 400 {
		t.Fatalf("hits %+v", hits)
	}
	for i := 1; i < len(hits); i++ {
		if better(hits[i], hits[i-1]) {
			t.Fatalf("not in order: %+v", hits)
		}
	}
}

func TestGroupsFollowMoves(t *testing.T) {
	x := NewIndex()
	for i := uint64(1); i <= 5; i++ {
		x.Put(i, []Part{{Part: 0, Text: "word"}}, 7, lineOrder(uint32(i)))
	}
	x.Move(3, 8, "z")
	x.Move(3, 7, lineOrder(3))
	x.Remove(5)
	x.ensureGroups()
	if g := x.groups[7]; len(g) != 4 {
		t.Fatalf("group 7 = %v", g)
	}
	for i, id := range x.groups[7] {
		if int(x.pos(id)) != i {
			t.Fatalf("pos of %d is %d, want %d", id, x.pos(id), i)
		}
	}
}

func TestNotesFolderIsNoSequence(t *testing.T) {
	x := NewIndex()
	names := []string{"alice.md", "bob.md", "carol.md", "dave.md", "erin.md", "frank.md"}
	for i, n := range names {
		text := "short note about errands"
		if i == 2 {
			text = "short note about a platypus"
		}
		x.Put(uint64(i+1), []Part{{Part: 0, Text: text}}, 9, n)
	}
	if hits := x.Search(Tokens("platypus"), Options{K: 10, Neighbours: 0.5}); len(hits) != 1 || hits[0].Ino != 3 {
		t.Fatalf("hits %+v", hits)
	}
}

// BenchmarkPut: indexing a memory of about 150 words from a vocabulary of
// a few thousand (tokenizing, counting its terms, appending postings), as
// an index build does a million times.
func BenchmarkPut(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 3000)
	for i := range vocab {
		w := make([]byte, 3+rng.IntN(8))
		for k := range w {
			w[k] = byte('a' + rng.IntN(26))
		}
		vocab[i] = string(w)
	}
	texts := make([]string, 4096)
	for i := range texts {
		var sb strings.Builder
		for range 150 {
			// Zipf-like: low ranks far more often.
			sb.WriteString(vocab[int(float64(len(vocab))*rng.Float64()*rng.Float64()*rng.Float64())])
			sb.WriteByte(' ')
		}
		texts[i] = sb.String()
	}
	x := NewIndex()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.Put(uint64(i+1), []Part{{Part: 0, Text: texts[i%len(texts)], Meta: "alice\nnotes"}}, uint64(i/64), lineOrder(uint32(i%64)))
	}
}

// TestHeadAndAnalyzed: a part's Head is indexed as if it came before its
// Text, a question in either marks the document, and what Analyze made
// ahead is put as Put would (same scores, query by query).
func TestHeadAndAnalyzed(t *testing.T) {
	joined, split, ahead := NewIndex(), NewIndex(), NewIndex()
	docs := []struct{ head, text string }{
		{"travel\n7 May 2023\n", "We drove up the coast to Lisbon."},
		{"", "Where did you go in May?"},
		{"work?\n", "Lisbon again, for the conference."},
		{"cooking\n", "Ramen and sushi, Lisbon style."},
	}
	for i, d := range docs {
		ino := uint64(i + 1)
		joined.Put(ino, []Part{{Text: d.head + d.text, Meta: "travel"}}, 9, string(rune('a'+i)))
		split.Put(ino, []Part{{Head: d.head, Text: d.text, Meta: "travel"}}, 9, string(rune('a'+i)))
		ahead.PutAnalyzed(ino, Analyze([]Part{{Head: d.head, Text: d.text, Meta: "travel"}}), 9, string(rune('a'+i)))
	}
	for _, q := range []string{"lisbon", "may 2023 coast", "travel lisbon", "conference work", "ramen"} {
		want := joined.Search(Tokens(q), Options{K: 10, Neighbours: 0.5})
		if len(want) == 0 {
			t.Fatalf("%q: no hits", q)
		}
		for name, x := range map[string]*Index{"Head": split, "Analyze": ahead} {
			got := x.Search(Tokens(q), Options{K: 10, Neighbours: 0.5})
			if len(got) != len(want) {
				t.Fatalf("%s, %q: %+v, want %+v", name, q, got, want)
			}
			for k := range got {
				if got[k].Ino != want[k].Ino || got[k].Score != want[k].Score {
					t.Fatalf("%s, %q: %+v, want %+v", name, q, got, want)
				}
			}
		}
	}
}
