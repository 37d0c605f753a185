package search

import (
	"math"
	"strings"
	"sync"
)

// Key names one document: a file (Part 0) or one line of a log (Part n).
type Key struct {
	Ino  uint64
	Part uint32
}

// Part is the text of one document of a file. Meta is the words of its
// metadata (a speaker, users, tags): also in Text, they are indexed a
// second time as a field of their own (metaPrefix), which a query's terms
// match at Tuning.Meta.
// Head, when set, comes before Text: the document is Head then Text (a
// memory's metadata words and date before its body, apart so that the body
// is not copied). It ends between words, as with a line break.
type Part struct {
	Part uint32
	Head string
	Text string
	Meta string
}

// metaPrefix marks the index terms of the metadata field.
const metaPrefix = "\x01"

// Index is an in-memory BM25 index.
type Index struct {
	mu sync.RWMutex
	// lens is each document's length, deadBit set once it is removed: a
	// column dense enough for a search to read at random; dt is the rest
	// of the documents' table (docs.go).
	lens []uint32
	dt   docTable
	// byIno is each file's documents, of the files put or removed since
	// a segment was loaded (a removed one's nil); the others' are the
	// base's (docsOf).
	byIno map[uint64][]uint32
	// over and base are the term dictionary (dict.go): the lists made or
	// changed since a segment was loaded, and that segment's.
	over     map[string]*postings
	base     *base
	totalLen uint64
	live     int
	dead     int
	// groups caches each group's live documents in order; nil entries
	// are rebuilt on demand from members, every document ever placed in
	// the group (dead or moved ones are dropped when it is rebuilt).
	groups  map[uint64][]uint32
	members map[uint64][]uint32
	// stale: the groups whose cache is nil, to rebuild before a search
	// (so that a search need not look at every group to find them).
	stale map[uint64]struct{}
	// seq marks the groups that are sequences (see isSequence).
	seq map[uint64]bool
	// nwin counts the windowed documents of the cached groups, winCount
	// those of each group: with none, a search scores no windows.
	nwin     int
	winCount map[uint64]int
	// seen: sortedGroups' scratch, a bit per document, all clear between
	// groups.
	seen []uint64
	// touched: addLocked's scratch, the lists of a document's terms.
	touched []*postings
	gen     uint64
	// rmGen changes whenever a document is removed (a list's live count,
	// idf, is kept until then).
	rmGen uint64
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{byIno: map[uint64][]uint32{}, over: map[string]*postings{}, groups: map[uint64][]uint32{},
		members: map[uint64][]uint32{}, seq: map[uint64]bool{}, stale: map[uint64]struct{}{}, winCount: map[uint64]int{}}
}

// Reset empties the index.
func (x *Index) Reset() {
	n := NewIndex()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dt, x.lens, x.byIno, x.over, x.base, x.totalLen, x.live, x.dead = docTable{}, nil, n.byIno, n.over, nil, 0, 0, 0
	x.groups, x.members, x.seq, x.stale, x.nwin, x.winCount = n.groups, n.members, n.seq, n.stale, 0, n.winCount
	x.seen = nil
	x.gen++
	x.rmGen++
}

// Gen changes whenever the index changes.
func (x *Index) Gen() uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.gen
}

// Len is the number of live documents.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

// Put replaces the documents of ino. With group 0 (a log) the parts are a
// sequence of their own, neighbours of each other in Part order; otherwise
// the single part is placed in group (its directory) at position order (its
// name).
func (x *Index) Put(ino uint64, parts []Part, group uint64, order string) {
	x.put(ino, parts, group, order, true)
}

// Append adds parts to the sequence of a log indexed with group 0.
func (x *Index) Append(ino uint64, parts []Part) { x.put(ino, parts, 0, "", false) }

func (x *Index) put(ino uint64, parts []Part, group uint64, order string, replace bool) {
	x.putAnalyzed(ino, Analyze(parts), group, order, replace)
}

// Analyzed is the index terms of a file's parts (Analyze), made before
// the index's lock is taken: a build makes them on another goroutine
// than the one that adds them (PutAnalyzed).
type Analyzed struct {
	parts    []uint32 // each part's number
	question []bool   // whether it asks something
	toks     [][]string
	metas    [][]string
	// buf holds every part's tokens (one buffer of tokenBufs: a slice a
	// document was 2.5 GB of a 1M build's allocations), given back once
	// they are added; the lists keep the terms, not the slice.
	buf *[]string
}

// Analyze makes the index terms of parts.
func Analyze(parts []Part) *Analyzed {
	a := &Analyzed{parts: make([]uint32, len(parts)), question: make([]bool, len(parts)),
		toks: make([][]string, len(parts)), metas: make([][]string, len(parts))}
	a.buf = tokenBufs.Get().(*[]string)
	all := (*a.buf)[:0]
	for i, p := range parts {
		a.parts[i], a.question[i] = p.Part, strings.ContainsRune(p.Head, '?') || strings.ContainsRune(p.Text, '?')
		n := len(all)
		all = AppendTokens(AppendTokens(all, p.Head), p.Text)
		a.toks[i] = all[n:len(all):len(all)]
		for _, t := range Tokens(p.Meta) {
			a.metas[i] = append(a.metas[i], metaPrefix+t)
		}
	}
	*a.buf = all
	return a
}

// release gives a's token buffer back.
func (a *Analyzed) release() {
	if all := *a.buf; cap(all) <= tokenBufMax {
		clear(all)
		*a.buf = all[:0]
		tokenBufs.Put(a.buf)
	}
	a.buf, a.toks, a.metas = nil, nil, nil
}

