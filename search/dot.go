package search

// dotGo is the dot product of a and b (of the same length), unrolled by 8
// with four accumulators (a single chain of additions would wait on the
// adder's latency at every element). Both slices are cut to 8 at the top
// of the loop, and the loop condition bounds both: with that the compiler
// proves every index in range and the loop has no bounds checks (checked
// with go build -gcflags=-d=ssa/check_bce; indexing a[i+k], b[i+k] from a
// counter leaves sixteen checks per iteration).
func dotGo(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	for len(a) >= 8 && len(b) >= 8 {
		x, y := a[:8:8], b[:8:8]
		s0 += x[0]*y[0] + x[4]*y[4]
		s1 += x[1]*y[1] + x[5]*y[5]
		s2 += x[2]*y[2] + x[6]*y[6]
		s3 += x[3]*y[3] + x[7]*y[7]
		a, b = a[8:], b[8:]
	}
	for i, x := range a {
		if i < len(b) {
			s0 += x * b[i]
		}
	}
	return (s0 + s1) + (s2 + s3)
}

// dotRowsGo writes the dot product of q with each of the len(out) rows of
// slab (dim len(q)) to out.
func dotRowsGo(q, slab, out []float32) {
	d := len(q)
	for i := range out {
		out[i] = dotGo(q, slab[i*d:(i+1)*d])
	}
}

// dotRows is the kernel of a vector search (dotRowsGo, or an assembly one
// where the CPU has it).
var dotRows = dotRowsGo

// dotKernel is a kernel by name, for tests and benchmarks (dotKernels
// lists those this CPU runs).
type dotKernel struct {
	name string
	fn   func(q, slab, out []float32)
}
