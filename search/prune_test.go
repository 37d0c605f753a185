package search

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// exhaustive is the search without pruning, as it was before it: every
// posting of every list scored, windows and all (the oracle of
// TestPrunedSearchIsExhaustive).
func (x *Index) exhaustive(terms []string, o Options) []Hit {
	if o.Neighbours > 0 {
		x.ensureGroups()
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	t := o.Tuning
	if t == nil {
		t = &DefaultTuning
	}
	k1, b := t.K1, t.B
	avg := float64(x.totalLen) / float64(x.live)
	var rs []reach
	if o.Neighbours > 0 {
		rs = reaches(o.Neighbours, t)
	}
	q := x.queryLists(terms, o.Extra, t)
	lists, idfs := q.lists, q.idfs
	parts := map[uint32][]float64{} // each document's score by list, for its coverage
	acc := &scratch{base: make([]float64, x.ndocs()), score: make([]float64, x.ndocs()), slot: make([]uint32, x.ndocs()), nq: len(lists)}
	base, score := acc.base, acc.score
	for qi, ps := range lists {
		ps.each(func(doc, tfi uint32) {
			if !x.isLive(doc) {
				return
			}
			tf := float64(tfi)
			if base[doc] == 0 {
				acc.touched = append(acc.touched, doc)
			}
			base[doc] += idfs[qi] * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(x.length(doc))/avg))
			if parts[doc] == nil {
				parts[doc] = make([]float64, len(lists))
			}
			parts[doc][qi] = idfs[qi] * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(x.length(doc))/avg))
			if g, ok := x.windowed(doc); ok && rs != nil {
				x.spread(acc, doc, g, qi, tf, rs, t.Reply)
			}
		})
	}
	for _, id := range acc.touched {
		if _, win := x.windowed(id); !win || rs == nil {
			base[id] = q.coverage(parts[id], t) * base[id] // a plain document's coverage
		}
		score[id] = base[id]
	}
	if rs != nil {
		gbest := map[uint64]float64{}
		for _, id := range acc.slotted {
			if base[id] == 0 {
				acc.touched = append(acc.touched, id)
			}
			g := x.group(id)
			s := windowScore(acc.tf(id), idfs, x.windowLen(id, x.groups[g], rs, t.Reply), windowAvg(avg, rs), t)
			score[id] = s
			gbest[g] = max(gbest[g], s)
		}
		for g, v := range gbest {
			for _, id := range x.groups[g] {
				if score[id] == 0 && base[id] == 0 {
					if _, short := x.windowed(id); short {
						continue // matched by neither itself nor its window
					}
					acc.touched = append(acc.touched, id)
				}
				score[id] += t.Prior * v
			}
		}
		if t.Ask > 0 {
			for _, id := range acc.touched {
				if x.question(id) && x.win(id) {
					score[id] *= 1 - t.Ask
				}
			}
		}
	}
	var all []Hit
	for _, id := range acc.touched {
		if score[id] > 0 {
			k := x.key(id)
			all = append(all, Hit{Ino: k.Ino, Part: k.Part, Score: score[id], Base: base[id]})
		}
	}
	sort.Slice(all, func(a, b int) bool { return better(all[a], all[b]) })
	var out []Hit
	for _, h := range all {
		if len(out) < o.K && (o.Filter == nil || o.Filter(h.Ino)) && (h.Part == 0 || o.Line == nil || o.Line(h.Ino, h.Part)) {
			out = append(out, h)
		}
	}
	return out
}

