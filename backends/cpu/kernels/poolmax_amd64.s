//go:build !noasm

#include "textflag.h"

// Lane indices for VPERMT2PS over {lo, hi}: the even lanes 0, 2, ..., 30
// and the odd lanes 1, 3, ..., 31.
DATA poolMax3Even<>+0(SB)/4, $0
DATA poolMax3Even<>+4(SB)/4, $2
DATA poolMax3Even<>+8(SB)/4, $4
DATA poolMax3Even<>+12(SB)/4, $6
DATA poolMax3Even<>+16(SB)/4, $8
DATA poolMax3Even<>+20(SB)/4, $10
DATA poolMax3Even<>+24(SB)/4, $12
DATA poolMax3Even<>+28(SB)/4, $14
DATA poolMax3Even<>+32(SB)/4, $16
DATA poolMax3Even<>+36(SB)/4, $18
DATA poolMax3Even<>+40(SB)/4, $20
DATA poolMax3Even<>+44(SB)/4, $22
DATA poolMax3Even<>+48(SB)/4, $24
DATA poolMax3Even<>+52(SB)/4, $26
DATA poolMax3Even<>+56(SB)/4, $28
DATA poolMax3Even<>+60(SB)/4, $30
GLOBL poolMax3Even<>(SB), RODATA|NOPTR, $64
DATA poolMax3Odd<>+0(SB)/4, $1
DATA poolMax3Odd<>+4(SB)/4, $3
DATA poolMax3Odd<>+8(SB)/4, $5
DATA poolMax3Odd<>+12(SB)/4, $7
DATA poolMax3Odd<>+16(SB)/4, $9
DATA poolMax3Odd<>+20(SB)/4, $11
DATA poolMax3Odd<>+24(SB)/4, $13
DATA poolMax3Odd<>+28(SB)/4, $15
DATA poolMax3Odd<>+32(SB)/4, $17
DATA poolMax3Odd<>+36(SB)/4, $19
DATA poolMax3Odd<>+40(SB)/4, $21
DATA poolMax3Odd<>+44(SB)/4, $23
DATA poolMax3Odd<>+48(SB)/4, $25
DATA poolMax3Odd<>+52(SB)/4, $27
DATA poolMax3Odd<>+56(SB)/4, $29
DATA poolMax3Odd<>+60(SB)/4, $31
GLOBL poolMax3Odd<>(SB), RODATA|NOPTR, $64

// NANMAX sets d to max(a, b), NaN where either is NaN (K7 clobbered).
#define NANMAX(a, b, d) VMAXPS b, a, d; VCMPPS $3, b, a, K7; VADDPS b, a, K7, d

// func poolMax3S2Row512(dst, r0, r1, r2 *float32, w, ow int)
// Per block of 16 outputs: input columns 32b..32b+31 of the three rows
// (masked loads past w read -Inf), their vertical max split into even
// columns (2o) and odd columns (2o+1), and the odd column before each
// output (2o-1) from the previous block's odd vector (-Inf before the
// first).
TEXT ·poolMax3S2Row512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ r2+24(FP), R8
	MOVQ w+32(FP), R10
	MOVQ ow+40(FP), BX
	MOVL $0xff800000, AX
	VPBROADCASTD AX, Z31
	VMOVDQU32 poolMax3Even<>(SB), Z30
	VMOVDQU32 poolMax3Odd<>(SB), Z29
	VMOVAPS Z31, Z28

pm3_block:
	CMPQ R10, $32
	JLT pm3_partial
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS (DX), Z2
	VMOVUPS 64(DX), Z3
	VMOVUPS (R8), Z4
	VMOVUPS 64(R8), Z5
	JMP pm3_loaded

pm3_partial:
	// K1: columns 32b.. of the low vector still inside the row; K2: the
	// high vector's.
	XORQ R9, R9
	XORQ R11, R11
	MOVQ R10, CX
	TESTQ CX, CX
	JLE pm3_masks
	CMPQ CX, $16
	JLE pm3_lo
	MOVQ $0xffff, R9
	SUBQ $16, CX
	MOVQ $1, R11
	SHLQ CX, R11
	DECQ R11
	JMP pm3_masks
pm3_lo:
	MOVQ $1, R9
	SHLQ CX, R9
	DECQ R9
pm3_masks:
	KMOVW R9, K1
	KMOVW R11, K2
	VMOVAPS Z31, Z0
	VMOVAPS Z31, Z1
	VMOVAPS Z31, Z2
	VMOVAPS Z31, Z3
	VMOVAPS Z31, Z4
	VMOVAPS Z31, Z5
	VMOVUPS (SI), K1, Z0
	VMOVUPS 64(SI), K2, Z1
	VMOVUPS (DX), K1, Z2
	VMOVUPS 64(DX), K2, Z3
	VMOVUPS (R8), K1, Z4
	VMOVUPS 64(R8), K2, Z5

pm3_loaded:
	NANMAX(Z0, Z2, Z6)
	NANMAX(Z6, Z4, Z7)
	NANMAX(Z1, Z3, Z8)
	NANMAX(Z8, Z5, Z9)
	VMOVAPS Z7, Z10
	VPERMT2PS Z9, Z30, Z10
	VMOVAPS Z7, Z11
	VPERMT2PS Z9, Z29, Z11
	VALIGND $15, Z28, Z11, Z12
	VMOVAPS Z11, Z28
	NANMAX(Z10, Z11, Z13)
	NANMAX(Z13, Z12, Z14)
	CMPQ BX, $16
	JLT pm3_tail
	VMOVUPS Z14, (DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, R8
	ADDQ $64, DI
	SUBQ $32, R10
	SUBQ $16, BX
	JNZ pm3_block
	VZEROUPPER
	RET

pm3_tail:
	MOVQ BX, CX
	MOVQ $1, R9
	SHLQ CX, R9
	DECQ R9
	KMOVW R9, K3
	VMOVUPS Z14, K3, (DI)
	VZEROUPPER
	RET
