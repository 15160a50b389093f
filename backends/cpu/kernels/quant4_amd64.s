//go:build !noasm

#include "textflag.h"

// Four-row variants of the VNNI dot products (quant_amd64.s) for
// quantized GEMM (prefill): one weight row against four activation rows,
// so each weight block is loaded, unpacked and its scale converted once
// for four dot products. AVX-512 VL lets the per-row temporaries use
// Y16..Y31.
//
// Registers: SI weights; activation row r at DI (r=0), DI+R10 (1), R11
// (2), R11+R10 (3) where R10 = K bytes; scales at R8, R8+R12, R8+2·R12,
// R13+R12 and negated sums at R9, R9+R12, R9+2·R12, R14+R12 where R12 =
// nb·4 bytes; accumulators Y16..Y19; Y6 = the weight block scale.

#define ARGS4 \
	MOVQ nb+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ qs+16(FP), DI \
	MOVQ d+24(FP), R8 \
	MOVQ nsum+32(FP), R9 \
	MOVQ k+40(FP), R10 \
	MOVQ CX, R12 \
	SHLQ $2, R12 \
	LEAQ (DI)(R10*2), R11 \
	LEAQ (R8)(R12*2), R13 \
	LEAQ (R9)(R12*2), R14 \
	VPXORD Y16, Y16, Y16 \
	VPXORD Y17, Y17, Y17 \
	VPXORD Y18, Y18, Y18 \
	VPXORD Y19, Y19, Y19 \
	VPXORD Y28, Y28, Y28 \
	VPXORD Y29, Y29, Y29 \
	VPXORD Y30, Y30, Y30 \
	VPXORD Y31, Y31, Y31

// ROW(a, s, d, acc, t, u): one activation row's share of a Q4_0 block
// whose unsigned weight codes are in Y1: the bias (negated sum) plus
// VPDPBUSD, converted, accumulated times dw·da (Y6 = dw). The rounding
// order is exactly dotQ4VNNI's, so a row's sum does not depend on whether
// it ran alone or in a group of four.
#define ROW(a, s, d, acc, t, u) \
	VPBROADCASTD s, t \
	VPDPBUSD a, Y1, t \
	VCVTDQ2PS t, t \
	VBROADCASTSS d, u \
	VMULPS Y6, u, u \
	VFMADD231PS u, t, acc

// ROW8(a, d, acc, t, u): the same for a Q8_0 block, as dotQ8VNNI: |w| in
// Y2, the activations given w's sign (VPSIGNB has no EVEX form, so the
// signed copy goes through Y3), then as ROW.
#define ROW8(a, d, acc, t, u) \
	VMOVDQU a, Y3 \
	VPSIGNB Y1, Y3, Y3 \
	VPXORD t, t, t \
	VPDPBUSD Y3, Y2, t \
	VCVTDQ2PS t, t \
	VBROADCASTSS d, u \
	VMULPS Y6, u, u \
	VFMADD231PS u, t, acc

// ROWS4/ROWS8 run the four rows of one block into accumulators a0..a3.
#define ROWS4(a0, a1, a2, a3) \
	ROW((DI), (R9), (R8), a0, Y20, Y24) \
	ROW((DI)(R10*1), (R9)(R12*1), (R8)(R12*1), a1, Y21, Y25) \
	ROW((R11), (R9)(R12*2), (R8)(R12*2), a2, Y22, Y26) \
	ROW((R11)(R10*1), (R14)(R12*1), (R13)(R12*1), a3, Y23, Y27)

#define ROWS8(a0, a1, a2, a3) \
	ROW8((DI), (R8), a0, Y20, Y24) \
	ROW8((DI)(R10*1), (R8)(R12*1), a1, Y21, Y25) \
	ROW8((R11), (R8)(R12*2), a2, Y22, Y26) \
	ROW8((R11)(R10*1), (R13)(R12*1), a3, Y23, Y27)

#define ADVANCE(wbytes) \
	ADDQ $wbytes, SI \
	ADDQ $32, DI \
	ADDQ $32, R11 \
	ADDQ $4, R8 \
	ADDQ $4, R9 \
	ADDQ $4, R13 \
	ADDQ $4, R14

// HS stores the horizontal sum of src at off(AX).
#define HS(src, off) \
	VMOVAPS src, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0 \
	VMOVSS X0, off(AX)

// Q4CODES puts the block's 32 codes (unsigned) in Y1 and its f16 scale
// as float in Y6 (Y13 = shifts {0, 0, 4, 4}, Y15 = 0x0F bytes).
#define Q4CODES(x) \
	VBROADCASTI128 2(SI), Y1 \
	VPSRLVQ Y13, Y1, Y1 \
	VPAND Y15, Y1, Y1 \
	VPBROADCASTW (SI), X6 \
	VCVTPH2PS X6, Y6

// Q8CODES puts the block's signed codes in Y1, their magnitudes in Y2
// and its f16 scale as float in Y6.
#define Q8CODES \
	VMOVDQU 2(SI), Y1 \
	VPABSB Y1, Y2 \
	VPBROADCASTW (SI), X6 \
	VCVTPH2PS X6, Y6

#define STORE4 \
	VADDPS Y28, Y16, Y16 \
	VADDPS Y29, Y17, Y17 \
	VADDPS Y30, Y18, Y18 \
	VADDPS Y31, Y19, Y19 \
	MOVQ out+48(FP), AX \
	HS(Y16, 0) \
	HS(Y17, 4) \
	HS(Y18, 8) \
	HS(Y19, 12) \
	VZEROUPPER \
	RET

// func dotQ4VNNIx4(nb int, w *byte, qs *int8, d *float32, nsum *int32, k int, out *float32)
TEXT ·dotQ4VNNIx4(SB), NOSPLIT, $0-56
	ARGS4
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVQ $4, AX
	VMOVQ AX, X13
	VPBROADCASTQ X13, X13
	VPXOR X12, X12, X12
	VINSERTI128 $1, X13, Y12, Y13
	CMPQ CX, $2
	JLT q4x4_tail
q4x4_loop:
	// Even blocks into Y16..Y19, odd ones into Y28..Y31 (dotQ4VNNI's Y0
	// and Y8). Codes 0..15 as unsigned bytes; the -8 offset is the bias:
	// 8 lanes of the negated sum each.
	Q4CODES(0)
	ROWS4(Y16, Y17, Y18, Y19)
	ADVANCE(18)
	Q4CODES(0)
	ROWS4(Y28, Y29, Y30, Y31)
	ADVANCE(18)
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q4x4_loop
q4x4_tail:
	TESTQ CX, CX
	JEQ q4x4_done
	Q4CODES(0)
	ROWS4(Y16, Y17, Y18, Y19)
q4x4_done:
	STORE4

// func dotQ8VNNIx4(nb int, w *byte, qs *int8, d *float32, nsum *int32, k int, out *float32)
TEXT ·dotQ8VNNIx4(SB), NOSPLIT, $0-56
	ARGS4
	CMPQ CX, $2
	JLT q8x4_tail
q8x4_loop:
	// Even blocks into Y16..Y19, odd ones into Y28..Y31, as dotQ8VNNI.
	Q8CODES
	ROWS8(Y16, Y17, Y18, Y19)
	ADVANCE(34)
	Q8CODES
	ROWS8(Y28, Y29, Y30, Y31)
	ADVANCE(34)
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q8x4_loop
q8x4_tail:
	TESTQ CX, CX
	JEQ q8x4_done
	Q8CODES
	ROWS8(Y16, Y17, Y18, Y19)
q8x4_done:
	STORE4
