package search

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Every kernel agrees with a float64 reference and with the pure-Go one
// (to rounding: they add in different orders), at dimensions that are and
// are not multiples of 8 and 32.
func TestDotKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{0, 1, 7, 8, 16, 24, 31, 32, 40, 64, 100, 384, 768} {
		const rows = 5
		q, slab := randVec(r, d), make([]float32, rows*d)
		for i := range slab {
			slab[i] = float32(r.NormFloat64())
		}
		want := make([]float32, rows)
		dotRowsGo(q, slab, want)
		for _, k := range dotKernels() {
			out := make([]float32, rows)
			k.fn(q, slab, out)
			for i := range rows {
				var ref, abs float64
				for j := range d {
					p := float64(q[j]) * float64(slab[i*d+j])
					ref, abs = ref+p, abs+math.Abs(p)
				}
				tol := 1e-5*abs + 1e-7 // float32 rounding, summed in any order
				if math.Abs(float64(out[i])-ref) > tol || math.Abs(float64(out[i]-want[i])) > tol {
					t.Fatalf("%s dim %d row %d: %v, go %v, float64 %v", k.name, d, i, out[i], want[i], ref)
				}
			}
		}
	}
}
