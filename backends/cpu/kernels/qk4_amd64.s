//go:build !noasm

#include "textflag.h"
#include "qrows_amd64.h"

// Four-activation-row K-quant dot products (quantized GEMM, prefill): one
// weight row against activation rows r = 0..3, each super-block decoded
// once (scales, mins, codes) and used for the four rows. Row r's codes are
// at DI + r·R10 (R10 = K bytes), its two float arrays at R8 + r·R12 and
// R9 + r·R12 (R12 = their bytes per row); R11, R13, R14 point at row 3's.
// Main sums Z16..Z19, min/offset sums Z20..Z23.

// PTRSK4 points R11, R13 and R14 at activation row 3's codes and floats
// and clears the sums.
#define PTRSK4 \
	LEAQ (DI)(R10*2), R11 \
	ADDQ R10, R11 \
	LEAQ (R8)(R12*2), R13 \
	ADDQ R12, R13 \
	LEAQ (R9)(R12*2), R14 \
	ADDQ R12, R14 \
	ZERO4(Z16, Z17, Z18, Z19) \
	ZERO4(Z20, Z21, Z22, Z23)

#define ARGSK4 \
	MOVQ nsb+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ qs+16(FP), DI \
	MOVQ s1+24(FP), R8 \
	MOVQ s2+32(FP), R9 \
	MOVQ k+40(FP), R10 \
	MOVQ ld+48(FP), R12 \
	PTRSK4

// HSK4(main, ymain, aux, yaux, op, off) stores Σ main op Σ aux at off(AX).
#define HSK4(main, ymain, aux, op, off) \
	op aux, main, main \
	VEXTRACTF64X4 $1, main, Y1 \
	VADDPS Y1, ymain, Y1 \
	VEXTRACTF128 $1, Y1, X0 \
	VADDPS X1, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0 \
	VMOVSS X0, off(AX)

#define STOREK4(op) \
	MOVQ out+56(FP), AX \
	HSK4(Z16, Y16, Z20, op, 0) \
	HSK4(Z17, Y17, Z21, op, 4) \
	HSK4(Z18, Y18, Z22, op, 8) \
	HSK4(Z19, Y19, Z23, op, 12) \
	VZEROUPPER \
	RET

// KROWDOT adds one activation row's share of a super-block to acc: its
// codes at q (four 64-byte vectors) against the unpacked weight codes
// Z1, Z3, Z2, Z4, the four int sums widened and weighted by the row's
// sub-block factors (Z7, spread by VPERMPS with Z24..Z27).
#define KROWDOT(q, acc) \
	VPXORD Z11, Z11, Z11 \
	VPDPBUSD q, Z1, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPDPBUSD 64 q, Z3, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPDPBUSD 128 q, Z2, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPDPBUSD 192 q, Z4, Z14 \
	VCVTDQ2PS Z11, Z11 \
	VCVTDQ2PS Z12, Z12 \
	VCVTDQ2PS Z13, Z13 \
	VCVTDQ2PS Z14, Z14 \
	VPERMPS Z7, Z24, Z15 \
	VPERMPS Z7, Z25, Z28 \
	VPERMPS Z7, Z26, Z30 \
	VPERMPS Z7, Z27, Z31 \
	VFMADD231PS Z15, Z11, acc \
	VFMADD231PS Z28, Z12, acc \
	VFMADD231PS Z30, Z13, acc \
	VFMADD231PS Z31, Z14, acc

// ARGSK4R is ARGSK4 for the many-weight-rows kernels
// (func(nr, nsb int, w *byte, rb int, qs *int8, s1, s2 *float32, k, ld
// int, y *float32, ldy int)), the weight row at R15.
#define ARGSK4R \
	MOVQ nsb+8(FP), CX \
	MOVQ R15, SI \
	MOVQ qs+32(FP), DI \
	MOVQ s1+40(FP), R8 \
	MOVQ s2+48(FP), R9 \
	MOVQ k+56(FP), R10 \
	MOVQ ld+64(FP), R12 \
	PTRSK4

// STOREK4R stores a weight row's four sums (HSK4) at DX, DX+ldy, ... and
// moves on to the next row (R15, DX; BX counts the rows left).
#define STOREK4R(op) \
	MOVQ DX, AX \
	MOVQ ldy+80(FP), CX \
	SHLQ $2, CX \
	HSK4(Z16, Y16, Z20, op, 0) \
	ADDQ CX, AX \
	HSK4(Z17, Y17, Z21, op, 0) \
	ADDQ CX, AX \
	HSK4(Z18, Y18, Z22, op, 0) \
	ADDQ CX, AX \
	HSK4(Z19, Y19, Z23, op, 0) \
	ADDQ $4, DX \
	ADDQ rb+24(FP), R15 \
	DECQ BX

