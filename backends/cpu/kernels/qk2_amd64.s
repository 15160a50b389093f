//go:build !noasm

#include "textflag.h"
#include "prefetch_amd64.h"

// K-quant row dot products with AVX2 (VPMADDUBSW + VPMADDWD), one
// 256-element super-block per iteration; the algebra is in qk.go, the
// AVX-512 versions in qk_amd64.s. The integer dot of each sub-block comes
// out in 4 or 8 int32 lanes; a VPHADDD tree reduces them to one lane per
// sub-block, so one convert and one FMA with the per-sub-block scales
// finish eight sub-blocks.
//
// Registers: SI weights, DI activation codes (natural order), R8 and R9
// the two float activation arrays, CX super-blocks left; Y10 the main float
// sum, Y9 the min (Q4_K) or offset (Q6_K) sum; Y12 = int16 ones, Y15 =
// 0x0F bytes.

// The four-activation-row kernels (dotQ4KAVX2x4rows, dotQ6KAVX2x4rows,
// below) share their set-up and their rows' ends; their macros stand here,
// before any function, so that go vet reads their argument names against
// those kernels' frames.
//
// QKX4ARGS loads the strides (R9 = k, R15 = 3·k; R14 = 4·ld, AX = 3·R14;
// BX = 4·ldy), clears DX (row 0's index), loads the rows, weights and
// output (R12, R13, R11) and jumps to lend where there are no rows.
#define QKX4ARGS(lend) \
	MOVQ k+56(FP), R9 \
	LEAQ (R9)(R9*2), R15 \
	MOVQ ld+64(FP), R14 \
	SHLQ $2, R14 \
	LEAQ (R14)(R14*2), AX \
	MOVQ ldy+80(FP), BX \
	SHLQ $2, BX \
	XORQ DX, DX \
	MOVQ nr+0(FP), R12 \
	MOVQ w+16(FP), R13 \
	MOVQ y+72(FP), R11 \
	TESTQ R12, R12 \
	JEQ lend

// QKX4ROWSTART points SI, DI, R8 and R10 at a weight row's start and the
// activations', CX at its super-blocks, and clears the accumulators
// (Y9, Y10), (Y2, Y3), (Y4, a2), (Y13, Y14) of rows 0..3.
#define QKX4ROWSTART(a2) \
	MOVQ nsb+8(FP), CX \
	MOVQ R13, SI \
	MOVQ qs+32(FP), DI \
	MOVQ s1+40(FP), R8 \
	MOVQ s2+48(FP), R10 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	VXORPS Y4, Y4, Y4 \
	VXORPS a2, a2, a2 \
	VXORPS Y13, Y13, Y13 \
	VXORPS Y14, Y14, Y14

// QKX4SUM stores a row's sum (acc10 op acc9, reduced as HSUM9) at dst.
#define QKX4SUM(op, acc9, acc10, dst) \
	op acc9, acc10, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0 \
	VMOVSS X0, dst

// QKX4ROWEND stores the four rows' sums (op: VSUBPS for Q4_K's mins,
// VADDPS for Q6_K's offsets) and moves to the next weight row (label
// lrow).
#define QKX4ROWEND(op, a2, lrow) \
	QKX4SUM(op, Y9, Y10, (R11)) \
	QKX4SUM(op, Y2, Y3, (R11)(BX*1)) \
	QKX4SUM(op, Y4, a2, (R11)(BX*2)) \
	LEAQ (BX)(BX*2), DX \
	QKX4SUM(op, Y13, Y14, (R11)(DX*1)) \
	XORQ DX, DX \
	ADDQ $4, R11 \
	ADDQ rb+24(FP), R13 \
	DECQ R12 \
	JNZ lrow

#define HSUM9(op) \
	op Y9, Y10, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0 \
	VMOVSS X0, ret+40(FP) \
	VZEROUPPER \
	RET

