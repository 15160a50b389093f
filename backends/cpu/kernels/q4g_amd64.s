//go:build !noasm

#include "textflag.h"
#include "qrows_amd64.h"
#include "prefetch_amd64.h"

// Grouped Q4_0 row dot products: four 18-byte weight blocks (72 bytes) at
// a time against a q4_0 group layout of one activation row (qlay.go: per
// group the activations of the low and of the high nibbles, the
// activation scales and the -8 offset bias).
//
// The AVX-512 kernels (one row, four rows, many weight rows) round
// alike: even groups go to one float accumulator per activation row, odd
// groups to a second, added at the end, so a row's sum is the same
// whatever M is (speculative decoding verifies k tokens in one batch
// against one-token decoding).
//
// Registers: SI weights, DI layout records, CX groups left.

// GROUPI is one group with AVX-512 VBMI + VNNI on the interleaved layout
// (qlay.go): lane j of every vector belongs to block j%4. The group's 72
// bytes start at byte r of t1 ‖ t2 (two consecutive 64-byte loads); with
// idxS/idxC the index tables for r, VPERMT2B pulls the four f16 scales into
// words j (block j%4) of Z3 and the code bytes into dwords j (block j%4,
// bytes 4(j/4)..+3) of t1, which it overwrites. The nibbles are split with
// one shift and two masks (Z29 = 0x0F bytes); VPDPBUSD accumulates both
// halves onto the bias (4 int32 per group, broadcast); one convert, one
// multiply by the activation scales (4 floats, broadcast), one FMA.
#define GROUPI(t1, t2, idxS, idxC, loff, acc) \
	VMOVDQA64 t1, Z3 \
	VPERMT2B t2, idxS, Z3 \
	VPERMT2B t2, idxC, t1 \
	VPSRLW $4, t1, Z4 \
	VPANDD Z29, t1, t1 \
	VPANDD Z29, Z4, Z4 \
	VBROADCASTI32X4 loff+144(DI), Z5 \
	VPDPBUSD loff(DI), t1, Z5 \
	VPDPBUSD loff+64(DI), Z4, Z5 \
	VCVTDQ2PS Z5, Z5 \
	VCVTPH2PS Y3, Z3 \
	VBROADCASTF32X4 loff+128(DI), Z6 \
	VMULPS Z6, Z3, Z3 \
	VFMADD231PS Z5, Z3, acc

// func dotQ4G512(ng int, w *byte, lay *byte) float32
//
// Two groups (144 bytes, three loads) per iteration while at least three
// groups are left, so that the third load stays inside the row; the last
// one or two groups load their final bytes with a byte mask. Z24/Z25 are
// the scale/code indices for a group at byte 0 of its loads, Z26/Z27 for
// one at byte 8.
TEXT ·dotQ4G512(SB), NOSPLIT, $0-28
	MOVQ ng+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ lay+16(FP), DI
	VMOVDQU64 ·q4gIdx+0(SB), Z24
	VMOVDQU64 ·q4gIdx+64(SB), Z25
	VMOVDQU64 ·q4gIdx+128(SB), Z26
	VMOVDQU64 ·q4gIdx+192(SB), Z27
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Z29
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	CMPQ CX, $3
	JLT q4g512_tail
q4g512_loop:
	VMOVDQU64 (SI), Z1
	VMOVDQU64 64(SI), Z2
	VMOVDQU64 128(SI), Z7
	GROUPI(Z1, Z2, Z24, Z25, 0, Z16)
	GROUPI(Z2, Z7, Z26, Z27, 192, Z17)
	ADDQ $144, SI
	ADDQ $384, DI
	SUBQ $2, CX
	CMPQ CX, $3
	JGE q4g512_loop
q4g512_tail:
	CMPQ CX, $1
	JLT q4g512_done
	JEQ q4g512_one
	// Two groups: bytes 128..143 of the third load.
	MOVQ $0xFFFF, AX
	KMOVQ AX, K1
	VMOVDQU64 (SI), Z1
	VMOVDQU64 64(SI), Z2
	VMOVDQU8.Z 128(SI), K1, Z7
	GROUPI(Z1, Z2, Z24, Z25, 0, Z16)
	GROUPI(Z2, Z7, Z26, Z27, 192, Z17)
	JMP q4g512_done
