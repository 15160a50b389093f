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

// Gather indices of one column of a 32-wide tile: rows 0..15.
DATA convTIdx<>+0(SB)/4, $0
DATA convTIdx<>+4(SB)/4, $32
DATA convTIdx<>+8(SB)/4, $64
DATA convTIdx<>+12(SB)/4, $96
DATA convTIdx<>+16(SB)/4, $128
DATA convTIdx<>+20(SB)/4, $160
DATA convTIdx<>+24(SB)/4, $192
DATA convTIdx<>+28(SB)/4, $224
DATA convTIdx<>+32(SB)/4, $256
DATA convTIdx<>+36(SB)/4, $288
DATA convTIdx<>+40(SB)/4, $320
DATA convTIdx<>+44(SB)/4, $352
DATA convTIdx<>+48(SB)/4, $384
DATA convTIdx<>+52(SB)/4, $416
DATA convTIdx<>+56(SB)/4, $448
DATA convTIdx<>+60(SB)/4, $480
GLOBL convTIdx<>(SB), RODATA|NOPTR, $64

// func convTEpi512(y *float32, ldy int, tile *float32, rows int, nch int, segs *int, nseg int, bias, z *float32, flags int)
// Transposes a rows×32 tile (row-major, 32 columns) into nch output
// channel rows of y (leading dimension ldy): for channel j the column
// v[l] = tile[l*32+j], l < rows, gets bias[j] (flags&1), then for each
// segment (mask, shift) of segs the lanes in mask get z[j*ldy+shift+l]
// (flags&2); max(·, 0) (flags&4, NaN kept); then each segment's lanes are
// stored to y[j*ldy+shift+l].
TEXT ·convTEpi512(SB), NOSPLIT, $0-80
	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), DX
	SHLQ $2, DX
	MOVQ tile+16(FP), SI
	MOVQ rows+24(FP), CX
	MOVQ $1, R8
	SHLQ CX, R8
	DECQ R8
	MOVQ nch+32(FP), CX
	MOVQ segs+40(FP), R9
	MOVQ nseg+48(FP), R10
	SHLQ $4, R10
	ADDQ R9, R10
	MOVQ bias+56(FP), R11
	MOVQ z+64(FP), R12
	MOVQ flags+72(FP), BX
	VMOVDQU32 convTIdx<>(SB), Z7
	VPXORD Z2, Z2, Z2
convTEpi512_chan:
	TESTQ CX, CX
	JEQ convTEpi512_done
	KMOVW R8, K1
	VPXORD Z0, Z0, Z0
	VGATHERDPS (SI)(Z7*4), K1, Z0
	TESTQ $1, BX
	JEQ convTEpi512_nobias
	VBROADCASTSS (R11), Z1
	VADDPS Z1, Z0, Z0
convTEpi512_nobias:
	TESTQ $2, BX
	JEQ convTEpi512_noz
	MOVQ R9, R13
convTEpi512_zseg:
	CMPQ R13, R10
	JGE convTEpi512_noz
	MOVQ 0(R13), AX
	KMOVW AX, K2
	MOVQ 8(R13), AX
	VADDPS (R12)(AX*4), Z0, K2, Z0
	ADDQ $16, R13
	JMP convTEpi512_zseg
convTEpi512_noz:
	TESTQ $4, BX
	JEQ convTEpi512_store
	VMAXPS Z0, Z2, Z0
convTEpi512_store:
	MOVQ R9, R13
convTEpi512_sseg:
	CMPQ R13, R10
	JGE convTEpi512_next
	MOVQ 0(R13), AX
	KMOVW AX, K2
	MOVQ 8(R13), AX
	VMOVUPS Z0, K2, (DI)(AX*4)
	ADDQ $16, R13
	JMP convTEpi512_sseg
convTEpi512_next:
	ADDQ DX, DI
	ADDQ DX, R12
	ADDQ $4, SI
	ADDQ $4, R11
	DECQ CX
	JMP convTEpi512_chan
convTEpi512_done:
	VZEROUPPER
	RET
