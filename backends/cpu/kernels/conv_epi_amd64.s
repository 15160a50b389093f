//go:build !noasm

#include "textflag.h"

// func convEpi512(dst, src, z *float32, n int, bias float32, flags int)
// dst[i] = src[i] + bias (+ z[i] when flags&1) (then max(·, 0) when
// flags&2, NaN kept), 16 lanes at a time, the tail masked.
TEXT ·convEpi512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ z+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS bias+32(FP), Z1
	MOVQ flags+40(FP), R8
	VPXORD Z2, Z2, Z2
convEpi512_loop:
	CMPQ CX, $16
	JLT convEpi512_tail
	VADDPS (SI), Z1, Z0
	TESTQ $1, R8
	JEQ convEpi512_noz
	VADDPS (DX), Z0, Z0
	ADDQ $64, DX
convEpi512_noz:
	TESTQ $2, R8
	JEQ convEpi512_norelu
	VMAXPS Z0, Z2, Z0
convEpi512_norelu:
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP convEpi512_loop
convEpi512_tail:
	TESTQ CX, CX
	JEQ convEpi512_done
	MOVQ $1, R9
	SHLQ CX, R9
	DECQ R9
	KMOVW R9, K1
	VMOVUPS.Z (SI), K1, Z0
	VADDPS Z1, Z0, Z0
	TESTQ $1, R8
	JEQ convEpi512_noz2
	VMOVUPS.Z (DX), K1, Z3
	VADDPS Z3, Z0, Z0
convEpi512_noz2:
	TESTQ $2, R8
	JEQ convEpi512_norelu2
	VMAXPS Z0, Z2, Z0
convEpi512_norelu2:
	VMOVUPS Z0, K1, (DI)
convEpi512_done:
	VZEROUPPER
	RET

// func convCompactRow512(dst, src, z *float32, segs *int, nseg int, bias float32, flags int)
// For each segment (s, d, n) of segs: dst[d+i] = src[s+i] + bias (+ z[d+i]
// when flags&1) (then max(·, 0) when flags&2, NaN kept), i < n.
TEXT ·convCompactRow512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ z+16(FP), DX
	MOVQ segs+24(FP), R8
	MOVQ nseg+32(FP), R9
	VBROADCASTSS bias+40(FP), Z1
	MOVQ flags+48(FP), BX
	VPXORD Z2, Z2, Z2
	IMULQ $24, R9
	ADDQ R8, R9
convCompactRow512_seg:
	CMPQ R8, R9
	JGE convCompactRow512_done
	MOVQ 0(R8), R10
	LEAQ (SI)(R10*4), R10
	MOVQ 8(R8), R11
	LEAQ (DX)(R11*4), R12
	LEAQ (DI)(R11*4), R11
	MOVQ 16(R8), CX
	ADDQ $24, R8
convCompactRow512_loop:
	CMPQ CX, $16
	JLT convCompactRow512_tail
	VADDPS (R10), Z1, Z0
	TESTQ $1, BX
	JEQ convCompactRow512_noz
	VADDPS (R12), Z0, Z0
convCompactRow512_noz:
	TESTQ $2, BX
	JEQ convCompactRow512_norelu
	VMAXPS Z0, Z2, Z0
convCompactRow512_norelu:
	VMOVUPS Z0, (R11)
	ADDQ $64, R10
	ADDQ $64, R11
	ADDQ $64, R12
	SUBQ $16, CX
	JMP convCompactRow512_loop
convCompactRow512_tail:
	TESTQ CX, CX
	JEQ convCompactRow512_seg
	MOVQ $1, R13
	SHLQ CX, R13
	DECQ R13
	KMOVW R13, K1
	VMOVUPS.Z (R10), K1, Z0
	VADDPS Z1, Z0, Z0
	TESTQ $1, BX
	JEQ convCompactRow512_noz2
	VMOVUPS.Z (R12), K1, Z3
	VADDPS Z3, Z0, Z0
convCompactRow512_noz2:
	TESTQ $2, BX
	JEQ convCompactRow512_norelu2
	VMAXPS Z0, Z2, Z0
convCompactRow512_norelu2:
	VMOVUPS Z0, K1, (R11)
	JMP convCompactRow512_seg
convCompactRow512_done:
	VZEROUPPER
	RET

