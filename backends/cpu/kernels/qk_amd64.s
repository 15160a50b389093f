//go:build !noasm

#include "textflag.h"
#include "prefetch_amd64.h"

// K-quant row dot products with AVX-512 VNNI, one 256-element super-block
// per iteration (see qk.go for the algebra). The integer dot of every
// sub-block lands in lanes of VPDPBUSD accumulators; the per-sub-block
// float scales d·sc·da are computed once per super-block as one vector and
// spread over those lanes with VPERMPS; one FMA per accumulator adds them
// up. The horizontal sum is taken once, after the last super-block.
//
// Registers: SI weights, DI activation codes, R8 and R9 the two float
// activation arrays, CX super-blocks left; Z16 the main float sum, Z17 the
// min (Q4_K) or offset (Q6_K) sum.

// HSUM2 returns Σ Z16 + sign·Σ Z17 (sign through op: VADDPS or VSUBPS).
#define HSUM2(op) \
	op Z17, Z16, Z16 \
	VEXTRACTF64X4 $1, Z16, Y1 \
	VADDPS Y1, Y16, Y1 \
	VEXTRACTF128 $1, Y1, X0 \
	VADDPS X1, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0 \
	VMOVSS X0, ret+40(FP) \
	VZEROUPPER \
	RET


// func dotQ4K512(nsb int, w *byte, qs *int8, da *float32, sig *float32) float32
//
// Per super-block (144 bytes: d, dmin, 12 bytes of scales/mins, 128 of
// codes): the 6-bit scales sc0..7 and mins m0..7 are unpacked with dword
// shifts and masks (X8 = 0x0F, X9 = 0x30, X10 = 0x3F bytes) into Y5 and
// Y6 as floats; Y5 = (sc·d)·da (da: the first 8 of the 16 floats
// [da0..7, σ0..7] a super-block at R8; sig is unused) are the main
// scales, and Y17 += (m·dmin)·σ (fused) the min terms. The rounding is
// exactly dotQ4K512x4's, so a row's sum does not depend on how many
// activation rows ran with it. The codes are two 64-byte loads; low and
// high nibbles of each are sub-blocks (0, 2), (1, 3), (4, 6), (5, 7),
// against activations in that order (q4kOrder). Z24..Z27 = VPERMPS
// indices, Z29 = 0x0F bytes.
TEXT ·dotQ4K512(SB), NOSPLIT, $0-44
	MOVQ nsb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ qs+16(FP), DI
	MOVQ da+24(FP), R8
	MOVQ sig+32(FP), R9
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X8
	VPBROADCASTD X8, X8
	VPBROADCASTD X8, Z29
	MOVL $0x30303030, AX
	VMOVD AX, X9
	VPBROADCASTD X9, X9
	MOVL $0x3F3F3F3F, AX
	VMOVD AX, X10
	VPBROADCASTD X10, X10
	VMOVDQU32 ·qkIdx+0(SB), Z24
	VMOVDQU32 ·qkIdx+64(SB), Z25
	VMOVDQU32 ·qkIdx+128(SB), Z26
	VMOVDQU32 ·qkIdx+192(SB), Z27
