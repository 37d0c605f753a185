package search

import (
	"fmt"
	"slices"
)

// Persisting the lexical index (views/snapshot.go writes it beside the
// store): Image captures the index in a few copies under the read lock,
// so that writing it (Image.WriteSegment, segment.go), which takes long,
// holds no lock; LoadSegment replaces the index with a segment, used
// where it lies. The group caches are not saved: they are rebuilt from
// the documents (SortGroups, or the first search), as after a
// compaction.

// Image is the index as it was when captured. Its posting lists share
// their bytes with the index: lists only ever grow at their end (and a
// compaction makes new ones), so the captured prefix never changes.
type Image struct {
	Docs     []DocImage
	Terms    []string
	Lists    [][]byte
	Counts   []int32
	Lasts    []uint32
	TotalLen uint64
	Live     int
	Dead     int
	Gen      uint64   // the index's Gen when captured
	skips    [][]skip // copies: a list's last entry changes as it grows
}

// DocImage is one document of an Image.
type DocImage struct {
	Ino      uint64
	Part     uint32
	Group    uint64
	Order    string
	Length   uint32
	Live     bool
	Question bool
}

// Image captures the index.
func (x *Index) Image() *Image {
	x.mu.RLock()
	defer x.mu.RUnlock()
	t := x.terms()
	im := &Image{Docs: make([]DocImage, x.ndocs()), Terms: make([]string, 0, t),
		Lists: make([][]byte, 0, t), Counts: make([]int32, 0, t), Lasts: make([]uint32, 0, t),
		TotalLen: x.totalLen, Live: x.live, Dead: x.dead, Gen: x.gen, skips: make([][]skip, 0, t)}
	for i := range im.Docs {
		id := uint32(i)
		k := x.key(id)
		im.Docs[i] = DocImage{Ino: k.Ino, Part: k.Part, Group: x.group(id), Order: x.order(id), Length: x.length(id),
			Live: x.isLive(id), Question: x.question(id)}
	}
	x.eachList(func(t string, p *postings) {
		im.Terms = append(im.Terms, t)
		im.Lists = append(im.Lists, p.b[:len(p.b):len(p.b)])
		im.Counts = append(im.Counts, int32(p.n))
		im.Lasts = append(im.Lasts, p.last)
		im.skips = append(im.skips, p.skipList())
	})
	return im
}

// LoadSegment replaces the index with the segment data holds
// (Image.WriteSegment). The index keeps using data (its term dictionary,
// posting lists and documents' orders stay there): data must not change
// or go away while the index may use it. On an error the index is left
// empty.
func (x *Index) LoadSegment(data []byte) error {
	seg, err := parseSegment(data)
	if err == nil {
		var fresh *Index
		if fresh, err = seg.index(); err == nil {
			x.mu.Lock()
			defer x.mu.Unlock()
			x.dt, x.lens, x.byIno, x.over, x.base, x.totalLen, x.live, x.dead = fresh.dt, fresh.lens, fresh.byIno, fresh.over, fresh.base, fresh.totalLen, fresh.live, fresh.dead
			x.groups, x.members, x.seq, x.stale = fresh.groups, fresh.members, fresh.seq, fresh.stale
			x.nwin, x.winCount = 0, fresh.winCount
			x.rmGen++
			x.gen++
			return nil
		}
	}
	x.Reset()
	return err
}

// Adopt replaces the index with y's documents and lists if the index is
// still at generation gen (nothing changed since an image was captured
// at gen); it reports whether it did. y must not be used after.
func (x *Index) Adopt(y *Index, gen uint64) bool {
	y.mu.Lock()
	defer y.mu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.gen != gen {
		return false
	}
	x.dt, x.lens, x.byIno, x.over, x.base, x.totalLen, x.live, x.dead = y.dt, y.lens, y.byIno, y.over, y.base, y.totalLen, y.live, y.dead
	x.groups, x.members, x.seq, x.stale, x.nwin, x.winCount = y.groups, y.members, y.seq, y.stale, y.nwin, y.winCount
	x.rmGen++
	x.gen++
	return true
}

// index is the index the segment holds, its documents checked against
// the header (the lists are checked as they are looked up, dict.go).
func (s *segment) index() (*Index, error) {
	n := s.docs
	fresh := NewIndex()
	// The documents' names stay in the segment (docs.go); the columns a
	// search reads at random are made here.
	fresh.dt = docTable{seg: s, nbase: uint32(n), inos: slices.Clone(s.inos), parts: slices.Clone(s.parts),
		pos: make([]int32, n), flags: make([]uint8, n)}
	fresh.lens = make([]uint32, n)
	var at uint32
	for i := range n {
		end := s.orderEnds[i]
		if end < at || int(end) > len(s.orders) {
			return nil, fmt.Errorf("search: segment: document %d's order ends at %d of %d", i, end, len(s.orders))
		}
		at = end
		fresh.lens[i] = min(s.lengths[i], deadBit-1)
		if s.flags[i]&2 != 0 {
			fresh.dt.flags[i] = flagQuestion
		}
		if s.flags[i]&1 != 0 {
			fresh.live++
			fresh.totalLen += uint64(s.lengths[i])
		} else {
			fresh.lens[i] |= deadBit
		}
	}
	// Each group's members in order (the dead ones would be dropped
	// from them anyway): sortedGroups finds them sorted.
	if len(s.groupOrder) != fresh.live {
		return nil, fmt.Errorf("search: segment: %d documents by group, %d live", len(s.groupOrder), fresh.live)
	}
	for _, id := range s.groupOrder {
		if int(id) >= n || s.flags[id]&1 == 0 {
			return nil, fmt.Errorf("search: segment: document %d by group is not a live one", id)
		}
		g := s.groups[id]
		fresh.members[g] = append(fresh.members[g], id)
	}
	for g := range fresh.members {
		fresh.invalidate(g)
	}
	fresh.dead = s.dead
	if fresh.live != s.live || fresh.totalLen != s.totalLen || fresh.live+s.dead != n {
		return nil, fmt.Errorf("search: segment: %d live documents of length %d, the header says %d of %d", fresh.live, fresh.totalLen, s.live, s.totalLen)
	}
	for i := 1; i < s.terms; i++ {
		if s.termEnds[i] < s.termEnds[i-1] || s.listEnds[i] < s.listEnds[i-1] || s.skipEnds[i] < s.skipEnds[i-1] {
			return nil, fmt.Errorf("search: segment: term %d's ends go back", i)
		}
	}
	if s.terms > 0 && (int(s.termEnds[s.terms-1]) != len(s.termBlob) || s.listEnds[s.terms-1] != uint64(len(s.lists)) || int(s.skipEnds[s.terms-1]) != len(s.skips)) {
		return nil, fmt.Errorf("search: segment: the last term does not end the arrays")
	}
	if len(s.inoOrder) != fresh.live {
		return nil, fmt.Errorf("search: segment: %d documents by inode, %d live", len(s.inoOrder), fresh.live)
	}
	prev := Key{}
	for k, id := range s.inoOrder { // sorted, live: docsOf's binary search holds
		if int(id) >= n || s.flags[id]&1 == 0 || k > 0 && (s.inos[id] < prev.Ino || s.inos[id] == prev.Ino && id <= prev.Part) {
			return nil, fmt.Errorf("search: segment: document %d by inode out of order", k)
		}
		prev = Key{s.inos[id], id}
	}
	fresh.base = newBase(s)
	return fresh, nil
}
