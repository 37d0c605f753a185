package embed

// simdTestKernels are the micro-kernels this CPU can run, each on its own
// (the encoder only uses the widest).
func simdTestKernels() map[string]*kernel {
	ks := map[string]*kernel{}
	add := func(uk *microKernel) {
		ks[uk.name] = &kernel{name: uk.name, gemm: func(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
			simdGemm(uk, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		}}
	}
	if hasAVX2 {
		add(&microKernel{"avx2", 6, 16, kern6x16})
	}
	if simdKernel != nil && simdKernel.name == "avx512" {
		add(simdKernel)
	}
	return ks
}