q4k_loop:
	// Scales and mins: X1 = dwords W0 W1 W2 of the 12 bytes; Y5 = sc·d·da,
	// Y17 += m·dmin·σ.
	VMOVDQU 4(SI), X1
	VPSHUFD $0xAA, X1, X2
	VPSRLD $4, X2, X3
	VPBLENDD $2, X3, X2, X2
	VPSRLD $2, X1, X4
	VPAND X9, X4, X4
	VPTERNLOGD $0xEC, X8, X4, X2
	VPAND X10, X1, X1
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
	VMULPS Y3, Y5, Y5
	VMULPS Y7, Y6, Y6
	VMULPS (R8), Y5, Y5
	VFMADD231PS 32(R8), Y6, Y17
	// Codes.
	VMOVDQU64 16(SI), Z1
	VMOVDQU64 80(SI), Z2
	VPSRLW $4, Z1, Z3
	VPSRLW $4, Z2, Z4
	VPANDD Z29, Z1, Z1
	VPANDD Z29, Z2, Z2
	VPANDD Z29, Z3, Z3
	VPANDD Z29, Z4, Z4
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPDPBUSD (DI), Z1, Z18
	VPDPBUSD 64(DI), Z3, Z19
	VPDPBUSD 128(DI), Z2, Z20
	VPDPBUSD 192(DI), Z4, Z21
	VCVTDQ2PS Z18, Z18
	VCVTDQ2PS Z19, Z19
	VCVTDQ2PS Z20, Z20
	VCVTDQ2PS Z21, Z21
	VPERMPS Z5, Z24, Z12
	VPERMPS Z5, Z25, Z13
	VPERMPS Z5, Z26, Z14
	VPERMPS Z5, Z27, Z15
	VFMADD231PS Z12, Z18, Z16
	VFMADD231PS Z13, Z19, Z16
	VFMADD231PS Z14, Z20, Z16
	VFMADD231PS Z15, Z21, Z16
	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ $64, R8
	DECQ CX
	JNZ q4k_loop
	HSUM2(VSUBPS)

// Q6HALF: codes of one 128-element half h (ql at 64h, qh at 128+32h):
// the low 256 bits of Z1 get ql[l], the high ql[32+l]; qh goes to both
// halves, shifted right by 0 and 2 (Z26), so one set of masks serves k = 0,
// 1 (low nibble | (qh&3)<<4) and k = 2, 3 (high nibble | qh&0x30). The
// two 64-code vectors are elements 128h..128h+63 and 128h+64..128h+127.
// Z27 = 0x03, Z28 = 0x30, Z29 = 0x0F bytes.
#define Q6HALF(h, rlo, rhi) \
	VMOVDQU64 (64*h)(SI), Z1 \
	VBROADCASTI64X4 (128+32*h)(SI), Z2 \
	VPSRLVQ Z26, Z2, Z2 \
	VPSRLW $4, Z1, Z3 \
	VPANDD Z27, Z2, Z4 \
	VPSLLW $4, Z4, Z4 \
	VPTERNLOGD $0xEC, Z29, Z4, Z1 \
	VPANDD Z28, Z2, Z2 \
	VPTERNLOGD $0xEC, Z29, Z2, Z3 \
	VPXORD rlo, rlo, rlo \
	VPXORD rhi, rhi, rhi \
	VPDPBUSD (128*h)(DI), Z1, rlo \
	VPDPBUSD (128*h+64)(DI), Z3, rhi

// func dotQ6K512(nsb int, w *byte, qs *int8, d16 *float32, b16 *float32) float32
//
// Per super-block (210 bytes: ql[128], qh[64], sc[16], d): f = d·sc·da
// per sub-block of 16 in Z5; the offset term f·β into Z17; the four code
// vectors of 64 elements are sub-blocks 4i..4i+3, 4 lanes each, scaled
// through VPERMPS indices Z20..Z23.
TEXT ·dotQ6K512(SB), NOSPLIT, $0-44
	MOVQ nsb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ qs+16(FP), DI
	MOVQ d16+24(FP), R8
	MOVQ b16+32(FP), R9
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X0
	VPBROADCASTD X0, Z29
	MOVL $0x30303030, AX
	VMOVD AX, X0
	VPBROADCASTD X0, Z28
	MOVL $0x03030303, AX
	VMOVD AX, X0
	VPBROADCASTD X0, Z27
	MOVQ $2, AX
	VMOVQ AX, X0
	VPBROADCASTQ X0, Y0
	VPXORD Y1, Y1, Y1
	VINSERTI64X4 $1, Y0, Z1, Z26
	VMOVDQU32 ·qkIdx+256(SB), Z20
	VMOVDQU32 ·qkIdx+320(SB), Z21
	VMOVDQU32 ·qkIdx+384(SB), Z22
	VMOVDQU32 ·qkIdx+448(SB), Z23
