//go:build !noasm

#include "textflag.h"
#include "qrows_amd64.h"
#include "prefetch_amd64.h"

// Grouped Q8_0 row dot products with AVX-512 VBMI + VNNI: two 34-byte
// weight blocks (68 bytes, a "pair") at a time against the q8 pair layout
// of an activation row (qlay.go: 80-byte records, lane j of a vector
// belongs to block j%2). The signed codes are made unsigned by adding 128
// (XOR 0x80, Z28); the bias of each record (16·nsum per lane, 8 lanes a
// block) takes the 128·Σa back out.
//
// The three kernels (one row, four rows, many weight rows) round alike:
// even pairs go to one float accumulator per activation row, odd pairs
// to a second, added at the end, so a row's sum is the same whatever M is
// (speculative decoding verifies k tokens in one batch against one-token
// decoding).
//
// Registers: SI weights, DI records, CX pairs left; Z29 unused here.

// GROUPQ8(t1, t2, idxS, idxC, loff, acc): the pair starts at byte r of
// t1 ‖ t2; idxS/idxC (for r) pull the two f16 scales into words j (block
// j%2) of Z3 and the code bytes into dwords j (block j%2, bytes
// 4(j/2)..+3) of t1, which is overwritten.
#define GROUPQ8(t1, t2, idxS, idxC, loff, acc) \
	VMOVDQA64 t1, Z3 \
	VPERMT2B t2, idxS, Z3 \
	VPERMT2B t2, idxC, t1 \
	VPXORD Z28, t1, t1 \
	VPBROADCASTQ loff+72(DI), Z5 \
	VPDPBUSD loff(DI), t1, Z5 \
	VCVTDQ2PS Z5, Z5 \
	VCVTPH2PS Y3, Z3 \
	VBROADCASTF32X2 loff+64(DI), Z6 \
	VMULPS Z6, Z3, Z3 \
	VFMADD231PS Z5, Z3, acc

#define CONSTQ8 \
	MOVL $0x80808080, AX \
	VMOVD AX, X15 \
	VPBROADCASTD X15, Z28 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17

// func dotQ8G512(np int, w *byte, lay *byte) float32
//
// Two pairs (136 bytes, three loads) per iteration while at least three
// pairs are left; the last one or two load their final bytes with a byte
// mask. Z24/Z25: scale/code indices for a pair at byte 0, Z26/Z27 at byte 4.
TEXT ·dotQ8G512(SB), NOSPLIT, $0-28
	MOVQ np+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ lay+16(FP), DI
	VMOVDQU64 ·q8gIdx+0(SB), Z24
	VMOVDQU64 ·q8gIdx+64(SB), Z25
	VMOVDQU64 ·q8gIdx+128(SB), Z26
	VMOVDQU64 ·q8gIdx+192(SB), Z27
	CONSTQ8
	CMPQ CX, $3
	JLT q8g_tail
q8g_loop:
	VMOVDQU64 (SI), Z1
	VMOVDQU64 64(SI), Z2
	VMOVDQU64 128(SI), Z7
	GROUPQ8(Z1, Z2, Z24, Z25, 0, Z16)
	GROUPQ8(Z2, Z7, Z26, Z27, 80, Z17)
	ADDQ $136, SI
	ADDQ $160, DI
	SUBQ $2, CX
	CMPQ CX, $3
	JGE q8g_loop
q8g_tail:
	CMPQ CX, $1
	JLT q8g_done
	JEQ q8g_one
	// Two pairs: bytes 128..135 of the third load.
	MOVQ $0xFF, AX
	KMOVQ AX, K1
	VMOVDQU64 (SI), Z1
	VMOVDQU64 64(SI), Z2
	VMOVDQU8.Z 128(SI), K1, Z7
	GROUPQ8(Z1, Z2, Z24, Z25, 0, Z16)
	GROUPQ8(Z2, Z7, Z26, Z27, 80, Z17)
	JMP q8g_done
q8g_one:
	// One pair: bytes 64..67 of the second load.
	MOVQ $0xF, AX
	KMOVQ AX, K1
	VMOVDQU64 (SI), Z1
	VMOVDQU8.Z 64(SI), K1, Z2
	GROUPQ8(Z1, Z2, Z24, Z25, 0, Z16)
q8g_done:
	VADDPS Z17, Z16, Z16
	VEXTRACTF64X4 $1, Z16, Y1
	VADDPS Y1, Y16, Y1
	VEXTRACTF128 $1, Y1, X0
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// ROWQ8X4 is one activation row's share of a pair in dotQ8G512x4: the
// unsigned codes in Z1, the weight scales in Z3, the record at rec.
#define ROWQ8X4(rec, i, d, acc) \
	VPBROADCASTQ 72 rec, i \
	VPDPBUSD rec, Z1, i \
	VCVTDQ2PS i, i \
	VBROADCASTF32X2 64 rec, d \
	VMULPS Z3, d, d \
	VFMADD231PS i, d, acc