#define CONSTS2 \
	MOVQ nsb+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ qs+16(FP), DI \
	MOVQ da+24(FP), R8 \
	MOVQ sig+32(FP), R9 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	MOVL $0x0F0F0F0F, AX \
	VMOVD AX, X15 \
	VPBROADCASTD X15, Y15 \
	MOVL $0x00010001, AX \
	VMOVD AX, X12 \
	VPBROADCASTD X12, Y12

// Q4KG: the 32 code bytes of group g (sub-blocks 2g, 2g+1) against their
// activations, each sub-block's dot in 8 int32 lanes: lo in Y0, hi in Y1.
#define Q4KG(g) \
	VMOVDQU (16+32*g)(SI), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND Y15, Y0, Y0 \
	VPAND Y15, Y1, Y1 \
	VPMADDUBSW (64*g)(DI), Y0, Y0 \
	VPMADDUBSW (64*g+32)(DI), Y1, Y1 \
	VPMADDWD Y12, Y0, Y0 \
	VPMADDWD Y12, Y1, Y1

// func dotQ4KAVX2(nsb int, w *byte, qs *int8, da *float32, sig *float32) float32
//
// Scales and mins as in dotQ4K512 (here X15 = 0x0F, X13 = 0x30, X14 =
// 0x3F bytes); the sub-block sums, reduced to lane s = sub-block s, meet f
// = d·sc·da in one FMA.
TEXT ·dotQ4KAVX2(SB), NOSPLIT, $0-44
	CONSTS2
	MOVL $0x30303030, AX
	VMOVD AX, X13
	VPBROADCASTD X13, X13
	MOVL $0x3F3F3F3F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, X14
q4ka2_loop:
	// Y5 = f = d·sc·da; Y9 += dmin·m·σ.
	VMOVDQU 4(SI), X1
	VPSHUFD $0xAA, X1, X2
	VPSRLD $4, X2, X3
	VPBLENDD $2, X3, X2, X2
	VPAND X15, X2, X2
	VPSRLD $2, X1, X4
	VPAND X13, X4, X4
	VPOR X4, X2, X2
	VPAND X14, X1, X1
	VPUNPCKLDQ X2, X1, X1
	VPMOVZXBD X1, Y5
	VPSRLDQ $8, X1, X1
	VPMOVZXBD X1, Y6
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VPBROADCASTD (SI), X7
	VCVTPH2PS X7, Y7
	VMOVSLDUP Y7, Y3
	VMOVSHDUP Y7, Y7
	VMULPS (R8), Y5, Y5
	VMULPS Y3, Y5, Y5
	VMULPS (R9), Y6, Y6
	VFMADD231PS Y7, Y6, Y9
	// Sub-block dots, reduced by VPHADDD pairs.
	Q4KG(0)
	VPHADDD Y1, Y0, Y6
	Q4KG(1)
	VPHADDD Y1, Y0, Y7
	VPHADDD Y7, Y6, Y6
	Q4KG(2)
	VPHADDD Y1, Y0, Y7
	Q4KG(3)
	VPHADDD Y1, Y0, Y8
	VPHADDD Y8, Y7, Y7
	// Y6 = [s0 s1 s2 s3 | s0 s1 s2 s3] halves, Y7 the same for s4..s7.
	VPERM2I128 $0x20, Y7, Y6, Y0
	VPERM2I128 $0x31, Y7, Y6, Y1
	VPADDD Y1, Y0, Y0
	VCVTDQ2PS Y0, Y0
	VFMADD231PS Y5, Y0, Y10
	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ $32, R8
	ADDQ $32, R9
	DECQ CX
	JNZ q4ka2_loop
	HSUM9(VSUBPS)

// Q6DOT(code, aoff, dst): the dot of 32 codes with their activations, two
// sub-blocks of 16 in the lanes 0..3 and 4..7 of dst.
#define Q6DOT(code, aoff, dst) \
	VPMADDUBSW aoff(DI), code, dst \
	VPMADDWD Y12, dst, dst

