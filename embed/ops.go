package embed

import "math"

const (
	geluC = 2 * 0.7978845608028654 // 2·√(2/π)
	expHi = 88.3762626647949
	expLo = -87.3365447504
)

// expf is a float32 e^x (Cephes' expf: range reduction by ln 2, a degree-6
// polynomial, the exponent set by bits), within 2 ulp; the scalar twin of
// simd_amd64.s's vector version, which computes the same way.
func expf(x float32) float32 {
	x = min(max(x, expLo), expHi)
	fx := float32(math.RoundToEven(float64(x * math.Log2E)))
	x -= fx * 0.693359375
	x -= fx * -2.12194440e-4
	z := x * x
	y := ((((1.9875691500e-4*x+1.3981999507e-3)*x+8.3334519073e-3)*x+4.1665795894e-2)*x+1.6666665459e-1)*x + 5.0000001201e-1
	y = y*z + x + 1
	return y * math.Float32frombits(uint32(int32(fx)+127)<<23)
}

// softmaxRows replaces each n-wide row of s by its softmax. The
// exponentials of the whole block go through expVec at once (a 28×28 block
// is 98 vectors of 8; row by row each row would leave a scalar tail).
func softmaxRows(s []float32, n int) {
	for r := 0; r+n <= len(s); r += n {
		row := s[r : r+n]
		mx := row[0]
		for _, v := range row[1:] {
			mx = max(mx, v)
		}
		for j := range row {
			row[j] -= mx
		}
	}
	for j := expVec(s); j < len(s); j++ {
		s[j] = expf(s[j])
	}
	for r := 0; r+n <= len(s); r += n {
		row := s[r : r+n]
		inv := 1 / sum(row)
		for j := range row {
			row[j] *= inv
		}
	}
}

// sum adds v up with four accumulators (the additions' latency, not their
// count, bounds a single running sum).
func sum(v []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(v); i += 4 {
		s0 += v[i]
		s1 += v[i+1]
		s2 += v[i+2]
		s3 += v[i+3]
	}
	for ; i < len(v); i++ {
		s0 += v[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// gelu applies GELU in place in the tanh form spago (and so cybertron)
// computes for "gelu": 0.5x(1+tanh(√(2/π)(x+0.044715x³))), written as
// x·sigmoid(2u) to need one exponential.
func gelu(v []float32) {
	for i := geluVec(v); i < len(v); i++ {
		x := v[i]
		v[i] = x / (1 + expf(-geluC*(x+0.044715*x*x*x)))
	}
}