q4g512_one:
	// One group: bytes 64..71 of the second load.
	MOVQ $0xFF, AX
	KMOVQ AX, K1
	VMOVDQU64 (SI), Z1
	VMOVDQU8.Z 64(SI), K1, Z2
	GROUPI(Z1, Z2, Z24, Z25, 0, Z16)
q4g512_done:
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

// PAIR2 is two blocks with AVX2: block i's 16 code bytes into lane i, the
// nibbles split as above, VPMADDUBSW per half (pair sums ≤ 2·15·127 fit
// int16), the halves added, VPMADDWD by ones (Y14) to int32, plus the
// bias; the two f16 scales go to words 0..3 and 4..7 of X6 by two
// broadcasts and a blend. Y15 = 0x0F bytes.
#define PAIR2(woff, loff, acc) \
	VMOVDQU woff+2(SI), X1 \
	VINSERTI128 $1, woff+20(SI), Y1, Y1 \
	VPSRLW $4, Y1, Y2 \
	VPAND Y15, Y1, Y1 \
	VPAND Y15, Y2, Y2 \
	VPMADDUBSW loff(DI), Y1, Y1 \
	VPMADDUBSW loff+64(DI), Y2, Y2 \
	VPADDW Y2, Y1, Y1 \
	VPMADDWD Y14, Y1, Y1 \
	VPADDD loff+192(DI), Y1, Y1 \
	VCVTDQ2PS Y1, Y1 \
	VPBROADCASTW woff(SI), X6 \
	VPBROADCASTW woff+18(SI), X7 \
	VPBLENDD $0x0C, X7, X6, X6 \
	VCVTPH2PS X6, Y6 \
	VMULPS loff+128(DI), Y6, Y6 \
	VFMADD231PS Y6, Y1, acc

// func dotQ4GAVX2(ng int, w *byte, lay *byte) float32
TEXT ·dotQ4GAVX2(SB), NOSPLIT, $0-28
	MOVQ ng+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ lay+16(FP), DI
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
	TESTQ CX, CX
	JEQ q4ga2_done
q4ga2_loop:
	PAIR2(0, 0, Y0)
	PAIR2(36, 32, Y8)
	ADDQ $72, SI
	ADDQ $256, DI
	DECQ CX
	JNZ q4ga2_loop
q4ga2_done:
	VADDPS Y8, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// ROWX4 is one activation row's share of a group in dotQ4G512x4: the
// unpacked codes are in Z1 (low nibbles) and Z4 (high), the weight scales
// in Z3; the row's record is at rec. i, d: int and scale temporaries.
#define ROWX4(rec, i, d, acc) \
	VBROADCASTI32X4 144 rec, i \
	VPDPBUSD rec, Z1, i \
	VPDPBUSD 64 rec, Z4, i \
	VCVTDQ2PS i, i \
	VBROADCASTF32X4 128 rec, d \
	VMULPS Z3, d, d \
	VFMADD231PS i, d, acc

// UNPACKX4 loads the group at SI (its second load masked to the last 8
// bytes by K1) and unpacks it for dotQ4G512x4 and its many-rows twins:
// the codes' low nibbles in Z1, high ones in Z4, the scales widened in Z3.
#define UNPACKX4 \
	VMOVDQU64 (SI), Z1 \
	VMOVDQU8.Z 64(SI), K1, Z2 \
	VMOVDQA64 Z1, Z3 \
	VPERMT2B Z2, Z24, Z3 \
	VPERMT2B Z2, Z25, Z1 \
	VPSRLW $4, Z1, Z4 \
	VPANDD Z29, Z1, Z1 \
	VPANDD Z29, Z4, Z4 \
	VCVTPH2PS Y3, Z3

// GROUPX4 is one group of dotQ4G512x4 for the four rows into
// accumulators a0..a3, then the pointers advance past it.
#define GROUPX4(a0, a1, a2, a3) \
	UNPACKX4 \
	ROWX4((DI), Z5, Z9, a0) \
	ROWX4((DI)(R10*1), Z6, Z10, a1) \
	ROWX4((DI)(R10*2), Z7, Z11, a2) \
	ROWX4((R11), Z8, Z12, a3) \
	ADDQ $72, SI \
	ADDQ $192, DI \
	ADDQ $192, R11