// Q6HALF2(h): sub-blocks 8h..8h+7 of one half (ql at 64h, qh at 128+32h),
// reduced to Y8 = [s0 s2 s4 s6 | s1 s3 s5 s7] (relative to 8h): codes
// k = 0, 1 are low nibble | (qh>>2k & 3)<<4, k = 2, 3 high nibble |
// (qh>>2(k-2)) & 0x30. Y13 = 0x03, Y14 = 0x30 bytes.
#define Q6HALF2(h) \
	VMOVDQU (64*h)(SI), Y0 \
	VMOVDQU (64*h+32)(SI), Y1 \
	VMOVDQU (128+32*h)(SI), Y2 \
	VPSRLW $2, Y2, Y3 \
	VPAND Y15, Y0, Y4 \
	VPAND Y13, Y2, Y5 \
	VPSLLW $4, Y5, Y5 \
	VPOR Y5, Y4, Y4 \
	Q6DOT(Y4, 128*h, Y6) \
	VPAND Y15, Y1, Y4 \
	VPAND Y13, Y3, Y5 \
	VPSLLW $4, Y5, Y5 \
	VPOR Y5, Y4, Y4 \
	Q6DOT(Y4, 128*h+32, Y7) \
	VPHADDD Y7, Y6, Y6 \
	VPSRLW $4, Y0, Y4 \
	VPAND Y15, Y4, Y4 \
	VPAND Y14, Y2, Y5 \
	VPOR Y5, Y4, Y4 \
	Q6DOT(Y4, 128*h+64, Y7) \
	VPSRLW $4, Y1, Y4 \
	VPAND Y15, Y4, Y4 \
	VPAND Y14, Y3, Y5 \
	VPOR Y5, Y4, Y4 \
	Q6DOT(Y4, 128*h+96, Y8) \
	VPHADDD Y8, Y7, Y7 \
	VPHADDD Y7, Y6, Y8

// Q6SCALE(h): Y0 = f = d·sc·da for sub-blocks 8h..8h+7 (natural order);
// the offset term f·β goes into Y9, then f is permuted to the order of
// Q6HALF2's sums (Y11 = 0 2 4 6 1 3 5 7) and meets them in Y10.
#define Q6SCALE(h) \
	VPMOVSXBD (192+8*h)(SI), Y0 \
	VCVTDQ2PS Y0, Y0 \
	VMULPS (32*h)(R8), Y0, Y0 \
	VPBROADCASTW 208(SI), X2 \
	VCVTPH2PS X2, Y2 \
	VMULPS Y2, Y0, Y0 \
	VFMADD231PS (32*h)(R9), Y0, Y9 \
	VPERMPS Y0, Y11, Y0 \
	VCVTDQ2PS Y8, Y8 \
	VFMADD231PS Y0, Y8, Y10

// func dotQ6KAVX2(nsb int, w *byte, qs *int8, d16 *float32, b16 *float32) float32
TEXT ·dotQ6KAVX2(SB), NOSPLIT, $0-44
	CONSTS2
	MOVL $0x03030303, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	MOVL $0x30303030, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VMOVDQU ·qk2Idx(SB), Y11
q6ka2_loop:
	Q6HALF2(0)
	Q6SCALE(0)
	Q6HALF2(1)
	Q6SCALE(1)
	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ $64, R8
	ADDQ $64, R9
	DECQ CX
	JNZ q6ka2_loop
	HSUM9(VADDPS)

// func dotQ4KAVX2rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, y *float32)
//
// dotQ4KAVX2 for nr consecutive weight rows (rb bytes apart) against one
// activation row (decode GEMV, one call a task).
TEXT ·dotQ4KAVX2rows(SB), NOSPLIT, $0-64
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL $0x30303030, AX
	VMOVD AX, X13
	VPBROADCASTD X13, X13
	MOVL $0x3F3F3F3F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, X14
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+56(FP), R11
	TESTQ R12, R12
	JEQ q4ka2r_end
