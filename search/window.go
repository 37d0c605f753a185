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
	d := &x.docs[id]
	if !d.win {
		return nil, false
	}
	g := x.groups[d.group]
	return g, d.pos < len(g) && g[d.pos] == id
}

// neighbour returns the document at position p of group g if there is one
// and it is windowed itself (a long member neither lends its words nor
// takes others').
func (x *Index) neighbour(g []uint32, p int) (uint32, bool) {
	if p < 0 || p >= len(g) || !x.docs[g[p]].win {
		return 0, false
	}
	return g[p], true
}

// windowLen is the length of the window of windowed document id in group
// g: its own plus its neighbours' at their weights. The window of p holds
// p-off at the weight with which p's terms reach p+off.
func (x *Index) windowLen(id uint32, g []uint32, rs []reach, reply float64) float64 {
	d := &x.docs[id]
	l := float64(d.length)
	for _, r := range rs {
		if n, ok := x.neighbour(g, d.pos-r.off); ok {
			l += x.reachWeight(n, r, reply) * float64(x.docs[n].length)
		}
	}
	return l
}

// reachWeight is the weight at which document n's terms count in the
// window r.off places after it: a question's in its reply's (the next
// document's) at reply, when set.
func (x *Index) reachWeight(n uint32, r reach, reply float64) float64 {
	if r.off == 1 && reply > 0 && x.docs[n].question {
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
	p := x.docs[id].pos
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