// func dotQ4G512x4(ng int, w *byte, lay *byte, ld int, out *float32)
//
// dotQ4G512 for four activation rows (interleaved records at lay, lay+ld,
// lay+2·ld, lay+3·ld) against one weight row: each group is loaded and
// unpacked once for the four rows (quantized GEMM, prefill). The second
// load of a group takes only its last 8 bytes (mask K1), so nothing past
// the row is read. Even groups accumulate in Z16..Z19, odd ones in
// Z20..Z23, as dotQ4G512's Z16 and Z17.
TEXT ·dotQ4G512x4(SB), NOSPLIT, $0-40
	MOVQ ng+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ lay+16(FP), DI
	MOVQ ld+24(FP), R10
	LEAQ (DI)(R10*2), R11
	ADDQ R10, R11
	VMOVDQU64 ·q4gIdx+0(SB), Z24
	VMOVDQU64 ·q4gIdx+64(SB), Z25
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Z29
	MOVQ $0xFF, AX
	KMOVQ AX, K1
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	CMPQ CX, $2
	JLT q4gx4_tail
q4gx4_loop:
	GROUPX4(Z16, Z17, Z18, Z19)
	GROUPX4(Z20, Z21, Z22, Z23)
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q4gx4_loop
q4gx4_tail:
	TESTQ CX, CX
	JEQ q4gx4_done
	GROUPX4(Z16, Z17, Z18, Z19)
q4gx4_done:
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

// Q4ROWSCONSTS: dotQ4G512x4's constants, for the many-rows kernels.
#define Q4ROWSCONSTS \
	VMOVDQU64 ·q4gIdx+0(SB), Z24 \
	VMOVDQU64 ·q4gIdx+64(SB), Z25 \
	MOVL $0x0F0F0F0F, AX \
	VMOVD AX, X15 \
	VPBROADCASTD X15, Z29 \
	MOVQ $0xFF, AX \
	KMOVQ AX, K1

#define Q4X4EVEN GROUPX4(Z16, Z17, Z18, Z19)
#define Q4X4ODD GROUPX4(Z20, Z21, Z22, Z23)
#define Q4X8EVEN GROUPX8(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
#define Q4X8ODD GROUPX8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)

// func dotQ4G512x4rows(nr int, ng int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)
//
// dotQ4G512x4 for nr consecutive weight rows (rb bytes apart) against the
// same four activation rows: the four sums of weight row i go to y[i],
// y[ldy+i], y[2·ldy+i] and y[3·ldy+i] (a prefill GEMM's task in one call,
// with no per-row call, and the same sums as dotQ4G512x4's).
TEXT ·dotQ4G512x4rows(SB), NOSPLIT, $0-64
	MANYROWS(Q4ROWSCONSTS, LAYS4, ZEROS4, Q4X4EVEN, Q4X4ODD, FINISH4, q4gx4r_row, q4gx4r_loop, q4gx4r_tail, q4gx4r_done, q4gx4r_end)

// GROUPX8 is GROUPX4 for eight activation rows (records at DI, DI+ld,
// DI+2·ld, R11 = DI+3·ld, R11+ld, R11+2·ld, R14 = DI+6·ld, R14+ld) into
// accumulators a0..a7: the group's codes and scales are unpacked once for
// the eight.
#define GROUPX8(a0, a1, a2, a3, a4, a5, a6, a7) \
	UNPACKX4 \
	ROWX4((DI), Z5, Z6, a0) \
	ROWX4((DI)(R10*1), Z7, Z26, a1) \
	ROWX4((DI)(R10*2), Z27, Z28, a2) \
	ROWX4((R11), Z30, Z31, a3) \
	ROWX4((R11)(R10*1), Z5, Z6, a4) \
	ROWX4((R11)(R10*2), Z7, Z26, a5) \
	ROWX4((R14), Z27, Z28, a6) \
	ROWX4((R14)(R10*1), Z30, Z31, a7) \
	ADDQ $72, SI \
	ADDQ $192, DI \
	ADDQ $192, R11 \
	ADDQ $192, R14

