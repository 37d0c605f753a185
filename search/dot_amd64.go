//go:build !purego

package search

import "golang.org/x/sys/cpu"

//go:noescape
func dotRowsAVX2(q, slab, out []float32)

// hasAVX2 is whether dotRowsAVX2 can run here.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotRowsAsm is dotRowsAVX2 where it can run: the CPU has AVX2 and FMA and
// the dimension is a multiple of 8 (384, 768, 1024: every common model);
// dotRowsGo otherwise.
func dotRowsAsm(q, slab, out []float32) {
	if len(q)%8 != 0 || len(slab) < len(q)*len(out) {
		dotRowsGo(q, slab, out)
		return
	}
	dotRowsAVX2(q, slab, out)
}

func init() {
	if hasAVX2 {
		dotRows = dotRowsAsm
	}
}

func dotKernels() []dotKernel {
	ks := []dotKernel{{"go", dotRowsGo}}
	if hasAVX2 {
		ks = append(ks, dotKernel{"avx2", dotRowsAsm})
	}
	return ks
}