// A pruned search answers exactly as an exhaustive one, score for score,
// on indexes of long and short documents, sequences, logs, removals,
// moves, filters and expansions.
func TestPrunedSearchIsExhaustive(t *testing.T) {
	vocab := strings.Fields("apple pear plum fig kiwi lime date melon grape peach cherry berry lemon mango guava")
	rapid.Check(t, func(r *rapid.T) {
		x := NewIndex()
		words := func(n int) string {
			var w []string
			for range n {
				// Skewed: the first words are common, the last rare.
				i := rapid.IntRange(0, len(vocab)-1).Draw(r, "w")
				w = append(w, vocab[i*rapid.IntRange(0, 1).Draw(r, "skew")])
			}
			return strings.Join(w, " ")
		}
		n := rapid.IntRange(1, 400).Draw(r, "docs")
		for i := range n {
			ino := uint64(i + 1)
			long := rapid.IntRange(0, 2).Draw(r, "long") == 0
			l := rapid.IntRange(1, 12).Draw(r, "len")
			if long {
				l = rapid.IntRange(shortDoc+1, shortDoc+40).Draw(r, "len")
			}
			switch rapid.IntRange(0, 3).Draw(r, "kind") {
			case 0: // a turn of a session, a sequence
				x.Put(ino, []Part{{Text: words(l), Meta: vocab[i%3]}}, uint64(1+i%5), fmt.Sprintf("turn_%d.md", i))
			case 1: // a note with a name of its own
				x.Put(ino, []Part{{Text: words(l)}}, 9, fmt.Sprintf("%s-%d.md", vocab[i%len(vocab)], i))
			case 2: // a log
				var ps []Part
				for p := range rapid.IntRange(1, 6).Draw(r, "lines") {
					ps = append(ps, Part{Part: uint32(p + 1), Text: words(rapid.IntRange(1, 10).Draw(r, "ll")) + "?"[:p%2]})
				}
				x.Put(ino, ps, 0, "log.jsonl")
			default:
				x.Put(ino, []Part{{Text: words(l) + " ?"}}, uint64(1+i%5), fmt.Sprintf("turn_%d.md", i))
			}
			if i > 0 && rapid.IntRange(0, 9).Draw(r, "rm") == 0 {
				x.Remove(uint64(rapid.IntRange(1, i).Draw(r, "victim")))
			}
			if i > 0 && rapid.IntRange(0, 19).Draw(r, "mv") == 0 {
				x.Move(uint64(rapid.IntRange(1, i).Draw(r, "moved")), 9, fmt.Sprintf("moved-%d", i))
			}
		}
		if x.Len() == 0 {
			return
		}
		for range 8 {
			q := Tokens(words(rapid.IntRange(1, 4).Draw(r, "q")))
			if len(q) == 0 {
				continue
			}
			o := Options{K: rapid.IntRange(1, 12).Draw(r, "k")}
			if rapid.Bool().Draw(r, "nb") {
				o.Neighbours = 0.5
			}
			if rapid.Bool().Draw(r, "extra") {
				o.Extra = []Weighted{{vocab[rapid.IntRange(0, len(vocab)-1).Draw(r, "x")], 0.3}}
			}
			if m := rapid.IntRange(0, 3).Draw(r, "filter"); m > 0 {
				o.Filter = func(ino uint64) bool { return ino%uint64(m+1) != 0 }
				o.Line = func(ino uint64, part uint32) bool { return part%2 == 1 }
			}
			got, want := x.Search(q, o), x.exhaustive(q, o)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				r.Fatalf("query %q %+v:\n pruned     %v\n exhaustive %v", q, o, got, want)
			}
		}
	})
}

// A list's live count, kept between searches, follows the removals and
// the additions made since it was counted.
func TestLiveCountFollowsChanges(t *testing.T) {
	x := NewIndex()
	for i := uint64(1); i <= 3*blockSize; i++ {
		x.Put(i, []Part{{Text: "apple pear"}}, 1, fmt.Sprintf("note-%d", i))
	}
	term := Tokens("apple")[0]
	check := func(when string) {
		t.Helper()
		ps := x.list(term)
		want := 0
		ps.each(func(doc, _ uint32) {
			if x.isLive(doc) {
				want++
			}
		})
		got := x.idf(ps)
		if w := x.idfOf(want); got != w {
			t.Fatalf("%s: idf %v, want %v (%d live postings)", when, got, w, want)
		}
	}
	x.Remove(5)
	check("after a removal")
	check("counted again")
	for i := uint64(1000); i < 1010; i++ {
		x.Put(i, []Part{{Text: "apple"}}, 1, fmt.Sprintf("note-%d", i))
	}
	check("after additions")
	x.Remove(6)
	x.Put(7, []Part{{Text: "plum"}}, 1, "note-7")
	check("after a removal and a rewrite")
}

func (x *Index) idfOf(df int) float64 {
	return math.Log(1 + (float64(x.live)-float64(df)+0.5)/(float64(df)+0.5))
}
