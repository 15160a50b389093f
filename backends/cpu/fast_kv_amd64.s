//go:build !noasm

#include "textflag.h"

// AVX2 + FMA + F16C row kernels of KVAttention (fast_kv.go). n is a
// multiple of 8; the callers do the remainder in Go.

// func kvDotF32AVX2(a, b *float32, n int) float32
TEXT ·kvDotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	CMPQ CX, $16
	JL dot32tail

dot32loop:
	VMOVUPS (SI), Y2
	VMOVUPS 32(SI), Y3
	VFMADD231PS (DI), Y2, Y0
	VFMADD231PS 32(DI), Y3, Y1
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE dot32loop

dot32tail:
	CMPQ CX, $8
	JL dot32done
	VMOVUPS (SI), Y2
	VFMADD231PS (DI), Y2, Y0

dot32done:
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func kvDotF16AVX2(a *float32, b *uint16, n int) float32
TEXT ·kvDotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	CMPQ CX, $16
	JL dot16tail

dot16loop:
	VCVTPH2PS (DI), Y2
	VCVTPH2PS 16(DI), Y3
	VFMADD231PS (SI), Y2, Y0
	VFMADD231PS 32(SI), Y3, Y1
	ADDQ $64, SI
	ADDQ $32, DI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE dot16loop

dot16tail:
	CMPQ CX, $8
	JL dot16done
	VCVTPH2PS (DI), Y2
	VFMADD231PS (SI), Y2, Y0

dot16done:
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func kvAxpyF32AVX2(y *float32, a float32, x *float32, n int)
TEXT ·kvAxpyF32AVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	VBROADCASTSS a+8(FP), Y0
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX

axpy32loop:
	CMPQ CX, $8
	JL axpy32done
	VMOVUPS (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP axpy32loop

axpy32done:
	VZEROUPPER
	RET

// func kvAxpyF16AVX2(y *float32, a float32, x *uint16, n int)
TEXT ·kvAxpyF16AVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	VBROADCASTSS a+8(FP), Y0
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX

axpy16loop:
	CMPQ CX, $8
	JL axpy16done
	VCVTPH2PS (SI), Y2
	VMOVUPS (DI), Y1
	VFMADD231PS Y2, Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP axpy16loop

axpy16done:
	VZEROUPPER
	RET