q4ka2r_row:
	MOVQ nsb+8(FP), CX
	MOVQ R13, SI
	MOVQ qs+32(FP), DI
	MOVQ s1+40(FP), R8
	MOVQ s2+48(FP), R9
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
q4ka2r_loop:
	PREFETCHT0 QPF(SI)
	PREFETCHT0 QPF+64(SI)
	PREFETCHT0 QPF+128(SI)
	// Y5 = f = d·sc·da; Y9 += dmin·m·σ.
	VMOVDQU 4(SI), X1
	VPSHUFD $0xAA, X1, X2
	VPSRLD $4, X2, X3
	VPBLENDD $2, X3, X2, X2
	VPAND X15, X2, X2
	VPSRLD $2, X1, X4
	VPAND X13, X4, X4
	VPOR X4, X2, X2
	VPAND X14, X1, X1
	VPUNPCKLDQ X2, X1, X1
	VPMOVZXBD X1, Y5
	VPSRLDQ $8, X1, X1
	VPMOVZXBD X1, Y6
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VPBROADCASTD (SI), X7
	VCVTPH2PS X7, Y7
	VMOVSLDUP Y7, Y3
	VMOVSHDUP Y7, Y7
	VMULPS (R8), Y5, Y5
	VMULPS Y3, Y5, Y5
	VMULPS (R9), Y6, Y6
	VFMADD231PS Y7, Y6, Y9
	// Sub-block dots, reduced by VPHADDD pairs.
	Q4KG(0)
	VPHADDD Y1, Y0, Y6
	Q4KG(1)
	VPHADDD Y1, Y0, Y7
	VPHADDD Y7, Y6, Y6
	Q4KG(2)
	VPHADDD Y1, Y0, Y7
	Q4KG(3)
	VPHADDD Y1, Y0, Y8
	VPHADDD Y8, Y7, Y7
	// Y6 = [s0 s1 s2 s3 | s0 s1 s2 s3] halves, Y7 the same for s4..s7.
	VPERM2I128 $0x20, Y7, Y6, Y0
	VPERM2I128 $0x31, Y7, Y6, Y1
	VPADDD Y1, Y0, Y0
	VCVTDQ2PS Y0, Y0
	VFMADD231PS Y5, Y0, Y10
	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ $32, R8
	ADDQ $32, R9
	DECQ CX
	JNZ q4ka2r_loop
	VSUBPS Y9, Y10, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, (R11)
	ADDQ $4, R11
	ADDQ rb+24(FP), R13
	DECQ R12
	JNZ q4ka2r_row
q4ka2r_end:
	VZEROUPPER
	RET

// func dotQ6KAVX2rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, y *float32)
//
// dotQ6KAVX2 for nr consecutive weight rows (rb bytes apart) against one
// activation row (decode GEMV, one call a task).
TEXT ·dotQ6KAVX2rows(SB), NOSPLIT, $0-64
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL $0x03030303, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	MOVL $0x30303030, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VMOVDQU ·qk2Idx(SB), Y11
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+56(FP), R11
	TESTQ R12, R12
	JEQ q6ka2r_end
q6ka2r_row:
	MOVQ nsb+8(FP), CX
	MOVQ R13, SI
	MOVQ qs+32(FP), DI
	MOVQ s1+40(FP), R8
	MOVQ s2+48(FP), R9
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
q6ka2r_loop:
	PREFETCHT0 QPF(SI)
	PREFETCHT0 QPF+64(SI)
	PREFETCHT0 QPF+128(SI)
	PREFETCHT0 QPF+192(SI)
	Q6HALF2(0)
	Q6SCALE(0)
	Q6HALF2(1)
	Q6SCALE(1)
	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ $64, R8
	ADDQ $64, R9
	DECQ CX
	JNZ q6ka2r_loop
	VADDPS Y9, Y10, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, (R11)
	ADDQ $4, R11
	ADDQ rb+24(FP), R13
	DECQ R12
	JNZ q6ka2r_row