// KX4ROWS is the body of a many-weight-rows four-activation-row K-quant
// kernel: CONSTS, then per weight row the super-block LOOP and its sums
// stored (op: how the min or offset sums combine with the main ones).
#define KX4ROWS(CONSTS, LOOP, op, lrow, lloop, ldone, lend) \
	MOVQ nr+0(FP), BX \
	MOVQ w+16(FP), R15 \
	MOVQ y+72(FP), DX \
	CONSTS \
	TESTQ BX, BX \
	JEQ lend \
lrow: \
	ARGSK4R \
	TESTQ CX, CX \
	JEQ ldone \
	LOOP(lloop) \
ldone: \
	STOREK4R(op) \
	JNZ lrow \
lend: \
	VZEROUPPER \
	RET

// Q4KX4CONSTS loads dotQ4K512x4's constants.
#define Q4KX4CONSTS \
	MOVL $0x0F0F0F0F, AX \
	VMOVD AX, X8 \
	VPBROADCASTD X8, X8 \
	VPBROADCASTD X8, Z29 \
	MOVL $0x30303030, AX \
	VMOVD AX, X9 \
	VPBROADCASTD X9, X9 \
	MOVL $0x3F3F3F3F, AX \
	VMOVD AX, X10 \
	VPBROADCASTD X10, X10 \
	VMOVDQU32 ·qkIdx+0(SB), Z24 \
	VMOVDQU32 ·qkIdx+64(SB), Z25 \
	VMOVDQU32 ·qkIdx+128(SB), Z26 \
	VMOVDQU32 ·qkIdx+192(SB), Z27

// Q4KX4LOOP is dotQ4K512x4's loop over the super-blocks (CX of them):
// decode the scales, mins and codes once, then rows 0..3 in turn.
#define Q4KX4LOOP(lloop) \
lloop: \
	VMOVDQU 4(SI), X1 \
	VPSHUFD $0xAA, X1, X2 \
	VPSRLD $4, X2, X3 \
	VPBLENDD $2, X3, X2, X2 \
	VPAND X8, X2, X2 \
	VPSRLD $2, X1, X4 \
	VPAND X9, X4, X4 \
	VPOR X4, X2, X2 \
	VPAND X10, X1, X1 \
	VPUNPCKLDQ X2, X1, X1 \
	VPMOVZXBD X1, Y5 \
	VPSRLDQ $8, X1, X1 \
	VPMOVZXBD X1, Y6 \
	VCVTDQ2PS Y5, Y5 \
	VCVTDQ2PS Y6, Y6 \
	VPBROADCASTD (SI), X7 \
	VCVTPH2PS X7, Y7 \
	VMOVSLDUP Y7, Y3 \
	VMOVSHDUP Y7, Y7 \
	VMULPS Y3, Y5, Y5 \
	VMULPS Y7, Y6, Y6 \
	VMOVDQU64 16(SI), Z1 \
	VMOVDQU64 80(SI), Z2 \
	VPSRLW $4, Z1, Z3 \
	VPSRLW $4, Z2, Z4 \
	VPANDD Z29, Z1, Z1 \
	VPANDD Z29, Z2, Z2 \
	VPANDD Z29, Z3, Z3 \
	VPANDD Z29, Z4, Z4 \
	VMULPS (R8), Y5, Y7 \
	VFMADD231PS 32(R9), Y6, Y20 \
	KROWDOT((DI), Z16) \
	VMULPS (R8)(R12*1), Y5, Y7 \
	VFMADD231PS 32(R9)(R12*1), Y6, Y21 \
	KROWDOT((DI)(R10*1), Z17) \
	VMULPS (R8)(R12*2), Y5, Y7 \
	VFMADD231PS 32(R9)(R12*2), Y6, Y22 \
	KROWDOT((DI)(R10*2), Z18) \
	VMULPS (R13), Y5, Y7 \
	VFMADD231PS 32(R14), Y6, Y23 \
	KROWDOT((R11), Z19) \
	ADDQ $144, SI \
	ADDQ $256, DI \
	ADDQ $256, R11 \
	ADDQ $64, R8 \
	ADDQ $64, R9 \
	ADDQ $64, R13 \
	ADDQ $64, R14 \
	DECQ CX \
	JNZ lloop

// func dotQ4K512x4(nsb int, w *byte, qs *int8, s1 *float32, s2 *float32, k int, ld int, out *float32)
//
// dotQ4K512 for four rows: Y5 = d·sc and Y6 = dmin·m per super-block;
// row r: f = Y5·da_r, min sum += Y6·σ_r (s1 = s2: per super-block 16
// floats [da0..7, σ0..7]), codes Z1..Z4 against its q4kOrder
// activations, spread by VPERMPS (Z24..Z27).
TEXT ·dotQ4K512x4(SB), NOSPLIT, $0-64
	ARGSK4
	Q4KX4CONSTS
	TESTQ CX, CX
	JEQ q4kx4_done
	Q4KX4LOOP(q4kx4_loop)
q4kx4_done:
	STOREK4(VSUBPS)

