//go:build !amd64

package embed

func geluVec([]float32) int { return 0 }
func expVec([]float32) int  { return 0 }

type microKernel struct{ name string }

var simdKernel *microKernel

func simdGemm(*microKernel, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int) {
	panic("unreachable")
}

func simdPacking(*kernel) {}
