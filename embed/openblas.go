//go:build linux && (amd64 || arm64)

package embed

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// OpenBLAS is loaded at run time with purego (dlopen, no cgo, no headers):
// a binary built anywhere uses it where libopenblas.so.0 is installed
// (Debian: libopenblas0-pthread or libopenblas0-openmp) and falls back to
// the Go kernel where it is not.
var openBLASLibs = []string{"libopenblas.so.0", "libopenblas.so"}

const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
)

var (
	obOnce   sync.Once
	obKernel *kernel
	obErr    error
)

func openBLAS() (*kernel, error) {
	obOnce.Do(func() { obKernel, obErr = loadOpenBLAS() })
	return obKernel, obErr
}

func loadOpenBLAS() (k *kernel, err error) {
	defer func() {
		if p := recover(); p != nil { // purego panics on a missing symbol
			k, err = nil, fmt.Errorf("%v", p)
		}
	}()
	var h uintptr
	for _, name := range openBLASLibs {
		if h, err = purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	for _, sym := range []string{"cblas_sgemm", "openblas_set_num_threads"} {
		if _, err := purego.Dlsym(h, sym); err != nil {
			return nil, errors.Join(fmt.Errorf("%s has no %s", openBLASLibs[0], sym), err)
		}
	}
	var sgemm func(order, transA, transB, m, n, k int32, alpha float32, a unsafe.Pointer, lda int32,
		b unsafe.Pointer, ldb int32, beta float32, c unsafe.Pointer, ldc int32)
	var setThreads func(int32)
	purego.RegisterLibFunc(&sgemm, h, "cblas_sgemm")
	purego.RegisterLibFunc(&setThreads, h, "openblas_set_num_threads")
	// Each batch runs on one goroutine; parallelism comes from running
	// several batches at once, not from OpenBLAS's own threads.
	setThreads(1)
	gemm := func(transB bool, m, n, kk int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		if m == 0 || n == 0 {
			return
		}
		tb := int32(cblasNoTrans)
		if transB {
			tb = cblasTrans
		}
		sgemm(cblasRowMajor, cblasNoTrans, tb, int32(m), int32(n), int32(kk), alpha,
			unsafe.Pointer(&a[0]), int32(lda), unsafe.Pointer(&b[0]), int32(ldb), beta, unsafe.Pointer(&c[0]), int32(ldc))
	}
	k = &kernel{name: "openblas", gemm: gemm}
	if err := selfCheck(k); err != nil {
		return nil, err
	}
	return k, nil
}

// selfCheck compares k with the Go kernel on products of the encoder's
// kinds: some OpenBLAS builds compute wrong results on some processors
// (the reason OPENBLAS_CORETYPE is set on some machines), and a wrong
// vector would go unnoticed.
func selfCheck(k *kernel) error {
	for _, transB := range []bool{true, false} {
		const m, n, kk = 45, 70, 390
		a, b := make([]float32, m*kk), make([]float32, n*kk)
		for i := range a {
			a[i] = float32(i%97)/97 - 0.5
		}
		for i := range b {
			b[i] = float32(i%89)/89 - 0.5
		}
		ldb := kk
		if !transB {
			ldb = n
		}
		got, want := make([]float32, m*n), make([]float32, m*n)
		k.gemm(transB, m, n, kk, 1, a, kk, b, ldb, 0, got, n)
		goGemm(transB, m, n, kk, 1, a, kk, b, ldb, 0, want, n)
		for i := range got {
			if d := got[i] - want[i]; d > 1e-3 || d < -1e-3 {
				return fmt.Errorf("OpenBLAS's sgemm gives %v where %v is right (transB=%v): not used", got[i], want[i], transB)
			}
		}
	}
	return nil
}
