package search

import (
	"encoding/gob"
	"fmt"
	"strings"
)

// Persisting the lexical index (views/snapshot.go writes it beside the
// store): Image captures the index in a few copies under the read lock,
// so that encoding it, which takes long, holds no lock; Load replaces the
// index with a decoded image. The group caches are not saved: they are
// rebuilt from the documents (SortGroups, or the first search), as after
// a compaction.

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
	im := &Image{Docs: make([]DocImage, len(x.docs)), Terms: make([]string, 0, len(x.post)),
		Lists: make([][]byte, 0, len(x.post)), Counts: make([]int32, 0, len(x.post)), Lasts: make([]uint32, 0, len(x.post)),
		TotalLen: x.totalLen, Live: x.live, Dead: x.dead, skips: make([][]skip, 0, len(x.post))}
	for i, d := range x.docs {
		im.Docs[i] = DocImage{Ino: d.key.Ino, Part: d.key.Part, Group: d.group, Order: d.order, Length: d.length, Live: d.live, Question: d.question}
	}
	for t, p := range x.post {
		im.Terms = append(im.Terms, t)
		im.Lists = append(im.Lists, p.b[:len(p.b):len(p.b)])
		im.Counts = append(im.Counts, int32(p.n))
		im.Lasts = append(im.Lasts, p.last)
		im.skips = append(im.skips, p.skipList())
	}
	return im
}

// wireImage is an Image as it is written: a column of each field of the
// documents, and every posting list and every order in one blob with the
// ends of its parts, so that decoding is a few large reads instead of a
// struct or a slice per document and per term.
type wireImage struct {
	Inos, Groups     []uint64
	Parts, Lengths   []uint32
	Flags            []byte // bit 0: live; bit 1: question
	Orders           string
	OrderEnds        []uint32
	Terms            []string
	Lists            []byte
	ListEnds         []uint64
	Counts           []int32
	Lasts            []uint32
	Skips            wireSkips
	TotalLen         uint64
	Live, Dead, Docs int
}

// Encode writes the image.
func (im *Image) Encode(enc *gob.Encoder) error {
	n := len(im.Docs)
	w := wireImage{Inos: make([]uint64, n), Groups: make([]uint64, n), Parts: make([]uint32, n), Lengths: make([]uint32, n),
		Flags: make([]byte, n), OrderEnds: make([]uint32, n), Terms: im.Terms, ListEnds: make([]uint64, len(im.Lists)),
		Counts: im.Counts, Lasts: im.Lasts, TotalLen: im.TotalLen, Live: im.Live, Dead: im.Dead, Docs: n}
	var orders strings.Builder
	for i, d := range im.Docs {
		w.Inos[i], w.Groups[i], w.Parts[i], w.Lengths[i] = d.Ino, d.Group, d.Part, d.Length
		if d.Live {
			w.Flags[i] |= 1
		}
		if d.Question {
			w.Flags[i] |= 2
		}
		orders.WriteString(d.Order)
		w.OrderEnds[i] = uint32(orders.Len())
	}
	w.Orders = orders.String()
	size := 0
	for _, l := range im.Lists {
		size += len(l)
	}
	w.Lists = make([]byte, 0, size)
	for i, l := range im.Lists {
		w.Lists = append(w.Lists, l...)
		w.ListEnds[i] = uint64(len(w.Lists))
	}
	w.Skips = encodeSkips(im.skips)
	return enc.Encode(&w)
}

// Load replaces the index with the image dec holds (Image.Encode). On an
// error the index is left empty. The documents' orders and the posting
// lists share the image's two blobs.
func (x *Index) Load(dec *gob.Decoder) error {
	var w wireImage
	if err := dec.Decode(&w); err != nil {
		x.Reset()
		return err
	}
	fresh, err := w.index()
	if err != nil {
		x.Reset()
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.docs, x.lens, x.byIno, x.post, x.totalLen, x.live, x.dead = fresh.docs, fresh.lens, fresh.byIno, fresh.post, fresh.totalLen, fresh.live, fresh.dead
	x.groups, x.members, x.seq, x.stale = fresh.groups, fresh.members, fresh.seq, fresh.stale
	x.nwin, x.winCount = 0, fresh.winCount
	x.rmGen++
	x.gen++
	return nil
}

// index is the index w holds, checked against itself.
func (w *wireImage) index() (*Index, error) {
	n := w.Docs
	if len(w.Inos) != n || len(w.Groups) != n || len(w.Parts) != n || len(w.Lengths) != n || len(w.Flags) != n || len(w.OrderEnds) != n {
		return nil, fmt.Errorf("search: index image: columns of %d, %d, %d, %d, %d and %d documents, the header says %d",
			len(w.Inos), len(w.Groups), len(w.Parts), len(w.Lengths), len(w.Flags), len(w.OrderEnds), n)
	}
	t := len(w.Terms)
	if len(w.ListEnds) != t || len(w.Counts) != t || len(w.Lasts) != t {
		return nil, fmt.Errorf("search: index image: %d terms, %d lists, %d counts, %d lasts", t, len(w.ListEnds), len(w.Counts), len(w.Lasts))
	}
	fresh := NewIndex()
	fresh.docs = make([]doc, n)
	var at uint32
	for i := range fresh.docs {
		end := w.OrderEnds[i]
		if end < at || int(end) > len(w.Orders) {
			return nil, fmt.Errorf("search: index image: document %d's order ends at %d of %d", i, end, len(w.Orders))
		}
		live, g := w.Flags[i]&1 != 0, w.Groups[i]
		fresh.docs[i] = doc{key: Key{w.Inos[i], w.Parts[i]}, group: g, order: w.Orders[at:end], length: w.Lengths[i],
			live: live, question: w.Flags[i]&2 != 0}
		at = end
		if live {
			fresh.byIno[w.Inos[i]] = append(fresh.byIno[w.Inos[i]], uint32(i))
			fresh.live++
			fresh.totalLen += uint64(w.Lengths[i])
		}
		fresh.members[g] = append(fresh.members[g], uint32(i))
		fresh.invalidate(g)
	}
	fresh.dead = w.Dead
	fresh.lens = lengths(fresh.docs)
	if fresh.live != w.Live || fresh.totalLen != w.TotalLen || fresh.live+w.Dead != n {
		return nil, fmt.Errorf("search: index image: %d live documents of length %d, the header says %d of %d", fresh.live, fresh.totalLen, w.Live, w.TotalLen)
	}
	var from uint64
	for i, term := range w.Terms {
		end := w.ListEnds[i]
		if end < from || end > uint64(len(w.Lists)) {
			return nil, fmt.Errorf("search: index image: list %d ends at %d of %d", i, end, len(w.Lists))
		}
		if int(w.Lasts[i]) >= n && w.Counts[i] > 0 {
			return nil, fmt.Errorf("search: index image: term %q names document %d of %d", term, w.Lasts[i], n)
		}
		// An append to a list copies it out of the blob (its capacity ends there).
		ps := &postings{b: w.Lists[from:end:end], n: uint32(w.Counts[i]), last: w.Lasts[i]}
		if err := w.Skips.set(ps, i, n); err != nil {
			return nil, fmt.Errorf("search: index image: term %q: %w", term, err)
		}
		fresh.post[term] = ps
		from = end
	}
	if at := w.Skips.used(); at != len(w.Skips.Counts) {
		return nil, fmt.Errorf("search: index image: skips for %d lists, %d read", len(w.Skips.Counts), at)
	}
	return fresh, nil
}
