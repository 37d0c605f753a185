//go:build !amd64

package embed

func simdTestKernels() map[string]*kernel { return nil }