q6ka2r_end:
	VZEROUPPER
	RET

// ---- Q4_K for four activation rows (prefill): dotQ4KAVX2rows' steps for
// each activation row in turn, against a super-block's scales unpacked
// once for the four (kept on the stack: sc and m as floats, then d and
// dmin broadcast). Every row's sum is dotQ4KAVX2's bit for bit (the same
// operations in the same order; the products only take their operands
// from memory). The codes are split again per row: sixteen registers
// hold the four rows' two accumulators each, the split codes and the
// sub-block tree.
//
// Registers: SI weights, DI codes of activation row 0 (row r: r·R9
// bytes on; R15 = 3·R9), R8 and R10 its da and σ (row r: r·R14 bytes on;
// AX = 3·R14), CX super-blocks left; accumulators (Y9, Y10), (Y2, Y3),
// (Y4, Y11), (Y13, Y14) for rows 0..3; Y12 = int16 ones, Y15 = 0x0F bytes.
// DX is 0 in the loop (row 0's index). Stack: sc, d, m and dmin (8
// floats each), the 0x30 and the 0x3F bytes (16 each).

// Q4KGX is Q4KG against the activation codes at (64·g)(DI) plus the index
// QI.
#define Q4KGX(g, QI) \
	VMOVDQU (16+32*g)(SI), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND Y15, Y0, Y0 \
	VPAND Y15, Y1, Y1 \
	VPMADDUBSW (64*g)(DI)QI, Y0, Y0 \
	VPMADDUBSW (64*g+32)(DI)QI, Y1, Y1 \
	VPMADDWD Y12, Y0, Y0 \
	VPMADDWD Y12, Y1, Y1

// Q4KX4ROW adds one activation row's part of the super-block (codes
// index QI, scales index SX) into acc9 (the mins) and acc10.
#define Q4KX4ROW(QI, SX, acc9, acc10) \
	VMOVUPS sc-160(SP), Y5 \
	VMULPS (R8)SX, Y5, Y5 \
	VMULPS d-128(SP), Y5, Y5 \
	VMOVUPS m-96(SP), Y6 \
	VMULPS (R10)SX, Y6, Y6 \
	VFMADD231PS dmin-64(SP), Y6, acc9 \
	Q4KGX(0, QI) \
	VPHADDD Y1, Y0, Y6 \
	Q4KGX(1, QI) \
	VPHADDD Y1, Y0, Y7 \
	VPHADDD Y7, Y6, Y6 \
	Q4KGX(2, QI) \
	VPHADDD Y1, Y0, Y7 \
	Q4KGX(3, QI) \
	VPHADDD Y1, Y0, Y8 \
	VPHADDD Y8, Y7, Y7 \
	VPERM2I128 $0x20, Y7, Y6, Y0 \
	VPERM2I128 $0x31, Y7, Y6, Y1 \
	VPADDD Y1, Y0, Y0 \
	VCVTDQ2PS Y0, Y0 \
	VFMADD231PS Y5, Y0, acc10

// func dotQ4KAVX2x4rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, k int, ld int, y *float32, ldy int)
TEXT ·dotQ4KAVX2x4rows(SB), NOSPLIT, $160-88
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL $0x30303030, AX
	VMOVD AX, X0
	VPBROADCASTD X0, X0
	VMOVDQU X0, c30-32(SP)
	MOVL $0x3F3F3F3F, AX
	VMOVD AX, X0
	VPBROADCASTD X0, X0
	VMOVDQU X0, c3f-16(SP)
	QKX4ARGS(q4kx4_end)
q4kx4_row:
	QKX4ROWSTART(Y11)
