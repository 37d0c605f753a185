package search

import "sort"

// Groups: the documents of one folder (or the lines of one log), kept in
// their natural order for the windows and the sequence prior
// (window.go). A start from a snapshot rebuilds every group's cache, a
// million documents' worth, before its first search: this is done
// without a map or a string made per document (it took 560 ms of a
// 950 ms start at 1M memories with them).

// sortedGroups rebuilds the group caches that are stale. Caller holds the
// write lock.
func (x *Index) sortedGroups() {
	stale := x.stale
	if len(stale) == 0 {
		return
	}
	x.stale = map[uint64]struct{}{}
	if words := (x.ndocs() + 63) / 64; len(x.seen) < words {
		x.seen = make([]uint64, words)
	}
	for g := range stale {
		ids := x.liveMembers(g)
		x.members[g] = append([]uint32(nil), ids...)
		less := func(a, b int) bool { return naturalLess(x.order(ids[a]), x.order(ids[b])) }
		if !sort.SliceIsSorted(ids, less) { // a loaded segment's are
			sort.Slice(ids, less)
		}
		x.nwin -= x.winCount[g]
		delete(x.winCount, g)
		if len(ids) == 0 {
			delete(x.groups, g)
			delete(x.members, g)
			delete(x.seq, g)
			continue
		}
		x.groups[g] = ids
		x.seq[g] = x.isSequence(g, ids)
		wins := 0
		for i, id := range ids {
			win := x.seq[g] && x.length(id) <= shortDoc
			x.setWindow(id, i, win)
			if win {
				wins++
			}
		}
		if wins > 0 {
			x.nwin += wins
			x.winCount[g] = wins
		}
	}
}

// liveMembers is the live documents still in group g, each once, in the
// order they were placed (x.seen: clear before and after).
func (x *Index) liveMembers(g uint64) []uint32 {
	m := x.members[g]
	ids := make([]uint32, 0, len(m))
	for _, id := range m {
		w, bit := id/64, uint64(1)<<(id%64)
		if x.isLive(id) && x.group(id) == g && x.seen[w]&bit == 0 {
			x.seen[w] |= bit
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		x.seen[id/64] = 0
	}
	return ids
}

// isSequence reports whether a group's documents continue each other: the
// lines of one log, or at least minGroup files whose names differ only in
// their numbers (turn_1, turn_2, … or D3_14.md). A folder of notes with
// their own names is no sequence, however short they are.
func (x *Index) isSequence(g uint64, ids []uint32) bool {
	if len(ids) < minGroup {
		return false
	}
	if g&(1<<63) != 0 {
		return true // parts of one file (a log's lines)
	}
	// Four in five share one shape (the name without its digits): that
	// shape is the majority, which one pass finds (Boyer and Moore's
	// vote) and a second counts.
	cand, votes := "", 0
	for _, id := range ids {
		o := x.order(id)
		switch {
		case votes == 0:
			cand, votes = o, 1
		case sameShape(cand, o):
			votes++
		default:
			votes--
		}
	}
	n := 0
	for _, id := range ids {
		if sameShape(cand, x.order(id)) {
			n++
		}
	}
	return n*5 >= len(ids)*4
}

// sameShape reports whether a and b are the same once their ASCII digits
// are taken out.
func sameShape(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && a[i] >= '0' && a[i] <= '9' {
			i++
		}
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		i++
		j++
	}
}