// UNPACKQ8X4 loads the pair at SI (its second load masked to the last 4
// bytes by K1) and unpacks it for dotQ8G512x4 and its many-rows twins: the
// codes made unsigned in Z1, the scales widened in Z3.
#define UNPACKQ8X4 \
	VMOVDQU64 (SI), Z1 \
	VMOVDQU8.Z 64(SI), K1, Z2 \
	VMOVDQA64 Z1, Z3 \
	VPERMT2B Z2, Z24, Z3 \
	VPERMT2B Z2, Z25, Z1 \
	VPXORD Z28, Z1, Z1 \
	VCVTPH2PS Y3, Z3

// PAIRQ8X4 is one pair of dotQ8G512x4 for the four rows into
// accumulators a0..a3, then the pointers advance past it.
#define PAIRQ8X4(a0, a1, a2, a3) \
	UNPACKQ8X4 \
	ROWQ8X4((DI), Z5, Z9, a0) \
	ROWQ8X4((DI)(R10*1), Z6, Z10, a1) \
	ROWQ8X4((DI)(R10*2), Z7, Z11, a2) \
	ROWQ8X4((R11), Z8, Z12, a3) \
	ADDQ $68, SI \
	ADDQ $80, DI \
	ADDQ $80, R11

// func dotQ8G512x4(np int, w *byte, lay *byte, ld int, out *float32)
//
// dotQ8G512 for four activation rows (records at lay + r·ld), each pair
// loaded and unpacked once (quantized GEMM, prefill); the second load of
// a pair is masked to its last 4 bytes. Even pairs accumulate in
// Z16..Z19, odd ones in Z20..Z23, as dotQ8G512's Z16 and Z17.
TEXT ·dotQ8G512x4(SB), NOSPLIT, $0-40
	MOVQ np+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ lay+16(FP), DI
	MOVQ ld+24(FP), R10
	LEAQ (DI)(R10*2), R11
	ADDQ R10, R11
	VMOVDQU64 ·q8gIdx+0(SB), Z24
	VMOVDQU64 ·q8gIdx+64(SB), Z25
	CONSTQ8
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	MOVQ $0xF, AX
	KMOVQ AX, K1
	CMPQ CX, $2
	JLT q8gx4_tail
q8gx4_loop:
	PAIRQ8X4(Z16, Z17, Z18, Z19)
	PAIRQ8X4(Z20, Z21, Z22, Z23)
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q8gx4_loop
q8gx4_tail:
	TESTQ CX, CX
	JEQ q8gx4_done
	PAIRQ8X4(Z16, Z17, Z18, Z19)
q8gx4_done:
	VADDPS Z20, Z16, Z16
	VADDPS Z21, Z17, Z17
	VADDPS Z22, Z18, Z18
	VADDPS Z23, Z19, Z19
	MOVQ out+32(FP), AX
	HSUM(Z16, Y16, 0)
	HSUM(Z17, Y17, 4)
	HSUM(Z18, Y18, 8)
	HSUM(Z19, Y19, 12)
	VZEROUPPER
	RET

// Q8ROWSCONSTS: dotQ8G512x4's constants, for the many-rows kernels.
#define Q8ROWSCONSTS \
	VMOVDQU64 ·q8gIdx+0(SB), Z24 \
	VMOVDQU64 ·q8gIdx+64(SB), Z25 \
	MOVL $0x80808080, AX \
	VMOVD AX, X15 \
	VPBROADCASTD X15, Z28 \
	MOVQ $0xF, AX \
	KMOVQ AX, K1

#define Q8X4EVEN PAIRQ8X4(Z16, Z17, Z18, Z19)
#define Q8X4ODD PAIRQ8X4(Z20, Z21, Z22, Z23)
#define Q8X8EVEN PAIRQ8X8(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
#define Q8X8ODD PAIRQ8X8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)

// func dotQ8G512x4rows(nr int, ng int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)
//
// dotQ8G512x4 for nr consecutive weight rows (rb bytes apart) against the
// same four activation rows, as dotQ4G512x4rows: the four sums of weight
// row i go to y[i], y[ldy+i], y[2·ldy+i] and y[3·ldy+i].
TEXT ·dotQ8G512x4rows(SB), NOSPLIT, $0-64
	MANYROWS(Q8ROWSCONSTS, LAYS4, ZEROS4, Q8X4EVEN, Q8X4ODD, FINISH4, q8gx4r_row, q8gx4r_loop, q8gx4r_tail, q8gx4r_done, q8gx4r_end)

