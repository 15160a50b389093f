//go:build !noasm

#include "textflag.h"

// Even-lane indices for VPERMT2PS: lanes 0..15 of {a, b} at 0, 2, ..., 30.
DATA poolEvenIdx<>+0(SB)/4, $0
DATA poolEvenIdx<>+4(SB)/4, $2
DATA poolEvenIdx<>+8(SB)/4, $4
DATA poolEvenIdx<>+12(SB)/4, $6
DATA poolEvenIdx<>+16(SB)/4, $8
DATA poolEvenIdx<>+20(SB)/4, $10
DATA poolEvenIdx<>+24(SB)/4, $12
DATA poolEvenIdx<>+28(SB)/4, $14
DATA poolEvenIdx<>+32(SB)/4, $16
DATA poolEvenIdx<>+36(SB)/4, $18
DATA poolEvenIdx<>+40(SB)/4, $20
DATA poolEvenIdx<>+44(SB)/4, $22
DATA poolEvenIdx<>+48(SB)/4, $24
DATA poolEvenIdx<>+52(SB)/4, $26
DATA poolEvenIdx<>+56(SB)/4, $28
DATA poolEvenIdx<>+60(SB)/4, $30
GLOBL poolEvenIdx<>(SB), RODATA|NOPTR, $64

// func poolMaxRows512(dst, a, b *float32, n int)
// dst[i] = max(a[i], b[i]), NaN if either is NaN; the tail masked.
TEXT ·poolMaxRows512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
poolMaxRows512_loop:
	CMPQ CX, $16
	JLT poolMaxRows512_tail
	VMOVUPS (SI), Z0
	VMOVUPS (DX), Z1
	VMAXPS Z1, Z0, Z2
	VCMPPS $3, Z1, Z0, K1
	VADDPS Z1, Z0, K1, Z2
	VMOVUPS Z2, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP poolMaxRows512_loop
poolMaxRows512_tail:
	TESTQ CX, CX
	JEQ poolMaxRows512_done
	MOVQ $1, R9
	SHLQ CX, R9
	DECQ R9
	KMOVW R9, K2
	VMOVUPS.Z (SI), K2, Z0
	VMOVUPS.Z (DX), K2, Z1
	VMAXPS Z1, Z0, Z2
	VCMPPS $3, Z1, Z0, K1
	VADDPS Z1, Z0, K1, Z2
	VMOVUPS Z2, K2, (DI)
poolMaxRows512_done:
	VZEROUPPER
	RET

// func poolMaxRow512(dst, v *float32, n int, offs *int, nk int, stride int)
// dst[o] = max over k < nk of v[o*stride + offs[k]] (NaN sticks), for
// o < n, stride 1 or 2; 16 outputs per step, reading whole vectors (the
// caller leaves slack after v).
TEXT ·poolMaxRow512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ offs+24(FP), BX
	MOVQ nk+32(FP), R8
	MOVQ stride+40(FP), R10
	VMOVDQU32 poolEvenIdx<>(SB), Z7
	MOVQ $0xffff, R9
	KMOVW R9, K3
poolMaxRow512_block:
	TESTQ CX, CX
	JLE poolMaxRow512_done
	CMPQ CX, $16
	JGE poolMaxRow512_full
	MOVQ $1, R9
	SHLQ CX, R9
	DECQ R9
	KMOVW R9, K3
poolMaxRow512_full:
	MOVQ $0, R11
poolMaxRow512_tap:
	MOVQ (BX)(R11*8), R9
	LEAQ (SI)(R9*4), R12
	CMPQ R10, $2
	JEQ poolMaxRow512_even
	VMOVUPS (R12), Z3
	JMP poolMaxRow512_got
poolMaxRow512_even:
	VMOVUPS (R12), Z3
	VPERMT2PS 64(R12), Z7, Z3
poolMaxRow512_got:
	TESTQ R11, R11
	JNE poolMaxRow512_fold
	VMOVAPS Z3, Z2
	JMP poolMaxRow512_next
poolMaxRow512_fold:
	VMAXPS Z3, Z2, Z4
	VCMPPS $3, Z3, Z2, K1
	VADDPS Z3, Z2, K1, Z4
	VMOVAPS Z4, Z2
poolMaxRow512_next:
	INCQ R11
	CMPQ R11, R8
	JLT poolMaxRow512_tap
	VMOVUPS Z2, K3, (DI)
	ADDQ $64, DI
	MOVQ R10, R9
	SHLQ $6, R9
	ADDQ R9, SI
	SUBQ $16, CX
	JMP poolMaxRow512_block
poolMaxRow512_done:
	VZEROUPPER
	RET
