package embed

import (
	"sync"

	"golang.org/x/sys/cpu"
)

// The micro-kernels of gemm_amd64.s: c (mr×nr, row-major) = the product of
// a packed A panel (k steps of mr=6 values) and a packed B panel (k steps
// of nr values), twelve vector accumulators.
//
//go:noescape
func kern6x16(k int, a, b, c *float32)

//go:noescape
func kern6x32(k int, a, b, c *float32)

type microKernel struct {
	name   string
	mr, nr int
	fn     func(k int, a, b, c *float32)
}

// simdKernel is the widest micro-kernel the CPU runs, nil for none.
var simdKernel = func() *microKernel {
	switch {
	case cpu.X86.HasAVX512F && hasAVX2:
		return &microKernel{"avx512", 6, 32, kern6x32}
	case hasAVX2:
		return &microKernel{"avx2", 6, 16, kern6x16}
	}
	return nil
}()

// packBufs are simdGemm's packing buffers, reused across calls.
var packBufs = sync.Pool{New: func() any { return new([2][]float32) }}

// simdGemm is goGemm with an assembly micro-kernel: A is packed into
// panels of mr rows and op(B) into panels of nr columns (zero-padded at the
// edges), and the kernel computes each mr×nr tile of C. Every element of C
// is summed in the same order (p = 0..k-1, fused multiply-adds) wherever
// its tile falls, so results do not depend on m.
func simdGemm(uk *microKernel, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	bufs := packBufs.Get().(*[2][]float32)
	defer packBufs.Put(bufs)
	pb := grow(&bufs[1], packedSize(uk, n, k))
	packB(uk, transB, n, k, b, ldb, pb)
	simdGemmPacked(uk, m, n, k, alpha, a, lda, pb, beta, c, ldc, &bufs[0])
}

func packedSize(uk *microKernel, n, k int) int { return (n+uk.nr-1)/uk.nr*uk.nr*k + 1 }

// packB lays op(B) (k×n) out in panels of nr columns: panel j holds, for
// each p, the nr values op(B)[p][j*nr+col].
func packB(uk *microKernel, transB bool, n, k int, b []float32, ldb int, pb []float32) {
	nr := uk.nr
	for j := range (n + nr - 1) / nr {
		panel := pb[j*nr*k : (j+1)*nr*k]
		for col := range nr {
			cc := j*nr + col
			switch {
			case cc >= n:
				for p := range k {
					panel[p*nr+col] = 0
				}
			case transB:
				for p, v := range b[cc*ldb : cc*ldb+k] {
					panel[p*nr+col] = v
				}
			default:
				for p := range k {
					panel[p*nr+col] = b[p*ldb+cc]
				}
			}
		}
	}
}

// simdGemmPacked is simdGemm with op(B) already packed by packB.
func simdGemmPacked(uk *microKernel, m, n, k int, alpha float32, a []float32, lda int, pb []float32, beta float32, c []float32, ldc int, abuf *[]float32) {
	mr, nr := uk.mr, uk.nr
	mp, np := (m+mr-1)/mr, (n+nr-1)/nr
	pa := grow(abuf, mp*mr*k+1)
	// A panel i: for each p, the mr values a[i*mr+r][p].
	for i := range mp {
		panel := pa[i*mr*k : (i+1)*mr*k]
		for r := range mr {
			row := i*mr + r
			if row >= m {
				for p := range k {
					panel[p*mr+r] = 0
				}
				continue
			}
			for p, v := range a[row*lda : row*lda+k] {
				panel[p*mr+r] = v
			}
		}
	}
	var tile [6 * 32]float32
	for j := range np {
		cols := min(nr, n-j*nr)
		for i := range mp {
			uk.fn(k, &pa[i*mr*k], &pb[j*nr*k], &tile[0])
			for r := range min(mr, m-i*mr) {
				dst := c[(i*mr+r)*ldc+j*nr : (i*mr+r)*ldc+j*nr+cols]
				src := tile[r*nr : r*nr+cols]
				if alpha == 1 && beta == 1 { // the linear layers' case
					for col, v := range src {
						dst[col] += v
					}
					continue
				}
				for col, v := range src {
					set(dst, col, alpha*v, beta)
				}
			}
		}
	}
}

// simdPacking gives the Go kernel weights packed once at load.
func simdPacking(k *kernel) {
	uk := simdKernel
	k.pack = func(w []float32, out, in int) []float32 {
		pb := make([]float32, packedSize(uk, out, in))
		packB(uk, true, out, in, w, in, pb)
		return pb
	}
	k.gemmPacked = func(m, n, kk int, a []float32, lda int, pb []float32, c []float32, ldc int) {
		bufs := packBufs.Get().(*[2][]float32)
		defer packBufs.Put(bufs)
		simdGemmPacked(uk, m, n, kk, 1, a, lda, pb, 1, c, ldc, &bufs[0])
	}
}

func grow(s *[]float32, n int) []float32 {
	if cap(*s) < n {
		*s = make([]float32, n)
	}
	return (*s)[:n]
}
