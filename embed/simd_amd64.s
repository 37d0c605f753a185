#include "textflag.h"

// EXP sets Y5 = e^Y2 (8 lanes), using Y3 and Y4: clamp, n = round(x·log2 e),
// r = x - n·ln 2 (in two parts), a degree-6 polynomial in r, times 2^n set
// through the exponent bits.
#define EXP \
 VMINPS    64(DX), Y2, Y2; \
 VMAXPS    96(DX), Y2, Y2; \
 VMULPS    128(DX), Y2, Y3; \
 VROUNDPS  $0, Y3, Y3; \
 VFNMADD231PS 160(DX), Y3, Y2; \
 VFNMADD231PS 192(DX), Y3, Y2; \
 VMULPS    Y2, Y2, Y4; \
 VMOVUPS   224(DX), Y5; \
 VFMADD213PS  256(DX), Y2, Y5; \
 VFMADD213PS  288(DX), Y2, Y5; \
 VFMADD213PS  320(DX), Y2, Y5; \
 VFMADD213PS  352(DX), Y2, Y5; \
 VFMADD213PS  384(DX), Y2, Y5; \
 VFMADD213PS  Y2, Y4, Y5; \
 VADDPS    416(DX), Y5, Y5; \
 VCVTPS2DQ Y3, Y3; \
 VPADDD    448(DX), Y3, Y3; \
 VPSLLD    $23, Y3, Y3; \
 VMULPS    Y3, Y5, Y5

// Vector e^x and GELU for AVX2 with FMA, 8 float32 at a time, the same
// Cephes expf as ops.go's scalar expf. c points to the constants of
// vecConsts, each repeated 8 times (32 bytes a row):
// 0 -2√(2/π), 1 -2√(2/π)·0.044715, 2 hi clamp, 3 lo clamp, 4 log2 e,
// 5 ln2 high, 6 ln2 low, 7..12 polynomial, 13 1.0, 14 int32 127.

// func geluAVX2(x []float32, c *[16][8]float32)
// x[i] = x[i] / (1 + e^(-2√(2/π)(x+0.044715x³))), for len(x)&^7 elements.
TEXT ·geluAVX2(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ c+24(FP), DX
	SHRQ $3, CX
	JZ   gdone

gloop:
	VMOVUPS      (SI), Y0
	VMULPS       Y0, Y0, Y1
	VMOVUPS      32(DX), Y2
	VFMADD213PS  0(DX), Y1, Y2
	VMULPS       Y0, Y2, Y2
	EXP
	VADDPS       416(DX), Y5, Y5
	VDIVPS       Y5, Y0, Y0
	VMOVUPS      Y0, (SI)
	ADDQ         $32, SI
	DECQ         CX
	JNZ          gloop
	VZEROUPPER

gdone:
	RET

// func expAVX2(x []float32, c *[16][8]float32)
// x[i] = e^x[i], for len(x)&^7 elements.
TEXT ·expAVX2(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ c+24(FP), DX
	SHRQ $3, CX
	JZ   edone

eloop:
	VMOVUPS      (SI), Y2
	EXP
	VMOVUPS      Y5, (SI)
	ADDQ         $32, SI
	DECQ         CX
	JNZ          eloop
	VZEROUPPER

edone:
	RET
