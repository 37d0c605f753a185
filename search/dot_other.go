//go:build !amd64 || purego

package search

func dotKernels() []dotKernel { return []dotKernel{{"go", dotRowsGo}} }