// func dotQ4G512x8rows(nr int, ng int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)
//
// dotQ4G512x4rows for eight activation rows: each group is loaded and
// unpacked once for the eight, the sums of weight row i go to y[r·ldy+i]
// (r < 8). Even groups accumulate in Z16..Z23, odd ones in Z8..Z15, so
// every sum is dotQ4G512's.
TEXT ·dotQ4G512x8rows(SB), NOSPLIT, $0-64
	MANYROWS(Q4ROWSCONSTS, LAYS8, ZEROS8, Q4X8EVEN, Q4X8ODD, FINISH8, q4gx8r_row, q4gx8r_loop, q4gx8r_tail, q4gx8r_done, q4gx8r_end)

// func dotQ4G512rows(nr int, ng int, w *byte, rb int, lay *byte, y *float32)
//
// dotQ4G512 for nr consecutive weight rows (rb bytes apart) against one
// activation row, y[i] = row i · activations: the decode GEMV of a task
// in one call, with no per-row call overhead. Same loop as dotQ4G512.
TEXT ·dotQ4G512rows(SB), NOSPLIT, $0-48
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+40(FP), R11
	VMOVDQU64 ·q4gIdx+0(SB), Z24
	VMOVDQU64 ·q4gIdx+64(SB), Z25
	VMOVDQU64 ·q4gIdx+128(SB), Z26
	VMOVDQU64 ·q4gIdx+192(SB), Z27
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Z29
	TESTQ R12, R12
	JEQ q4gr_end
	ROWPFINIT
q4gr_row:
	ROWPF(q4gr_pf, q4gr_pfdone)
	MOVQ ng+8(FP), CX
	MOVQ R13, SI
	MOVQ lay+32(FP), DI
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	CMPQ CX, $3
	JLT q4gr_tail
q4gr_loop:
	VMOVDQU64 (SI), Z1
	VMOVDQU64 64(SI), Z2
	VMOVDQU64 128(SI), Z7
	GROUPI(Z1, Z2, Z24, Z25, 0, Z16)
	GROUPI(Z2, Z7, Z26, Z27, 192, Z17)
	ADDQ $144, SI
	ADDQ $384, DI
	SUBQ $2, CX
	CMPQ CX, $3
	JGE q4gr_loop
q4gr_tail:
	CMPQ CX, $1
	JLT q4gr_done
	JEQ q4gr_one
	MOVQ $0xFFFF, AX
	KMOVQ AX, K1
	VMOVDQU64 (SI), Z1
	VMOVDQU64 64(SI), Z2
	VMOVDQU8.Z 128(SI), K1, Z7
	GROUPI(Z1, Z2, Z24, Z25, 0, Z16)
	GROUPI(Z2, Z7, Z26, Z27, 192, Z17)
	JMP q4gr_done
q4gr_one:
	MOVQ $0xFF, AX
	KMOVQ AX, K1
	VMOVDQU64 (SI), Z1
	VMOVDQU8.Z 64(SI), K1, Z2
	GROUPI(Z1, Z2, Z24, Z25, 0, Z16)
q4gr_done:
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
	JNZ q4gr_row
q4gr_end:
	VZEROUPPER
	RET

// func dotQ4GAVX2rows(nr int, ng int, w *byte, rb int, lay *byte, y *float32)
//
// dotQ4GAVX2 for nr consecutive weight rows (rb bytes apart) against one
// activation row (decode GEMV, one call a task).
TEXT ·dotQ4GAVX2rows(SB), NOSPLIT, $0-48
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+40(FP), R11
	TESTQ R12, R12
	JEQ q4gar_end
q4gar_row:
	MOVQ ng+8(FP), CX
	MOVQ R13, SI
	MOVQ lay+32(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
q4gar_loop:
	PREFETCHT0 QPF(SI)
	PREFETCHT0 QPF+64(SI)
	PAIR2(0, 0, Y0)
	PAIR2(36, 32, Y8)
	ADDQ $72, SI
	ADDQ $256, DI
	DECQ CX
	JNZ q4gar_loop
	VADDPS Y8, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, (R11)
	ADDQ $4, R11
	ADDQ rb+24(FP), R13
	DECQ R12
	JNZ q4gar_row
q4gar_end:
	VZEROUPPER
	RET
