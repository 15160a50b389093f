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
	VPXORD Y19, Y19, Y19

// ROW(a, s, d, shift, acc, t, u): one activation row's share of a block
// whose unsigned weight bytes are in Y1: bias (negated sum, shifted left
// by shift) plus VPDPBUSD, convert, times the activation scale, then
// accumulate times the weight scale.
#define ROW(a, s, d, shift, acc, t, u) \
	VPBROADCASTD s, t \
	VPSLLD $shift, t, t \
	VPDPBUSD a, Y1, t \
	VCVTDQ2PS t, t \
	VBROADCASTSS d, u \
	VMULPS u, t, t \
	VFMADD231PS Y6, t, acc

#define ROWS(shift) \
	ROW((DI), (R9), (R8), shift, Y16, Y20, Y24) \
	ROW((DI)(R10*1), (R9)(R12*1), (R8)(R12*1), shift, Y17, Y21, Y25) \
	ROW((R11), (R9)(R12*2), (R8)(R12*2), shift, Y18, Y22, Y26) \
	ROW((R11)(R10*1), (R14)(R12*1), (R13)(R12*1), shift, Y19, Y23, Y27)

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

#define STORE4 \
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
	TESTQ CX, CX
	JEQ q4x4_done
q4x4_loop:
	// Codes 0..15 as unsigned bytes; the -8 offset is the bias: 8 lanes
	// of the negated sum each.
	VBROADCASTI128 2(SI), Y1
	VPSRLVQ Y13, Y1, Y1
	VPAND Y15, Y1, Y1
	VPBROADCASTW (SI), X6
	VCVTPH2PS X6, Y6
	ROWS(0)
	ADVANCE(18)
	DECQ CX
	JNZ q4x4_loop
q4x4_done:
	STORE4

// func dotQ8VNNIx4(nb int, w *byte, qs *int8, d *float32, nsum *int32, k int, out *float32)
TEXT ·dotQ8VNNIx4(SB), NOSPLIT, $0-56
	ARGS4
	MOVL $0x80808080, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	TESTQ CX, CX
	JEQ q8x4_done
q8x4_loop:
	// w+128 as unsigned bytes; the +128·Σa it adds is cancelled by the
	// bias: 8 lanes of 16× the negated sum.
	VMOVDQU 2(SI), Y1
	VPXOR Y15, Y1, Y1
	VPBROADCASTW (SI), X6
	VCVTPH2PS X6, Y6
	ROWS(4)
	ADVANCE(34)
	DECQ CX
	JNZ q8x4_loop
q8x4_done:
	STORE4
