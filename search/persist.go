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
// rebuilt from the documents on the first search, as after a compaction.

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
		TotalLen: x.totalLen, Live: x.live, Dead: x.dead}
	for i, d := range x.docs {
		im.Docs[i] = DocImage{Ino: d.key.Ino, Part: d.key.Part, Group: d.group, Order: d.order, Length: d.length, Live: d.live, Question: d.question}
	}
	for t, p := range x.post {
		im.Terms = append(im.Terms, t)
		im.Lists = append(im.Lists, p.b[:len(p.b):len(p.b)])
		im.Counts = append(im.Counts, int32(p.n))
		im.Lasts = append(im.Lasts, p.last)
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
	return enc.Encode(&w)
}

// image is the Image a wireImage holds; its orders and lists share the
// wire's two blobs.
func (w *wireImage) image() (*Image, error) {
	n := w.Docs
	if len(w.Inos) != n || len(w.Groups) != n || len(w.Parts) != n || len(w.Lengths) != n || len(w.Flags) != n || len(w.OrderEnds) != n {
		return nil, fmt.Errorf("search: index image: columns of %d, %d, %d, %d, %d and %d documents, the header says %d",
			len(w.Inos), len(w.Groups), len(w.Parts), len(w.Lengths), len(w.Flags), len(w.OrderEnds), n)
	}
	if len(w.ListEnds) != len(w.Terms) {
		return nil, fmt.Errorf("search: index image: %d terms, %d lists", len(w.Terms), len(w.ListEnds))
	}
	im := &Image{Docs: make([]DocImage, n), Terms: w.Terms, Lists: make([][]byte, len(w.ListEnds)), Counts: w.Counts, Lasts: w.Lasts,
		TotalLen: w.TotalLen, Live: w.Live, Dead: w.Dead}
	var at uint32
	for i := range im.Docs {
		end := w.OrderEnds[i]
		if end < at || int(end) > len(w.Orders) {
			return nil, fmt.Errorf("search: index image: document %d's order ends at %d of %d", i, end, len(w.Orders))
		}
		im.Docs[i] = DocImage{Ino: w.Inos[i], Part: w.Parts[i], Group: w.Groups[i], Order: w.Orders[at:end], Length: w.Lengths[i],
			Live: w.Flags[i]&1 != 0, Question: w.Flags[i]&2 != 0}
		at = end
	}
	var from uint64
	for i, end := range w.ListEnds {
		if end < from || end > uint64(len(w.Lists)) {
			return nil, fmt.Errorf("search: index image: list %d ends at %d of %d", i, end, len(w.Lists))
		}
		im.Lists[i] = w.Lists[from:end:end] // an append copies it out
		from = end
	}
	return im, nil
}

// Load replaces the index with the image dec holds (Image.Encode). On an
// error the index is left empty.
func (x *Index) Load(dec *gob.Decoder) error {
	var w wireImage
	if err := dec.Decode(&w); err != nil {
		x.Reset()
		return err
	}
	im, err := w.image()
	if err != nil {
		x.Reset()
		return err
	}
	n := len(im.Terms)
	if len(im.Lists) != n || len(im.Counts) != n || len(im.Lasts) != n {
		x.Reset()
		return fmt.Errorf("search: index image: %d terms, %d lists, %d counts, %d lasts", n, len(im.Lists), len(im.Counts), len(im.Lasts))
	}
	fresh := NewIndex()
	fresh.docs = make([]doc, len(im.Docs))
	live := 0
	var total uint64
	for i, d := range im.Docs {
		fresh.docs[i] = doc{key: Key{d.Ino, d.Part}, group: d.Group, order: d.Order, length: d.Length, live: d.Live, question: d.Question}
		if d.Live {
			fresh.byIno[d.Ino] = append(fresh.byIno[d.Ino], uint32(i))
			live++
			total += uint64(d.Length)
		}
		fresh.members[d.Group] = append(fresh.members[d.Group], uint32(i))
		fresh.invalidate(d.Group)
	}
	if live != im.Live || total != im.TotalLen || live+im.Dead != len(im.Docs) {
		x.Reset()
		return fmt.Errorf("search: index image: %d live documents of length %d, the header says %d of %d", live, total, im.Live, im.TotalLen)
	}
	for i, t := range im.Terms {
		if int(im.Lasts[i]) >= len(im.Docs) && im.Counts[i] > 0 {
			x.Reset()
			return fmt.Errorf("search: index image: term %q names document %d of %d", t, im.Lasts[i], len(im.Docs))
		}
		fresh.post[t] = &postings{b: im.Lists[i], n: int(im.Counts[i]), last: im.Lasts[i]}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.docs, x.byIno, x.post, x.totalLen, x.live, x.dead = fresh.docs, fresh.byIno, fresh.post, total, live, im.Dead
	x.groups, x.members, x.seq, x.stale = fresh.groups, fresh.members, fresh.seq, fresh.stale
	x.gen++
	return nil
}
