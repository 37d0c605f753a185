package views

import (
	"math"
	"sort"

	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/search"
)

// Pseudo-relevance feedback (RM3-style), when Tuning.FbWeight > 0: a first
// search takes the best FbDocs documents; their terms, each weighed by
// how much of each document it makes up times the document's share of
// the first search's score, are the relevance model; its best FbTerms
// terms not in the query join the second search as extra terms, the best
// at FbWeight and the others in proportion.

// rank is the index's ranking of q, with feedback when tuned so.
func (e *Engine) rank(q Query, o search.Options) []search.Hit {
	t := e.tuning
	if t == nil || t.FbWeight <= 0 || t.FbDocs <= 0 || t.FbTerms <= 0 || len(q.Terms) == 0 {
		return e.idx.Search(q.Terms, o)
	}
	first := o
	first.K = int(t.FbDocs)
	hits := e.idx.Search(q.Terms, first)
	if len(hits) == 0 {
		return hits
	}
	own := map[string]bool{}
	for _, s := range q.Terms {
		own[s] = true
	}
	for _, w := range o.Extra {
		own[w.Term] = true
	}
	total := 0.0
	for _, h := range hits {
		total += h.Score
	}
	model := map[string]float64{}
	for _, h := range hits {
		toks := search.Tokens(e.indexedText(h))
		if len(toks) == 0 {
			continue
		}
		tf := map[string]int{}
		for _, s := range toks {
			tf[s]++
		}
		for s, n := range tf {
			if !own[s] {
				model[s] += float64(n) / float64(len(toks)) * h.Score / total
			}
		}
	}
	type tw struct {
		term string
		w    float64
	}
	var list []tw
	for s, w := range model {
		list = append(list, tw{s, w})
	}
	sort.Slice(list, func(a, b int) bool {
		if list[a].w != list[b].w {
			return list[a].w > list[b].w
		}
		return list[a].term < list[b].term
	})
	list = list[:min(len(list), int(t.FbTerms))]
	if len(list) == 0 || list[0].w <= 0 || math.IsNaN(list[0].w) {
		return e.idx.Search(q.Terms, o)
	}
	extra := append([]search.Weighted(nil), o.Extra...)
	for _, x := range list {
		extra = append(extra, search.Weighted{Term: x.term, Weight: t.FbWeight * x.w / list[0].w})
	}
	o.Extra = extra
	return e.idx.Search(q.Terms, o)
}

// indexedText is what the index holds of a hit's document.
func (e *Engine) indexedText(h search.Hit) string {
	if h.Part > 0 {
		raw, ok := e.logLine(h.Ino, h.Part)
		if !ok {
			return ""
		}
		return lineIndexText(memory.ParseLine(raw))
	}
	in, err := e.st.Info(h.Ino)
	if err != nil {
		return ""
	}
	buf := make([]byte, 16<<10)
	n, _ := e.st.ReadAt(h.Ino, buf, 0)
	if isBinary(buf[:n]) {
		return ""
	}
	return indexText(in, string(buf[:n]))
}
