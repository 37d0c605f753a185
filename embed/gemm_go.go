package embed

// goGemm is the sgemm every build has: C = alpha·A·op(B) + beta·C,
// row-major, A m×k (stride lda), op(B) k×n: with transB, B is stored n×k
// (stride ldb), without, k×n. It runs the assembly micro-kernel of
// gemm_amd64.go where the CPU has one, scalarGemm elsewhere. Either way the
// order of the sums for one element of C does not depend on m, n or the
// tile it falls in, so a sentence gets the same vector in any batch.
func goGemm(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if simdKernel != nil {
		simdGemm(simdKernel, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	scalarGemm(transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// scalarGemm is goGemm in plain Go: register tiles of 4×4 dot products,
// blocked so a panel of B stays in cache; without transB, B is first
// transposed into a scratch buffer so both operands are read along k.
func scalarGemm(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !transB {
		bt := make([]float32, n*k)
		for p := 0; p < k; p++ {
			row := b[p*ldb : p*ldb+n]
			for j, v := range row {
				bt[j*k+p] = v
			}
		}
		b, ldb = bt, k
	}
	const jBlock = 64
	for j0 := 0; j0 < n; j0 += jBlock {
		j1 := min(j0+jBlock, n)
		i := 0
		for ; i+4 <= m; i += 4 {
			j := j0
			for ; j+4 <= j1; j += 4 {
				dot4x4(k, a[i*lda:], lda, b[j*ldb:], ldb, alpha, beta, c[i*ldc+j:], ldc)
			}
			for ; j < j1; j++ {
				for ii := i; ii < i+4; ii++ {
					set(c, ii*ldc+j, alpha*dot(a[ii*lda:ii*lda+k], b[j*ldb:j*ldb+k]), beta)
				}
			}
		}
		for ; i < m; i++ {
			for j := j0; j < j1; j++ {
				set(c, i*ldc+j, alpha*dot(a[i*lda:i*lda+k], b[j*ldb:j*ldb+k]), beta)
			}
		}
	}
}

func set(c []float32, i int, v, beta float32) {
	if beta == 0 {
		c[i] = v
	} else {
		c[i] = v + beta*c[i]
	}
}

// dot is a dot product summed in the same order as one element of dot4x4.
func dot(x, y []float32) float32 {
	var s float32
	y = y[:len(x)]
	for p, v := range x {
		s += v * y[p]
	}
	return s
}

// dot4x4 computes a 4×4 tile of C from four rows of A and four rows of B.
func dot4x4(k int, a []float32, lda int, b []float32, ldb int, alpha, beta float32, c []float32, ldc int) {
	a0, a1, a2, a3 := a[:k], a[lda:lda+k], a[2*lda:2*lda+k], a[3*lda:3*lda+k]
	b0, b1, b2, b3 := b[:k], b[ldb:ldb+k], b[2*ldb:2*ldb+k], b[3*ldb:3*ldb+k]
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 float32
	for p := range k {
		x0, x1, x2, x3 := a0[p], a1[p], a2[p], a3[p]
		y0, y1, y2, y3 := b0[p], b1[p], b2[p], b3[p]
		c00 += x0 * y0
		c01 += x0 * y1
		c02 += x0 * y2
		c03 += x0 * y3
		c10 += x1 * y0
		c11 += x1 * y1
		c12 += x1 * y2
		c13 += x1 * y3
		c20 += x2 * y0
		c21 += x2 * y1
		c22 += x2 * y2
		c23 += x2 * y3
		c30 += x3 * y0
		c31 += x3 * y1
		c32 += x3 * y2
		c33 += x3 * y3
	}
	for r, row := range [4][4]float32{{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23}, {c30, c31, c32, c33}} {
		for j, v := range row {
			set(c, r*ldc+j, alpha*v, beta)
		}
	}
}
