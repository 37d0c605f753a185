package search

// Context windows. In a sequence of short documents (a session's turns, a
// log's lines) the answer is often one step away from the words that find
// it: the reply after a question, the result after a command. Such a
// document is scored as its window, one virtual document made of itself
// and its neighbours, each neighbour's term frequencies and length counted
// at the neighbour's weight. BM25 then saturates a term over the whole
// window, so a window that holds different query words in different
// documents beats one that repeats a single word in each.

// Neighbours only count in sequences of short documents (isSequence: a
// log's lines, or at least minGroup siblings named alike but for their
// numbers, like a session's turns), each document of at most shortDoc
// terms.
const (
	minGroup = 4
	shortDoc = 80
)

// A window reaches window steps back (what came before: the question a
// reply answers) at the full neighbour weight and forward at Tuning.Back
// of it, each step Tuning.Decay times the one before.
const window = 2

// reach is where a document's terms also count: in the window of the
// document off places after it (before it when off < 0), at weight w.
type reach struct {
	off int
	w   float64
}

// reaches lists where a document's terms go, for neighbour weight nw: a
// term at position p counts in the window of p+s (the steps after it) at
// nw·Decay^(s-1), and in that of p-s at Back of that.
func reaches(nw float64, t *Tuning) []reach {
	var out []reach
	w := nw
	for s := 1; s <= window; s++ {
		out = append(out, reach{s, w}, reach{-s, w * t.Back})
		w *= t.Decay
	}
	return out
}

// windowed returns the ordered group of document id if id is scored as a
// window: a short member of a sequence, at its place in the group's cached
// order.
func (x *Index) windowed(id uint32) ([]uint32, bool) {
	if !x.win(id) {
		return nil, false
	}
	g, p := x.groups[x.group(id)], x.pos(id)
	return g, int(p) < len(g) && g[p] == id
}

// neighbour returns the document at position p of group g if there is one
// and it is windowed itself (a long member neither lends its words nor
// takes others').
func (x *Index) neighbour(g []uint32, p int) (uint32, bool) {
	if p < 0 || p >= len(g) || !x.win(g[p]) {
		return 0, false
	}
	return g[p], true
}

// windowLen is the length of the window of windowed document id in group
// g: its own plus its neighbours' at their weights. The window of p holds
// p-off at the weight with which p's terms reach p+off.
func (x *Index) windowLen(id uint32, g []uint32, rs []reach, reply float64) float64 {
	l, p := float64(x.length(id)), int(x.pos(id))
	for _, r := range rs {
		if n, ok := x.neighbour(g, p-r.off); ok {
			l += x.reachWeight(n, r, reply) * float64(x.length(n))
		}
	}
	return l
}

// reachWeight is the weight at which document n's terms count in the
// window r.off places after it: a question's in its reply's (the next
// document's) at reply, when set.
func (x *Index) reachWeight(n uint32, r reach, reply float64) float64 {
	if r.off == 1 && reply > 0 && x.question(n) {
		return reply
	}
	return r.w
}

// windowAvg is the average window length: a window of neighbours of
// average length (the length normalisation of a window is against other
// windows, not against single documents).
func windowAvg(avg float64, rs []reach) float64 {
	sum := 1.0
	for _, r := range rs {
		sum += r.w
	}
	return avg * sum
}

// spread adds term frequency tf of query term qi in windowed document id
// of group g to its own window and to its neighbours'.
func (x *Index) spread(acc *scratch, id uint32, g []uint32, qi int, tf float64, rs []reach, reply float64) {
	acc.tf(id)[qi] += tf
	p := int(x.pos(id))
	for _, r := range rs {
		if n, ok := x.neighbour(g, p+r.off); ok {
			acc.tf(n)[qi] += x.reachWeight(id, r, reply) * tf
		}
	}
}

// windowScore is the BM25 score of a window with term frequencies tfs.
func windowScore(tfs, idfs []float64, length, avg float64, t *Tuning) float64 {
	s := 0.0
	norm := t.K1 * (1 - t.B + t.B*length/avg)
	for i, tf := range tfs {
		if tf > 0 {
			s += idfs[i] * tf * (t.K1 + 1) / (tf + norm)
		}
	}
	return s
}

// scoreWindows scores the windowed documents of the query's lists in
// full: each one's own BM25 (acc.base) and its window's (acc.score), then
// every member of a sequence its sequence's best window at Tuning.Prior,
// and an asking document a little less. Only the blocks that hold a short
// document are read (a window is short). It returns the most the sequence
// prior gave any document.
func (x *Index) scoreWindows(acc *scratch, lists []*postings, idfs []float64, rs []reach, t *Tuning, avg float64) float64 {
	k1, b := t.K1, t.B
	base, score := acc.base, acc.score
	for qi, ps := range lists {
		idf := idfs[qi]
		for bi := range ps.blocks() {
			if !ps.skipAt(bi).short {
				continue
			}
			for c := ps.block(bi); ; {
				doc, tfi, ok := c.next()
				if !ok {
					break
				}
				g, ok := x.windowed(doc)
				if !ok || !x.isLive(doc) {
					continue
				}
				tf := float64(tfi)
				if base[doc] == 0 {
					acc.touched = append(acc.touched, doc)
				}
				base[doc] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(x.length(doc))/avg))
				x.spread(acc, doc, g, qi, tf, rs, t.Reply)
			}
		}
	}
	for _, id := range acc.touched {
		score[id] = base[id]
	}
	wavg := windowAvg(avg, rs)
	gbest := map[uint64]float64{}
	var lastG uint64
	var g []uint32
	for _, id := range acc.slotted {
		if base[id] == 0 {
			acc.touched = append(acc.touched, id) // a neighbour without a match of its own
		}
		if gid := x.group(id); gid != lastG || g == nil {
			lastG, g = gid, x.groups[gid]
		}
		s := windowScore(acc.tf(id), idfs, x.windowLen(id, g, rs, t.Reply), wavg, t)
		score[id] = s
		if s > gbest[lastG] {
			gbest[lastG] = s
		}
	}
	// Sequence prior: every member of a sequence of short documents (a
	// session) that it or its window matches also scores its sequence's
	// best window, so the sessions about the question come first, and
	// within them the windows that match best. A short member that
	// neither it nor its neighbours match is no result: the prior alone
	// would list every turn of a session, above better matches of other
	// sessions (left out, LoCoMo's recall is the same to the third
	// decimal, in-sample and held out).
	most := 0.0
	for gid, v := range gbest {
		most = max(most, t.Prior*v)
		for _, id := range x.groups[gid] {
			if score[id] == 0 && base[id] == 0 {
				if _, short := x.windowed(id); short {
					continue
				}
				acc.touched = append(acc.touched, id) // long: its own match is read later (prune.go)
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
	return most
}