q6k_loop:
	VPMOVSXBD 192(SI), Z5
	VCVTDQ2PS Z5, Z5
	VPBROADCASTW 208(SI), Y7
	VCVTPH2PS Y7, Z7
	VMULPS Z7, Z5, Z5
	VMULPS (R8), Z5, Z5
	VFMADD231PS (R9), Z5, Z17
	Q6HALF(0, Z8, Z9)
	Q6HALF(1, Z10, Z11)
	VCVTDQ2PS Z8, Z8
	VCVTDQ2PS Z9, Z9
	VCVTDQ2PS Z10, Z10
	VCVTDQ2PS Z11, Z11
	VPERMPS Z5, Z20, Z12
	VPERMPS Z5, Z21, Z13
	VPERMPS Z5, Z22, Z14
	VPERMPS Z5, Z23, Z15
	VFMADD231PS Z12, Z8, Z16
	VFMADD231PS Z13, Z9, Z16
	VFMADD231PS Z14, Z10, Z16
	VFMADD231PS Z15, Z11, Z16
	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ $64, R8
	ADDQ $64, R9
	DECQ CX
	JNZ q6k_loop
	HSUM2(VADDPS)

// func dotQ4K512rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, y *float32)
//
// dotQ4K512 for nr consecutive weight rows (rb bytes apart) against one
// activation row, y[i] = row i · activations (decode GEMV, one call a task).
TEXT ·dotQ4K512rows(SB), NOSPLIT, $0-64
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X8
	VPBROADCASTD X8, X8
	VPBROADCASTD X8, Z29
	MOVL $0x30303030, AX
	VMOVD AX, X9
	VPBROADCASTD X9, X9
	MOVL $0x3F3F3F3F, AX
	VMOVD AX, X10
	VPBROADCASTD X10, X10
	VMOVDQU32 ·qkIdx+0(SB), Z24
	VMOVDQU32 ·qkIdx+64(SB), Z25
	VMOVDQU32 ·qkIdx+128(SB), Z26
	VMOVDQU32 ·qkIdx+192(SB), Z27
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+56(FP), R11
	TESTQ R12, R12
	JEQ q4kr_end
q4kr_row:
	MOVQ nsb+8(FP), CX
	MOVQ R13, SI
	MOVQ qs+32(FP), DI
	MOVQ s1+40(FP), R8
	MOVQ s2+48(FP), R9
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
q4kr_loop:
	PREFETCHT0 QPF(SI)
	PREFETCHT0 QPF+64(SI)
	PREFETCHT0 QPF+128(SI)
	// Scales and mins: X1 = dwords W0 W1 W2 of the 12 bytes; Y5 = sc·d·da,
	// Y17 += m·dmin·σ.
	VMOVDQU 4(SI), X1
	VPSHUFD $0xAA, X1, X2
	VPSRLD $4, X2, X3
	VPBLENDD $2, X3, X2, X2
	VPSRLD $2, X1, X4
	VPAND X9, X4, X4
	VPTERNLOGD $0xEC, X8, X4, X2
	VPAND X10, X1, X1
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
	VMULPS Y3, Y5, Y5
	VMULPS Y7, Y6, Y6
	VMULPS (R8), Y5, Y5
	VFMADD231PS 32(R8), Y6, Y17
	// Codes.
	VMOVDQU64 16(SI), Z1
	VMOVDQU64 80(SI), Z2
	VPSRLW $4, Z1, Z3
	VPSRLW $4, Z2, Z4
	VPANDD Z29, Z1, Z1
	VPANDD Z29, Z2, Z2
	VPANDD Z29, Z3, Z3
	VPANDD Z29, Z4, Z4
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPDPBUSD (DI), Z1, Z18
	VPDPBUSD 64(DI), Z3, Z19
	VPDPBUSD 128(DI), Z2, Z20
	VPDPBUSD 192(DI), Z4, Z21
	VCVTDQ2PS Z18, Z18
	VCVTDQ2PS Z19, Z19
	VCVTDQ2PS Z20, Z20
	VCVTDQ2PS Z21, Z21
	VPERMPS Z5, Z24, Z12
	VPERMPS Z5, Z25, Z13
	VPERMPS Z5, Z26, Z14
	VPERMPS Z5, Z27, Z15
	VFMADD231PS Z12, Z18, Z16
	VFMADD231PS Z13, Z19, Z16
	VFMADD231PS Z14, Z20, Z16
	VFMADD231PS Z15, Z21, Z16
	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ $64, R8
	DECQ CX
	JNZ q4kr_loop
	VSUBPS Z17, Z16, Z16
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
	JNZ q4kr_row