// PutAnalyzed is Put of the parts a was made from; a is used up.
func (x *Index) PutAnalyzed(ino uint64, a *Analyzed, group uint64, order string) {
	x.putAnalyzed(ino, a, group, order, true)
}

func (x *Index) putAnalyzed(ino uint64, a *Analyzed, group uint64, order string, replace bool) {
	defer a.release()
	x.mu.Lock()
	defer x.mu.Unlock()
	if replace {
		x.removeLocked(ino)
	}
	for i, part := range a.parts {
		g, o := group, order
		if group == 0 || len(a.parts) > 1 {
			g, o = ino|1<<63, lineOrder(part)
		}
		x.addLocked(Key{ino, part}, g, o, a.toks[i], a.metas[i], a.question[i])
	}
	x.gen++
	x.maybeCompact()
}

// tokenBufs holds put's token buffers; one that grew past tokenBufMax
// (a huge file) is left to the collector.
var tokenBufs = sync.Pool{New: func() any { return new([]string) }}

const tokenBufMax = 1 << 16

// Move updates the group and position of a single-part file.
func (x *Index) Move(ino uint64, group uint64, order string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	ids := x.docsOf(ino)
	if len(ids) != 1 {
		return
	}
	id := ids[0]
	x.invalidate(x.group(id))
	if x.group(id) != group {
		x.members[group] = append(x.members[group], id)
	}
	x.place(id, group, order)
	x.invalidate(group)
	x.gen++
}

// Remove drops the documents of ino.
func (x *Index) Remove(ino uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(ino)
	x.gen++
	x.maybeCompact()
}

func (x *Index) removeLocked(ino uint64) {
	for _, id := range x.docsOf(ino) {
		if x.isLive(id) {
			x.totalLen -= uint64(x.length(id))
			x.lens[id] |= deadBit
			x.live--
			x.dead++
			x.invalidate(x.group(id))
			x.rmGen++
		}
	}
	if x.base != nil && len(x.base.docsOf(ino)) > 0 {
		x.byIno[ino] = nil // the base's are no longer its
	} else {
		delete(x.byIno, ino)
	}
}

// docsOf is the documents of ino. Caller holds the lock.
func (x *Index) docsOf(ino uint64) []uint32 {
	if ids, ok := x.byIno[ino]; ok || x.base == nil {
		return ids
	}
	return x.base.docsOf(ino)
}

func (x *Index) addLocked(k Key, group uint64, order string, toks, meta []string, question bool) {
	id := x.appendDoc(k, place{group, order}, uint32(len(toks)), question)
	x.byIno[k.Ino] = append(x.docsOf(k.Ino), id)
	x.live++
	x.totalLen += uint64(len(toks))
	x.invalidate(group)
	x.members[group] = append(x.members[group], id)
	// Each distinct term's count, on its list (postings.pend) rather than
	// in a map a document: the list is looked up for every occurrence
	// instead of once, and counting, iterating and clearing a map (8.5 s
	// of a 1M build's CPU) is not done.
	touched := x.touched[:0]
	mark := id + 1
	count := func(t string) {
		p := x.listForWrite(t)
		if p.pendDoc != mark {
			p.pendDoc, p.pendTF = mark, 0
			touched = append(touched, p)
		}
		p.pendTF++
	}
	for _, t := range toks {
		count(t)
	}
	for _, t := range meta { // a field of its own: not in the length
		count(t)
	}
	for _, p := range touched {
		p.add(id, p.pendTF, uint32(len(toks)))
	}
	clear(touched) // holds no list past the document
	x.touched = touched[:0]
}

// maybeCompact drops dead documents once they are half the index.
func (x *Index) maybeCompact() {
	if x.dead < 1024 || x.dead < x.live {
		return
	}
	old := x.ndocs()
	remap := make([]uint32, old)
	y := NewIndex()
	for id := range uint32(old) {
		if !x.isLive(id) {
			remap[id] = math.MaxUint32
			continue
		}
		remap[id] = y.appendDoc(x.key(id), place{x.group(id), x.order(id)}, x.length(id), x.question(id))
	}
	over := make(map[string]*postings, x.terms())
	x.eachList(func(t string, ps *postings) {
		out := &postings{}
		ps.each(func(doc, tf uint32) {
			if r := remap[doc]; r != math.MaxUint32 {
				out.add(r, tf, y.length(r))
			}
		})
		if out.n > 0 {
			over[t] = out
		}
	})
	x.over, x.base = over, nil
	x.dt, x.lens, x.dead = y.dt, y.lens, 0
	x.byIno = map[uint64][]uint32{}
	x.groups = map[uint64][]uint32{}
	x.members = map[uint64][]uint32{}
	x.stale = map[uint64]struct{}{}
	x.nwin, x.winCount = 0, map[uint64]int{}
	for id := range uint32(x.ndocs()) {
		ino, g := x.dt.inos[id], x.dt.added[id].group
		x.byIno[ino] = append(x.byIno[ino], id)
		x.members[g] = append(x.members[g], id)
		x.invalidate(g)
	}
}

// deadBit marks a removed document in Index.lens.
const deadBit = 1 << 31

// invalidate marks the cache of group g stale. Caller holds the write lock.
func (x *Index) invalidate(g uint64) {
	x.groups[g] = nil
	x.stale[g] = struct{}{}
}
