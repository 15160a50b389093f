//go:build !noasm

#include "textflag.h"

// The AVX-512 RotaryEmbedding rotations (fast_llm.go): the plain-Go
// loops' arithmetic, eight rotations at a time: each element widened to
// float64, y1 = x1·c − x2·s and y2 = x2·c + x1·s as two products and one
// add or subtract (no FMA: the reference rounds each product to float64),
// then rounded to float32 once.

// func ropeHalfAVX512(x1, x2, c, s, y1, y2 *float32, n int)
//
// The pairs (x1[i], x2[i]) for i < n, n > 0 a multiple of 8 (NeoX: the
// two halves of a head).
TEXT ·ropeHalfAVX512(SB), NOSPLIT, $0-56
	MOVQ x1+0(FP), SI
	MOVQ x2+8(FP), DI
	MOVQ c+16(FP), R8
	MOVQ s+24(FP), R9
	MOVQ y1+32(FP), R10
	MOVQ y2+40(FP), R11
	MOVQ n+48(FP), CX
	XORQ AX, AX

rhLoop:
	VCVTPS2PD (SI)(AX*4), Z0
	VCVTPS2PD (DI)(AX*4), Z1
	VCVTPS2PD (R8)(AX*4), Z2
	VCVTPS2PD (R9)(AX*4), Z3
	VMULPD Z2, Z0, Z4
	VMULPD Z3, Z1, Z5
	VSUBPD Z5, Z4, Z4
	VMULPD Z2, Z1, Z6
	VMULPD Z3, Z0, Z7
	VADDPD Z7, Z6, Z6
	VCVTPD2PS Z4, Y4
	VCVTPD2PS Z6, Y6
	VMOVUPS Y4, (R10)(AX*4)
	VMOVUPS Y6, (R11)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT rhLoop
	VZEROUPPER
	RET

// func ropePairsAVX512(x, c, s, y *float32, n int)
//
// The pairs (x[2i], x[2i+1]) for i < n, n > 0 a multiple of 8
// (interleaved). With cc = (c0, c0, c1, c1, …), ss = (−s0, s0, −s1, s1,
// …) and x' the pairs swapped, y = x·cc + x'·ss: x1·c + x2·(−s) is
// x1·c − x2·s exactly.
TEXT ·ropePairsAVX512(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ c+8(FP), R8
	MOVQ s+16(FP), R9
	MOVQ y+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ $0x80000000, AX
	VPBROADCASTQ AX, Z21 // the sign bit of the even elements
	XORQ AX, AX

rpLoop:
	// c and s as (c0, c0, c1, c1, …): each widened to 64 bits, then its
	// low half copied up.
	VPMOVZXDQ (R8)(AX*4), Z2
	VMOVSLDUP Z2, Z2
	VPMOVZXDQ (R9)(AX*4), Z3
	VMOVSLDUP Z3, Z3
	VPXORD Z21, Z3, Z3
	VCVTPS2PD Y2, Z4
	VEXTRACTF64X4 $1, Z2, Y5
	VCVTPS2PD Y5, Z5
	VCVTPS2PD Y3, Z6
	VEXTRACTF64X4 $1, Z3, Y7
	VCVTPS2PD Y7, Z7
	VCVTPS2PD (SI)(AX*8), Z0
	VCVTPS2PD 32(SI)(AX*8), Z1
	VPERMILPD $0x55, Z0, Z8
	VPERMILPD $0x55, Z1, Z9
	VMULPD Z4, Z0, Z0
	VMULPD Z6, Z8, Z8
	VADDPD Z8, Z0, Z0
	VMULPD Z5, Z1, Z1
	VMULPD Z7, Z9, Z9
	VADDPD Z9, Z1, Z1
	VCVTPD2PS Z0, Y0
	VCVTPD2PS Z1, Y1
	VMOVUPS Y0, (R10)(AX*8)
	VMOVUPS Y1, 32(R10)(AX*8)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT rpLoop
	VZEROUPPER
	RET