q4kr_end:
	VZEROUPPER
	RET

// func dotQ6K512rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, y *float32)
//
// dotQ6K512 for nr consecutive weight rows (rb bytes apart) against one
// activation row, y[i] = row i · activations (decode GEMV, one call a task).
TEXT ·dotQ6K512rows(SB), NOSPLIT, $0-64
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X0
	VPBROADCASTD X0, Z29
	MOVL $0x30303030, AX
	VMOVD AX, X0
	VPBROADCASTD X0, Z28
	MOVL $0x03030303, AX
	VMOVD AX, X0
	VPBROADCASTD X0, Z27
	MOVQ $2, AX
	VMOVQ AX, X0
	VPBROADCASTQ X0, Y0
	VPXORD Y1, Y1, Y1
	VINSERTI64X4 $1, Y0, Z1, Z26
	VMOVDQU32 ·qkIdx+256(SB), Z20
	VMOVDQU32 ·qkIdx+320(SB), Z21
	VMOVDQU32 ·qkIdx+384(SB), Z22
	VMOVDQU32 ·qkIdx+448(SB), Z23
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+56(FP), R11
	TESTQ R12, R12
	JEQ q6kr_end
q6kr_row:
	MOVQ nsb+8(FP), CX
	MOVQ R13, SI
	MOVQ qs+32(FP), DI
	MOVQ s1+40(FP), R8
	MOVQ s2+48(FP), R9
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
q6kr_loop:
	PREFETCHT0 QPF(SI)
	PREFETCHT0 QPF+64(SI)
	PREFETCHT0 QPF+128(SI)
	PREFETCHT0 QPF+192(SI)
	VPMOVSXBD 192(SI), Z5
	VCVTDQ2PS Z5, Z5
	VPBROADCASTW 208(SI), Y7
	VCVTPH2PS Y7, Z7
	VMULPS Z7, Z5, Z5
	VMULPS (R8), Z5, Z5
	VFMADD231PS (R9), Z5, Z17
	Q6HALF(0, Z8, Z9)
	Q6HALF(1, Z10, Z11)
	VCVTDQ2PS Z8, Z8
	VCVTDQ2PS Z9, Z9
	VCVTDQ2PS Z10, Z10
	VCVTDQ2PS Z11, Z11
	VPERMPS Z5, Z20, Z12
	VPERMPS Z5, Z21, Z13
	VPERMPS Z5, Z22, Z14
	VPERMPS Z5, Z23, Z15
	VFMADD231PS Z12, Z8, Z16
	VFMADD231PS Z13, Z9, Z16
	VFMADD231PS Z14, Z10, Z16
	VFMADD231PS Z15, Z11, Z16
	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ $64, R8
	ADDQ $64, R9
	DECQ CX
	JNZ q6kr_loop
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
	JNZ q6kr_row
q6kr_end:
	VZEROUPPER
	RET