// Q6KX4CONSTS loads dotQ6K512x4's constants.
#define Q6KX4CONSTS \
	MOVL $0x0F0F0F0F, AX \
	VMOVD AX, X0 \
	VPBROADCASTD X0, Z29 \
	MOVL $0x30303030, AX \
	VMOVD AX, X0 \
	VPBROADCASTD X0, Z10 \
	MOVL $0x03030303, AX \
	VMOVD AX, X0 \
	VPBROADCASTD X0, Z9 \
	MOVQ $2, AX \
	VMOVQ AX, X0 \
	VPBROADCASTQ X0, Y0 \
	VPXORD Y1, Y1, Y1 \
	VINSERTI64X4 $1, Y0, Z1, Z8 \
	VMOVDQU32 ·qkIdx+256(SB), Z24 \
	VMOVDQU32 ·qkIdx+320(SB), Z25 \
	VMOVDQU32 ·qkIdx+384(SB), Z26 \
	VMOVDQU32 ·qkIdx+448(SB), Z27

// Q6KX4LOOP is dotQ6K512x4's loop over the super-blocks (CX of them).
#define Q6KX4LOOP(lloop) \
lloop: \
	VPMOVSXBD 192(SI), Z5 \
	VCVTDQ2PS Z5, Z5 \
	VPBROADCASTW 208(SI), Y7 \
	VCVTPH2PS Y7, Z7 \
	VMULPS Z7, Z5, Z5 \
	VMOVDQU64 0(SI), Z1 \
	VBROADCASTI64X4 128(SI), Z6 \
	VPSRLVQ Z8, Z6, Z6 \
	VPSRLW $4, Z1, Z3 \
	VPANDD Z9, Z6, Z7 \
	VPSLLW $4, Z7, Z7 \
	VPTERNLOGD $0xEC, Z29, Z7, Z1 \
	VPANDD Z10, Z6, Z6 \
	VPTERNLOGD $0xEC, Z29, Z6, Z3 \
	VMOVDQU64 64(SI), Z2 \
	VBROADCASTI64X4 160(SI), Z6 \
	VPSRLVQ Z8, Z6, Z6 \
	VPSRLW $4, Z2, Z4 \
	VPANDD Z9, Z6, Z7 \
	VPSLLW $4, Z7, Z7 \
	VPTERNLOGD $0xEC, Z29, Z7, Z2 \
	VPANDD Z10, Z6, Z6 \
	VPTERNLOGD $0xEC, Z29, Z6, Z4 \
	VMULPS (R8), Z5, Z7 \
	VFMADD231PS (R9), Z7, Z20 \
	KROWDOT((DI), Z16) \
	VMULPS (R8)(R12*1), Z5, Z7 \
	VFMADD231PS (R9)(R12*1), Z7, Z21 \
	KROWDOT((DI)(R10*1), Z17) \
	VMULPS (R8)(R12*2), Z5, Z7 \
	VFMADD231PS (R9)(R12*2), Z7, Z22 \
	KROWDOT((DI)(R10*2), Z18) \
	VMULPS (R13), Z5, Z7 \
	VFMADD231PS (R14), Z7, Z23 \
	KROWDOT((R11), Z19) \
	ADDQ $210, SI \
	ADDQ $256, DI \
	ADDQ $256, R11 \
	ADDQ $64, R8 \
	ADDQ $64, R9 \
	ADDQ $64, R13 \
	ADDQ $64, R14 \
	DECQ CX \
	JNZ lloop

// func dotQ6K512x4(nsb int, w *byte, qs *int8, s1 *float32, s2 *float32, k int, ld int, out *float32)
//
// dotQ6K512 for four rows: Z5 = d·sc per sub-block of 16; the four code
// vectors (elements 0..63, 64..127, 128..191, 192..255) in Z1, Z3, Z2, Z4;
// row r: f = Z5·d16_r, offset sum += f·β_r, VPERMPS by Z24..Z27.
TEXT ·dotQ6K512x4(SB), NOSPLIT, $0-64
	ARGSK4
	Q6KX4CONSTS
	TESTQ CX, CX
	JEQ q6kx4_done
	Q6KX4LOOP(q6kx4_loop)
q6kx4_done:
	STOREK4(VADDPS)

// func dotQ4K512x4rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, k int, ld int, y *float32, ldy int)
//
// dotQ4K512x4 for nr weight rows rb bytes apart: the sums of weight row i
// with activation row r go to y[r·ldy+i] (a prefill task in one call).
TEXT ·dotQ4K512x4rows(SB), NOSPLIT, $0-88
	KX4ROWS(Q4KX4CONSTS, Q4KX4LOOP, VSUBPS, q4kx4r_row, q4kx4r_loop, q4kx4r_done, q4kx4r_end)

// func dotQ6K512x4rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, k int, ld int, y *float32, ldy int)
//
// dotQ6K512x4 for nr weight rows rb bytes apart, as dotQ4K512x4rows.
TEXT ·dotQ6K512x4rows(SB), NOSPLIT, $0-88
	KX4ROWS(Q6KX4CONSTS, Q6KX4LOOP, VADDPS, q6kx4r_row, q6kx4r_loop, q6kx4r_done, q6kx4r_end)
