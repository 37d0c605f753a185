package search

// The documents' table. What a search reads per document at random — its
// key, its length and whether it is live (Index.lens), its place in its
// group and its flags — is in heap columns, 21 bytes a document. Where a
// document sits — its group and its order in it, read when groups are
// sorted and for the documents scored as windows — is read where it lies
// for a loaded segment's documents (the first nbase: at a million
// documents, 24 bytes of each the kernel may page out, which a table of
// structs copied into the heap), and from added, in the heap,
// for the documents put since (all of them without a segment, as during a
// build). A segment's document moved since the load (Move) has its new
// place in moved.

// place is where a document sits: its group and its order in it.
type place struct {
	group uint64
	order string
}

// docTable is the documents beside Index.lens (see above).
type docTable struct {
	seg   *segment // nil: no segment's documents
	nbase uint32
	inos  []uint64
	parts []uint32
	// pos is each document's index in its group's ordered list, and win
	// whether it is scored as a window (flagWin): valid when cached.
	pos   []int32
	flags []uint8
	added []place // of the documents nbase, nbase+1, …
	moved map[uint32]place
}

const (
	// flagQuestion: the document asks something (holds a '?'); its
	// words count in the next document's window at Tuning.Reply.
	flagQuestion uint8 = 1 << iota
	// flagWin: scored as a window (see windowed; valid when cached).
	flagWin
)

// ndocs is the number of documents, live or not.
func (x *Index) ndocs() int { return len(x.lens) }

// isLive reports whether document id is not removed.
func (x *Index) isLive(id uint32) bool { return x.lens[id]&deadBit == 0 }

// length is document id's length in terms.
func (x *Index) length(id uint32) uint32 { return x.lens[id] &^ deadBit }

func (x *Index) question(id uint32) bool { return x.dt.flags[id]&flagQuestion != 0 }

func (x *Index) win(id uint32) bool { return x.dt.flags[id]&flagWin != 0 }

func (x *Index) pos(id uint32) int32 { return x.dt.pos[id] }

// key is document id's Key.
func (x *Index) key(id uint32) Key { return Key{Ino: x.dt.inos[id], Part: x.dt.parts[id]} }

// group is the group of document id.
func (x *Index) group(id uint32) uint64 {
	t := &x.dt
	if id < t.nbase {
		if p, ok := t.moved[id]; ok {
			return p.group
		}
		return t.seg.groups[id]
	}
	return t.added[id-t.nbase].group
}

// order is document id's position in its group.
func (x *Index) order(id uint32) string {
	t := &x.dt
	if id < t.nbase {
		if p, ok := t.moved[id]; ok {
			return p.order
		}
		return t.seg.order(id)
	}
	return t.added[id-t.nbase].order
}

// place sets where document id sits.
func (x *Index) place(id uint32, group uint64, order string) {
	t := &x.dt
	if id < t.nbase {
		if t.moved == nil {
			t.moved = map[uint32]place{}
		}
		t.moved[id] = place{group, order}
		return
	}
	t.added[id-t.nbase] = place{group, order}
}

// appendDoc adds document k, at p, of length n (a new number, returned).
func (x *Index) appendDoc(k Key, p place, n uint32, question bool) uint32 {
	id := uint32(len(x.lens))
	t := &x.dt
	t.added = append(t.added, p)
	t.inos, t.parts = append(t.inos, k.Ino), append(t.parts, k.Part)
	x.lens = append(x.lens, min(n, deadBit-1))
	t.pos = append(t.pos, 0)
	f := uint8(0)
	if question {
		f = flagQuestion
	}
	t.flags = append(t.flags, f)
	return id
}

// setWindow caches document id's index in its group and whether it is
// scored as a window.
func (x *Index) setWindow(id uint32, pos int, win bool) {
	x.dt.pos[id] = int32(pos)
	if win {
		x.dt.flags[id] |= flagWin
	} else {
		x.dt.flags[id] &^= flagWin
	}
}

// order is the order of the segment's document id (its ends are checked
// when the segment is loaded).
func (s *segment) order(id uint32) string {
	from := uint32(0)
	if id > 0 {
		from = s.orderEnds[id-1]
	}
	return s.orders[from:s.orderEnds[id]]
}
