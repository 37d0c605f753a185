package embed

import (
	"math"

	"golang.org/x/sys/cpu"
)

//go:noescape
func geluAVX2(x []float32, c *[16][8]float32)

//go:noescape
func expAVX2(x []float32, c *[16][8]float32)

var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// vecConsts are simd_amd64.s's constants, each in all 8 lanes.
var vecConsts = func() *[16][8]float32 {
	vals := [15]float32{-geluC, -geluC * 0.044715, expHi, expLo, math.Log2E,
		0.693359375, -2.12194440e-4,
		1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1,
		1, math.Float32frombits(127)}
	var c [16][8]float32
	for i, v := range vals {
		for j := range c[i] {
			c[i][j] = v
		}
	}
	return &c
}()

// geluVec applies GELU to as many leading elements of v as it can and
// returns how many (a multiple of 8; 0 without AVX2 and FMA).
func geluVec(v []float32) int {
	if !hasAVX2 {
		return 0
	}
	n := len(v) &^ 7
	geluAVX2(v[:n], vecConsts)
	return n
}

// expVec is geluVec for e^x.
func expVec(v []float32) int {
	if !hasAVX2 {
		return 0
	}
	n := len(v) &^ 7
	expAVX2(v[:n], vecConsts)
	return n
}