q4kx4_loop:
	// The super-block's scales, as dotQ4KAVX2 unpacks them.
	VMOVDQU 4(SI), X0
	VPSHUFD $0xAA, X0, X1
	VPSRLD $4, X1, X5
	VPBLENDD $2, X5, X1, X1
	VPAND X15, X1, X1
	VPSRLD $2, X0, X6
	VPAND c30-32(SP), X6, X6
	VPOR X6, X1, X1
	VPAND c3f-16(SP), X0, X0
	VPUNPCKLDQ X1, X0, X0
	VPMOVZXBD X0, Y7
	VPSRLDQ $8, X0, X0
	VPMOVZXBD X0, Y8
	VCVTDQ2PS Y7, Y7
	VCVTDQ2PS Y8, Y8
	VMOVUPS Y7, sc-160(SP)
	VMOVUPS Y8, m-96(SP)
	VPBROADCASTD (SI), X5
	VCVTPH2PS X5, Y5
	VMOVSLDUP Y5, Y6
	VMOVSHDUP Y5, Y5
	VMOVUPS Y6, d-128(SP)
	VMOVUPS Y5, dmin-64(SP)
	Q4KX4ROW((DX*1), (DX*1), Y9, Y10)
	Q4KX4ROW((R9*1), (R14*1), Y2, Y3)
	Q4KX4ROW((R9*2), (R14*2), Y4, Y11)
	Q4KX4ROW((R15*1), (AX*1), Y13, Y14)
	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ $32, R8
	ADDQ $32, R10
	DECQ CX
	JNZ q4kx4_loop
	QKX4ROWEND(VSUBPS, Y11, q4kx4_row)
q4kx4_end:
	VZEROUPPER
	RET

// ---- Q6_K for four activation rows (prefill): dotQ6KAVX2rows' steps for
// each activation row in turn, against a super-block's codes and scales
// built once for the four and kept on the stack: per half, the four code
// vectors Q6HALF2 builds and the sub-block scales as floats, then d.
// Every row's sum is dotQ6KAVX2's bit for bit (the same operations in the
// same order; products only take an operand from memory).
//
// Registers: SI weights, DI codes of activation row 0 (row r: r·R9 bytes
// on; R15 = 3·R9), R8 and R10 its d16 and b16 (row r: r·R14 bytes on; AX
// = 3·R14), CX super-blocks left, DX = 0 in the loop (row 0's index);
// accumulators (Y9, Y10), (Y2, Y3), (Y4, Y5), (Y13, Y14) for rows 0..3;
// Y11 = qk2Idx, Y12 = int16 ones; Y0, Y6, Y7, Y8 and Y15 scratch.

// Q6X4PAIR builds, from the 32 ql bytes at src and the qh bits in qh
// (shifted so that a code's two are bits 0–1, and the code k+2 ones bits
// 4–5), the codes of k (low nibbles) into klo and of k+2 (high nibbles)
// into khi.
#define Q6X4PAIR(src, qh, klo, khi) \
	VMOVDQU src, Y0 \
	VPAND c0f-96(SP), Y0, Y15 \
	VPAND c03-64(SP), qh, Y6 \
	VPSLLW $4, Y6, Y6 \
	VPOR Y6, Y15, Y15 \
	VMOVDQU Y15, klo \
	VPSRLW $4, Y0, Y15 \
	VPAND c0f-96(SP), Y15, Y15 \
	VPAND c30-32(SP), qh, Y6 \
	VPOR Y6, Y15, Y15 \
	VMOVDQU Y15, khi

// Q6X4UNPACK builds half h's codes k = 0..3 into k0..k3 and its scales as
// floats into sc, as Q6HALF2 and Q6SCALE do.
#define Q6X4UNPACK(h, k0, k1, k2, k3, sc) \
	VMOVDQU (128+32*h)(SI), Y7 \
	VPSRLW $2, Y7, Y8 \
	Q6X4PAIR((64*h)(SI), Y7, k0, k2) \
	Q6X4PAIR((64*h+32)(SI), Y8, k1, k3) \
	VPMOVSXBD (192+8*h)(SI), Y0 \
	VCVTDQ2PS Y0, Y0 \
	VMOVUPS Y0, sc

