package embed

import "fmt"

// kernel is a single-threaded sgemm: C = alpha·A·op(B) + beta·C, row-major.
type kernel struct {
	name string
	gemm func(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	// pack, when set, lays a linear layer's weights (out×in) out once at
	// load for gemmPacked, which computes C += A·Wᵀ from them.
	pack       func(w []float32, out, in int) []float32
	gemmPacked func(m, n, k int, a []float32, lda int, packed []float32, c []float32, ldc int)
}

var goKernel = func() *kernel {
	if simdKernel != nil {
		k := &kernel{name: "go+" + simdKernel.name, gemm: goGemm}
		simdPacking(k)
		return k
	}
	return &kernel{name: "go", gemm: goGemm}
}()

// pickKernel returns the kernel named, or for "" the fastest available.
func pickKernel(name string) (*kernel, error) {
	switch name {
	case "go":
		return goKernel, nil
	case "", "openblas":
		k, err := openBLAS()
		if err == nil {
			return k, nil
		}
		if name == "" {
			return goKernel, nil
		}
		return nil, fmt.Errorf("embed: kernel openblas: %w", err)
	}
	return nil, fmt.Errorf("embed: unknown kernel %q (openblas or go)", name)
}
