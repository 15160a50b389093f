//go:build !noasm

#include "textflag.h"

// func padCopyRows512(dst *float32, ldd int, src *float32, lds int, n, lpad, w, cs int, even *int32, tail uint32)
// For each of n rows: lpad zeros, w floats from src (every cs-th, cs 1 or
// 2; even holds the indices 0, 2, ..., 30 for VPERMT2PS), zeros to ldd
// floats; dst advances ldd floats a row, src lds floats. For cs 2, tail
// masks the floats the last w%16 outputs read (2·(w%16)-1 of 32).
TEXT ·padCopyRows512(SB), NOSPLIT, $0-76
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R9
	MOVQ n+32(FP), R10
	MOVQ lpad+40(FP), R11
	MOVQ w+48(FP), R12
	MOVQ R8, R13
	SUBQ R11, R13
	SUBQ R12, R13
	SHLQ $2, R8
	SHLQ $2, R9
	VPXORD Z0, Z0, Z0
	MOVQ cs+56(FP), R14
	MOVQ even+64(FP), DX
	VMOVDQU32 (DX), Z2
	MOVL tail+72(FP), DX
	KMOVW DX, K3
	SHRL $16, DX
	KMOVW DX, K4
	MOVL $0x7fff, DX
	KMOVW DX, K5

pcr_row:
	TESTQ R10, R10
	JEQ pcr_done
	MOVQ DI, AX
	MOVQ R11, CX

pcr_lz:
	CMPQ CX, $16
	JLT pcr_lzt
	VMOVUPS Z0, (AX)
	ADDQ $64, AX
	SUBQ $16, CX
	JMP pcr_lz

pcr_lzt:
	MOVQ $1, DX
	SHLQ CX, DX
	DECQ DX
	KMOVW DX, K1
	VMOVUPS Z0, K1, (AX)
	LEAQ (AX)(CX*4), AX
	MOVQ SI, BX
	MOVQ R12, CX
	CMPQ R14, $2
	JEQ pcr_s2

pcr_cp:
	CMPQ CX, $16
	JLT pcr_cpt
	VMOVUPS (BX), Z1
	VMOVUPS Z1, (AX)
	ADDQ $64, AX
	ADDQ $64, BX
	SUBQ $16, CX
	JMP pcr_cp

pcr_cpt:
	MOVQ $1, DX
	SHLQ CX, DX
	DECQ DX
	KMOVW DX, K1
	VMOVUPS.Z (BX), K1, Z1
	VMOVUPS Z1, K1, (AX)
	LEAQ (AX)(CX*4), AX

pcr_tzs:
	MOVQ R13, CX

pcr_tz:
	CMPQ CX, $16
	JLT pcr_tzt
	VMOVUPS Z0, (AX)
	ADDQ $64, AX
	SUBQ $16, CX
	JMP pcr_tz

pcr_tzt:
	MOVQ $1, DX
	SHLQ CX, DX
	DECQ DX
	KMOVW DX, K1
	VMOVUPS Z0, K1, (AX)
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ R10
	JMP pcr_row

pcr_s2:
	CMPQ CX, $16
	JLT pcr_s2t
	VMOVUPS (BX), Z1
	VMOVUPS.Z 64(BX), K5, Z3
	VPERMT2PS Z3, Z2, Z1
	VMOVUPS Z1, (AX)
	ADDQ $64, AX
	ADDQ $128, BX
	SUBQ $16, CX
	JMP pcr_s2

pcr_s2t:
	// The last CX outputs read 2·CX-1 floats: up to 16 in the low
	// vector, the rest in the high one.
	TESTQ CX, CX
	JEQ pcr_tzs
	VMOVUPS.Z (BX), K3, Z1
	VMOVUPS.Z 64(BX), K4, Z3
	VPERMT2PS Z3, Z2, Z1
	MOVQ $1, DX
	SHLQ CX, DX
	DECQ DX
	KMOVW DX, K1
	VMOVUPS Z1, K1, (AX)
	LEAQ (AX)(CX*4), AX
	JMP pcr_tzs

pcr_done:
	VZEROUPPER
	RET