// Q6X4DOT is Q6DOT on the codes at c (the stack) against the activations
// at aoff(DI) plus the index QI.
#define Q6X4DOT(c, aoff, QI, dst) \
	VMOVDQU c, Y15 \
	VPMADDUBSW aoff(DI)QI, Y15, dst \
	VPMADDWD Y12, dst, dst

// Q6X4HALF adds half h of the super-block for one activation row (codes
// index QI, scales index SX) into acc9 (the offsets) and acc10.
#define Q6X4HALF(h, k0, k1, k2, k3, sc, QI, SX, acc9, acc10) \
	Q6X4DOT(k0, 128*h, QI, Y6) \
	Q6X4DOT(k1, 128*h+32, QI, Y7) \
	VPHADDD Y7, Y6, Y6 \
	Q6X4DOT(k2, 128*h+64, QI, Y7) \
	Q6X4DOT(k3, 128*h+96, QI, Y8) \
	VPHADDD Y8, Y7, Y7 \
	VPHADDD Y7, Y6, Y8 \
	VMOVUPS sc, Y0 \
	VMULPS (32*h)(R8)SX, Y0, Y0 \
	VMULPS d-128(SP), Y0, Y0 \
	VFMADD231PS (32*h)(R10)SX, Y0, acc9 \
	VPERMPS Y0, Y11, Y0 \
	VCVTDQ2PS Y8, Y8 \
	VFMADD231PS Y0, Y8, acc10

#define Q6X4ROW(QI, SX, acc9, acc10) \
	Q6X4HALF(0, h0k0-448(SP), h0k1-416(SP), h0k2-384(SP), h0k3-352(SP), sc0-192(SP), QI, SX, acc9, acc10) \
	Q6X4HALF(1, h1k0-320(SP), h1k1-288(SP), h1k2-256(SP), h1k3-224(SP), sc1-160(SP), QI, SX, acc9, acc10)

// func dotQ6KAVX2x4rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, k int, ld int, y *float32, ldy int)
TEXT ·dotQ6KAVX2x4rows(SB), NOSPLIT, $448-88
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X0
	VPBROADCASTD X0, Y0
	VMOVDQU Y0, c0f-96(SP)
	MOVL $0x03030303, AX
	VMOVD AX, X0
	VPBROADCASTD X0, Y0
	VMOVDQU Y0, c03-64(SP)
	MOVL $0x30303030, AX
	VMOVD AX, X0
	VPBROADCASTD X0, Y0
	VMOVDQU Y0, c30-32(SP)
	MOVL $0x00010001, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	VMOVDQU ·qk2Idx(SB), Y11
	QKX4ARGS(q6kx4_end)
q6kx4_row:
	QKX4ROWSTART(Y5)
q6kx4_loop:
	Q6X4UNPACK(0, h0k0-448(SP), h0k1-416(SP), h0k2-384(SP), h0k3-352(SP), sc0-192(SP))
	Q6X4UNPACK(1, h1k0-320(SP), h1k1-288(SP), h1k2-256(SP), h1k3-224(SP), sc1-160(SP))
	VPBROADCASTW 208(SI), X6
	VCVTPH2PS X6, Y6
	VMOVUPS Y6, d-128(SP)
	Q6X4ROW((DX*1), (DX*1), Y9, Y10)
	Q6X4ROW((R9*1), (R14*1), Y2, Y3)
	Q6X4ROW((R9*2), (R14*2), Y4, Y5)
	Q6X4ROW((R15*1), (AX*1), Y13, Y14)
	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ $64, R8
	ADDQ $64, R10
	DECQ CX
	JNZ q6kx4_loop
	QKX4ROWEND(VADDPS, Y5, q6kx4_row)
q6kx4_end:
	VZEROUPPER
	RET