// PAIRQ8X8 is PAIRQ8X4 for eight activation rows (records at DI, DI+ld,
// DI+2·ld, R11 = DI+3·ld, R11+ld, R11+2·ld, R14 = DI+6·ld, R14+ld).
#define PAIRQ8X8(a0, a1, a2, a3, a4, a5, a6, a7) \
	UNPACKQ8X4 \
	ROWQ8X4((DI), Z5, Z6, a0) \
	ROWQ8X4((DI)(R10*1), Z7, Z26, a1) \
	ROWQ8X4((DI)(R10*2), Z27, Z29, a2) \
	ROWQ8X4((R11), Z30, Z31, a3) \
	ROWQ8X4((R11)(R10*1), Z5, Z6, a4) \
	ROWQ8X4((R11)(R10*2), Z7, Z26, a5) \
	ROWQ8X4((R14), Z27, Z29, a6) \
	ROWQ8X4((R14)(R10*1), Z30, Z31, a7) \
	ADDQ $68, SI \
	ADDQ $80, DI \
	ADDQ $80, R11 \
	ADDQ $80, R14

// func dotQ8G512x8rows(nr int, ng int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)
//
// dotQ8G512x4rows for eight activation rows (sums of weight row i at
// y[r·ldy+i], r < 8); even pairs accumulate in Z16..Z23, odd ones in
// Z8..Z15.
TEXT ·dotQ8G512x8rows(SB), NOSPLIT, $0-64
	MANYROWS(Q8ROWSCONSTS, LAYS8, ZEROS8, Q8X8EVEN, Q8X8ODD, FINISH8, q8gx8r_row, q8gx8r_loop, q8gx8r_tail, q8gx8r_done, q8gx8r_end)

// func dotQ8G512rows(nr int, ng int, w *byte, rb int, lay *byte, y *float32)
//
// dotQ8G512 for nr consecutive weight rows (rb bytes apart) against one
// activation row (decode GEMV; ng = pairs per row), as dotQ4G512rows.
TEXT ·dotQ8G512rows(SB), NOSPLIT, $0-48
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+40(FP), R11
	VMOVDQU64 ·q8gIdx+0(SB), Z24
	VMOVDQU64 ·q8gIdx+64(SB), Z25
	VMOVDQU64 ·q8gIdx+128(SB), Z26
	VMOVDQU64 ·q8gIdx+192(SB), Z27
	MOVL $0x80808080, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Z28
	TESTQ R12, R12
	JEQ q8gr_end
q8gr_row:
	MOVQ ng+8(FP), CX
	MOVQ R13, SI
	MOVQ lay+32(FP), DI
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	CMPQ CX, $3
	JLT q8gr_tail
q8gr_loop:
	PREFETCHT0 QPF(SI)
	PREFETCHT0 QPF+64(SI)
	PREFETCHT0 QPF+128(SI)
	VMOVDQU64 (SI), Z1
	VMOVDQU64 64(SI), Z2
	VMOVDQU64 128(SI), Z7
	GROUPQ8(Z1, Z2, Z24, Z25, 0, Z16)
	GROUPQ8(Z2, Z7, Z26, Z27, 80, Z17)
	ADDQ $136, SI
	ADDQ $160, DI
	SUBQ $2, CX
	CMPQ CX, $3
	JGE q8gr_loop
q8gr_tail:
	CMPQ CX, $1
	JLT q8gr_done
	JEQ q8gr_one
	MOVQ $0xFF, AX
	KMOVQ AX, K1
	VMOVDQU64 (SI), Z1
	VMOVDQU64 64(SI), Z2
	VMOVDQU8.Z 128(SI), K1, Z7
	GROUPQ8(Z1, Z2, Z24, Z25, 0, Z16)
	GROUPQ8(Z2, Z7, Z26, Z27, 80, Z17)
	JMP q8gr_done
q8gr_one:
	MOVQ $0xF, AX
	KMOVQ AX, K1
	VMOVDQU64 (SI), Z1
	VMOVDQU8.Z 64(SI), K1, Z2
	GROUPQ8(Z1, Z2, Z24, Z25, 0, Z16)
q8gr_done:
	VADDPS Z17, Z16, Z16
	VEXTRACTF64X4 $1, Z16, Y1
	VADDPS Y1, Y16, Y1
	VEXTRACTF128 $1, Y1, X0
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, (R11)
	ADDQ $4, R11
	ADDQ rb+24(FP), R13
	DECQ R12
	JNZ q8gr_row
q8gr_end:
	VZEROUPPER
	RET
