//go:build !purego

#include "textflag.h"

// func dotRowsAVX2(q, slab, out []float32)
//
// out[i] = q · slab[i*d:(i+1)*d] for d = len(q), a multiple of 8 (the Go
// side checks). Four 8-wide FMA accumulators over blocks of 32 values,
// then blocks of 8; the lanes are added at the end of each row.
TEXT ·dotRowsAVX2(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), CX
	MOVQ slab_base+24(FP), DI
	MOVQ out_base+48(FP), DX
	MOVQ out_len+56(FP), BX
	TESTQ BX, BX
	JZ   done

row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, R8
	SHRQ   $5, R8
	JZ     tail

loop32:
	VMOVUPS     (DI)(AX*4), Y4
	VMOVUPS     32(DI)(AX*4), Y5
	VMOVUPS     64(DI)(AX*4), Y6
	VMOVUPS     96(DI)(AX*4), Y7
	VFMADD231PS (SI)(AX*4), Y4, Y0
	VFMADD231PS 32(SI)(AX*4), Y5, Y1
	VFMADD231PS 64(SI)(AX*4), Y6, Y2
	VFMADD231PS 96(SI)(AX*4), Y7, Y3
	ADDQ        $32, AX
	DECQ        R8
	JNZ         loop32

tail:
	MOVQ CX, R8
	ANDQ $31, R8
	SHRQ $3, R8
	JZ   reduce

loop8:
	VMOVUPS     (DI)(AX*4), Y4
	VFMADD231PS (SI)(AX*4), Y4, Y0
	ADDQ        $8, AX
	DECQ        R8
	JNZ         loop8

reduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, (DX)
	ADDQ         $4, DX
	LEAQ         (DI)(CX*4), DI
	DECQ         BX
	JNZ          row
	VZEROUPPER

done:
	RET
