//go:build linux && (amd64 || arm64)

package embed

import "testing"

// Without libopenblas (a fresh machine) the kernel cannot load, "" falls
// back to Go and "openblas" says why.
func TestOpenBLASMissing(t *testing.T) {
	saved := openBLASLibs
	defer func() { openBLASLibs = saved }()
	openBLASLibs = []string{"libopenblas-that-is-not-there.so.0"}
	if k, err := loadOpenBLAS(); err == nil || k != nil {
		t.Fatalf("loaded %v, %v", k, err)
	} else {
		t.Log(err)
	}
}

func TestSelfCheckCatchesAWrongSgemm(t *testing.T) {
	wrong := &kernel{name: "wrong", gemm: func(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		goGemm(transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		c[len(c)/2] += 0.01
	}}
	if err := selfCheck(wrong); err == nil {
		t.Fatal("a wrong sgemm passed the self-check")
	}
	if err := selfCheck(goKernel); err != nil {
		t.Fatal(err)
	}
}
