package search

import (
	"strings"
	"sync"

	"github.com/mnemofs/mnemofs/search/wordnet"
)

// Query expansion: extra query terms, each at a weight below the query's
// own words (Options.Extra), for the words a memory may use instead of
// the query's.
//
//   - Synonyms (Tuning.Synonyms): the other lemmas of the most frequent
//     sense of each query word as a noun, a verb and an adjective, from
//     WordNet when its database is installed (wordnet.Default).
//   - Hyponyms (Tuning.Hyponyms): the concepts up to two levels below the
//     most frequent noun sense, so that a question about "sports" finds
//     the memory that says "surfing" (at most hyponymMax a word).
//   - Time words (Tuning.When): a question asking when ("when", "what
//     year", "how long ago") also looks for the words memories use to say
//     when something happened ("yesterday", "last week", weekdays).
//
// Multi-word lemmas are left out (their words alone mean something else).
// Without WordNet only the time words apply.

const hyponymMax = 64

// timeWords are how a memory says when something happened, relative to
// its own date.
var timeWords = strings.Fields(`yesterday today tonight tomorrow ago last next week weekend month year
	recently earlier later morning evening night monday tuesday wednesday thursday friday saturday sunday`)

// whenQuery reports a question about time.
func whenQuery(words []string) bool {
	for i, w := range words {
		switch w {
		case "when":
			return true
		case "year", "month", "date", "day", "time":
			if i > 0 && (words[i-1] == "what" || words[i-1] == "which") {
				return true
			}
		case "long":
			if i > 0 && words[i-1] == "how" {
				return true
			}
		}
	}
	return false
}

// Warm loads what Expand reads (the WordNet database), so that the first
// query does not wait for it.
func Warm() { wordnet.Default() }

// Expand returns the expansion terms of a query's text under t (nil:
// DefaultTuning), leaving out the query's own terms.
func Expand(text string, t *Tuning) []Weighted {
	if t == nil {
		t = &DefaultTuning
	}
	own := map[string]bool{}
	for _, s := range Tokens(text) {
		own[s] = true
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '\'' || r == '-')
	})
	best := map[string]float64{}
	var order []string
	add := func(term string, w float64) {
		if own[term] || w <= 0 {
			return
		}
		if _, ok := best[term]; !ok {
			order = append(order, term)
		}
		best[term] = max(best[term], w)
	}
	if t.When > 0 && whenQuery(words) {
		for _, w := range timeWords {
			for _, s := range Tokens(w) {
				add(s, t.When)
			}
		}
	}
	if db := wordnet.Default(); db != nil && (t.Synonyms > 0 || t.Hyponyms > 0) {
		for _, w := range words {
			if len(w) < 3 || stopWords[w] {
				continue
			}
			e := related(db, w)
			for _, s := range e.syn {
				add(s, t.Synonyms)
			}
			for _, s := range e.hypo {
				add(s, t.Hyponyms)
			}
		}
	}
	out := make([]Weighted, 0, len(order))
	for _, term := range order {
		out = append(out, Weighted{term, best[term]})
	}
	return out
}

// expansion is what WordNet relates to one word, as index terms.
type expansion struct{ syn, hypo []string }

var (
	relMu sync.Mutex
	rel   = map[string]expansion{}
)

// related returns the expansion of word, memoised (a language's working
// vocabulary fits easily; the memo is bounded all the same).
func related(db *wordnet.DB, word string) expansion {
	relMu.Lock()
	e, ok := rel[word]
	relMu.Unlock()
	if ok {
		return e
	}
	var syn []string
	for _, p := range []wordnet.Pos{wordnet.Noun, wordnet.Verb, wordnet.Adj} {
		syn = append(syn, db.Synonyms(word, p, 1)...)
	}
	e = expansion{syn: terms(syn), hypo: terms(db.Hyponyms(word, wordnet.Noun, 1, 2, hyponymMax))}
	relMu.Lock()
	if len(rel) > 1<<16 {
		rel = map[string]expansion{}
	}
	rel[word] = e
	relMu.Unlock()
	return e
}

// terms are the index terms of single-word lemmas.
func terms(lemmas []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lemmas {
		if strings.ContainsAny(l, "_-") {
			continue
		}
		if ts := Tokens(l); len(ts) == 1 && !seen[ts[0]] {
			seen[ts[0]] = true
			out = append(out, ts[0])
		}
	}
	return out
}
