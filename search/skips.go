package search

import "fmt"

// wireSkips is the skip entries of an image's lists as columns: Counts[i]
// entries for list i, one after the other.
type wireSkips struct {
	Counts             []uint32
	Last, End, TF, Len []uint32
	Short              []byte
	next, at           int // reading: the next list, the next entry
}

func encodeSkips(lists [][]skip) wireSkips {
	var w wireSkips
	for _, sk := range lists {
		w.Counts = append(w.Counts, uint32(len(sk)))
		for _, s := range sk {
			w.Last, w.End, w.TF, w.Len = append(w.Last, s.last), append(w.End, s.end), append(w.TF, s.maxTF), append(w.Len, s.minLen)
			sh := byte(0)
			if s.short {
				sh = 1
			}
			w.Short = append(w.Short, sh)
		}
	}
	return w
}

// set gives list i (ps, of an index of n documents) its skip entries,
// checked against the list.
func (w *wireSkips) set(ps *postings, i, n int) error {
	if w.next != i || i >= len(w.Counts) {
		return fmt.Errorf("no skip entries")
	}
	w.next++
	k := int(w.Counts[i])
	if k > len(w.Last)-w.at || len(w.End) != len(w.Last) || len(w.TF) != len(w.Last) || len(w.Len) != len(w.Last) || len(w.Short) != len(w.Last) {
		return fmt.Errorf("skip columns end early")
	}
	if k != ps.blocks() {
		return fmt.Errorf("%d blocks for %d postings", k, ps.n)
	}
	sk := make([]skip, k)
	prev := uint32(0)
	for j := range k {
		a := w.at + j
		s := skip{last: w.Last[a], end: w.End[a], maxTF: w.TF[a], minLen: w.Len[a], short: w.Short[a] != 0}
		if s.end < prev || int(s.end) > len(ps.b) || int(s.last) >= n || j > 0 && s.last <= sk[j-1].last {
			return fmt.Errorf("block %d: ends at %d of %d, last document %d of %d", j, s.end, len(ps.b), s.last, n)
		}
		prev = s.end
		sk[j] = s
	}
	if k > 0 && (int(sk[k-1].end) != len(ps.b) || sk[k-1].last != ps.last) {
		return fmt.Errorf("the last block does not end the list")
	}
	ps.setSkips(sk)
	w.at += k
	return nil
}

func (w *wireSkips) used() int { return w.next }
