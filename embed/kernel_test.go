package embed

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func availableKernels() []string {
	ks := []string{"go"}
	if _, err := openBLAS(); err == nil {
		ks = append(ks, "openblas")
	}
	return ks
}

func naiveGemm(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				bv := b[p*ldb+j]
				if transB {
					bv = b[j*ldb+p]
				}
				s += float64(a[i*lda+p]) * float64(bv)
			}
			c[i*ldc+j] = float32(float64(alpha)*s + float64(beta)*float64(c[i*ldc+j]))
		}
	}
}

func TestGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	randSlice := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return s
	}
	kernels := simdTestKernels()
	kernels["scalar"] = &kernel{name: "scalar", gemm: scalarGemm}
	for _, name := range availableKernels() {
		k, err := pickKernel(name)
		if err != nil {
			t.Fatal(err)
		}
		kernels[name] = k
	}
	for name, k := range kernels {
		for _, sz := range [][3]int{{1, 1, 1}, {4, 4, 4}, {5, 7, 3}, {28, 28, 32}, {33, 65, 70}, {100, 3, 129}} {
			for _, transB := range []bool{false, true} {
				m, n, kk := sz[0], sz[1], sz[2]
				lda, ldb, ldc := kk+3, n+2, n+1 // strided views, as attention uses
				if transB {
					ldb = kk + 5
				}
				a := randSlice(m * lda)
				b := randSlice(max(kk*ldb, n*ldb))
				c := randSlice(m * ldc)
				want := slices.Clone(c)
				beta := float32(r.IntN(2))
				k.gemm(transB, m, n, kk, 0.5, a, lda, b, ldb, beta, c, ldc)
				naiveGemm(transB, m, n, kk, 0.5, a, lda, b, ldb, beta, want, ldc)
				for i := range c {
					if d := math.Abs(float64(c[i] - want[i])); d > 1e-4*math.Sqrt(float64(kk)) {
						t.Fatalf("%s %v transB=%v: c[%d] = %v, want %v", name, sz, transB, i, c[i], want[i])
					}
				}
			}
		}
	}
}

func TestVectorExpAndGELU(t *testing.T) {
	var xs []float32
	for x := float32(-100); x <= 100; x += 0.0371 {
		xs = append(xs, x)
	}
	xs = append(xs, 0, -0, 88, 89, -87, -88, 1e-30, -1e-30)
	e := slices.Clone(xs)
	for i := expVec(e); i < len(e); i++ {
		e[i] = expf(e[i])
	}
	g := slices.Clone(xs)
	gelu(g)
	for i, x := range xs {
		want := math.Exp(float64(min(max(x, expLo), expHi)))
		if rel := math.Abs(float64(e[i])-want) / want; rel > 1e-6 {
			t.Fatalf("exp(%v) = %v, want %v", x, e[i], want)
		}
		// The vector code fuses multiply-adds: an ulp or two apart.
		if s := expf(x); math.Abs(float64(s-e[i])) > 3e-7*float64(s) {
			t.Fatalf("exp(%v): vector %v, scalar %v", x, e[i], s)
		}
		u := 0.7978845608028654 * (float64(x) + 0.044715*float64(x)*float64(x)*float64(x))
		wantG := 0.5 * float64(x) * (1 + math.Tanh(u))
		if d := math.Abs(float64(g[i]) - wantG); d > 1e-6*max(1, math.Abs(wantG)) {
			t.Fatalf("gelu(%v) = %v, want %v", x, g[i], wantG)
		}
	}
}
