package search

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// shapeOf is the shape isSequence compares, made the plain way.
func shapeOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, s)
}

// TestSameShapeAndMajority: sameShape is the comparison of the names
// without their digits, and isSequence's vote gives what counting every
// shape gives, on names mixing digits, shared shapes and other letters.
func TestSameShapeAndMajority(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	parts := []string{"turn_", "D", "_", ".md", "é", "a", "b", "", "x9"}
	name := func() string {
		var b strings.Builder
		for range rng.Intn(5) {
			b.WriteString(parts[rng.Intn(len(parts))])
			if rng.Intn(2) == 0 {
				fmt.Fprint(&b, rng.Intn(120))
			}
		}
		return b.String()
	}
	for range 20000 {
		a, b := name(), name()
		if rng.Intn(3) == 0 {
			b = strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return '0' + rune(rng.Intn(10))
				}
				return r
			}, a) + strings.Repeat("7", rng.Intn(2))
		}
		if got, want := sameShape(a, b), shapeOf(a) == shapeOf(b); got != want {
			t.Fatalf("sameShape(%q, %q) = %v, want %v", a, b, got, want)
		}
	}
	for trial := range 3000 {
		x := NewIndex()
		n := minGroup + rng.Intn(12)
		common := name()
		var ids []uint32
		for i := range n {
			o := name()
			if rng.Intn(10) < 7+trial%3 {
				o = common + fmt.Sprint(i)
			}
			x.appendDoc(Key{}, place{order: o}, 1, false)
			ids = append(ids, uint32(i))
		}
		counts := map[string]int{}
		most := 0
		for _, id := range ids {
			counts[shapeOf(x.order(id))]++
			most = max(most, counts[shapeOf(x.order(id))])
		}
		if got, want := x.isSequence(1, ids), most*5 >= n*4; got != want {
			t.Fatalf("isSequence of %d names (most shared shape %d): %v, want %v", n, most, got, want)
		}
	}
}
