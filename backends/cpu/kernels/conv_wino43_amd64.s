//go:build !noasm

#include "textflag.h"

// WINOMASK sets kreg to the low min(max(cnt, 0), 16) bits (CX, R15 clobbered).
#define WINOMASK(cnt, kreg) \
	MOVQ cnt, CX; \
	XORQ R15, R15; \
	CMPQ CX, R15; \
	CMOVQLT R15, CX; \
	MOVQ $16, R15; \
	CMPQ CX, R15; \
	CMOVQGT R15, CX; \
	MOVL $1, R15; \
	SHLL CX, R15; \
	DECL R15; \
	KMOVW R15, kreg

// B43: Bᵀ of F(4×4, 3×3) on Z0-Z5 into Z6-Z11 (Z12-Z17 clobbered; Z26 = 2,
// Z27 = 4, Z28 = 5).
#define B43 \
	VMOVAPS Z4, Z6; \
	VFMADD231PS Z27, Z0, Z6; \
	VFNMADD231PS Z28, Z2, Z6; \
	VADDPS Z2, Z1, Z12; \
	VADDPS Z4, Z3, Z13; \
	VMOVAPS Z13, Z7; \
	VFNMADD231PS Z27, Z12, Z7; \
	VSUBPS Z2, Z1, Z14; \
	VSUBPS Z3, Z4, Z15; \
	VMOVAPS Z15, Z8; \
	VFMADD231PS Z27, Z14, Z8; \
	VSUBPS Z2, Z4, Z16; \
	VSUBPS Z1, Z3, Z17; \
	VMOVAPS Z16, Z9; \
	VFMADD231PS Z26, Z17, Z9; \
	VMOVAPS Z16, Z10; \
	VFNMADD231PS Z26, Z17, Z10; \
	VMOVAPS Z5, Z11; \
	VFMADD231PS Z27, Z1, Z11; \
	VFNMADD231PS Z28, Z3, Z11

// IN43ROW: one input row (byte offset R11 into the planes) transformed
// along its columns into tmp at toff.
#define IN43ROW(toff) \
	VMOVUPS.Z (AX)(R11*1), K1, Z0; \
	VMOVUPS.Z (BX)(R11*1), K1, Z1; \
	VMOVUPS.Z (DX)(R11*1), K1, Z2; \
	VMOVUPS.Z (SI)(R11*1), K1, Z3; \
	VMOVUPS.Z 4(AX)(R11*1), K1, Z4; \
	VMOVUPS.Z 4(BX)(R11*1), K1, Z5; \
	B43; \
	VMOVUPS Z6, (toff)(R13); \
	VMOVUPS Z7, (toff+64)(R13); \
	VMOVUPS Z8, (toff+128)(R13); \
	VMOVUPS Z9, (toff+192)(R13); \
	VMOVUPS Z10, (toff+256)(R13); \
	VMOVUPS Z11, (toff+320)(R13); \
	ADDQ R10, R11

// IN43COL: column b of tmp (byte offset boff) transformed along the rows
// into points 6a+b at R12 (a < 3) and R11 (a >= 3), stride R15 = 6·ldd.
#define IN43COL(boff) \
	VMOVUPS (boff)(R13), Z0; \
	VMOVUPS (boff+384)(R13), Z1; \
	VMOVUPS (boff+768)(R13), Z2; \
	VMOVUPS (boff+1152)(R13), Z3; \
	VMOVUPS (boff+1536)(R13), Z4; \
	VMOVUPS (boff+1920)(R13), Z5; \
	B43; \
	VMOVUPS Z6, K1, (R12); \
	VMOVUPS Z7, K1, (R12)(R9*1); \
	VMOVUPS Z8, K1, (R12)(R9*2); \
	LEAQ (R12)(R9*2), R11; \
	ADDQ R9, R11; \
	VMOVUPS Z9, K1, (R11); \
	VMOVUPS Z10, K1, (R11)(R9*1); \
	VMOVUPS Z11, K1, (R11)(R9*2); \
	ADDQ R8, R12

// func winoIn43_512(dst *float32, ldd int, p0, p1, p2, p3 *float32, lds, n int, consts *float32)
// WinoIn43 over 16 tiles at a time (the last ones masked): Bᵀ along each
// of the six rows into tmp (36 vectors), then along the columns into the
// 36 points. consts holds 2, 4, 5. tmp is the 2304-byte frame.
TEXT ·winoIn43_512(SB), $2304-72
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	ADDQ R9, R9 // 6·ldd bytes
	MOVQ p0+16(FP), AX
	MOVQ p1+24(FP), BX
	MOVQ p2+32(FP), DX
	MOVQ p3+40(FP), SI
	MOVQ lds+48(FP), R10
	SHLQ $2, R10
	MOVQ n+56(FP), R14
	LEAQ 0(SP), R13
	MOVQ consts+64(FP), CX
	VBROADCASTSS 0(CX), Z26
	VBROADCASTSS 4(CX), Z27
	VBROADCASTSS 8(CX), Z28
winoIn43_loop:
	WINOMASK(R14, K1)
	XORQ R11, R11
	IN43ROW(0)
	IN43ROW(384)
	IN43ROW(768)
	IN43ROW(1152)
	IN43ROW(1536)
	IN43ROW(1920)
	MOVQ DI, R12
	IN43COL(0)
	IN43COL(64)
	IN43COL(128)
	IN43COL(192)
	IN43COL(256)
	IN43COL(320)
	ADDQ $64, AX
	ADDQ $64, BX
	ADDQ $64, DX
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, R14
	JGT winoIn43_loop
	VZEROUPPER
	RET

// OUT43ROW: interleave the four column phases v0-v3 of one output row,
// add bias (Z25) and the residual (K7: all or none), floor at Z28 (0 with
// ReLU, -Inf without), store at the row pointer at off(R11) (residual at
// off(R9)) + R12, columns masked by K2-K5.
#define OUT43ROW(v0, v1, v2, v3, off) \
	VMOVAPS v0, Z16; \
	VPERMT2PS v2, Z29, Z16; \
	VMOVAPS v0, Z17; \
	VPERMT2PS v2, Z30, Z17; \
	VMOVAPS v1, Z18; \
	VPERMT2PS v3, Z29, Z18; \
	VMOVAPS v1, Z19; \
	VPERMT2PS v3, Z30, Z19; \
	VMOVAPS Z16, Z20; \
	VPERMT2PS Z18, Z29, Z20; \
	VPERMT2PS Z18, Z30, Z16; \
	VMOVAPS Z17, Z21; \
	VPERMT2PS Z19, Z29, Z21; \
	VPERMT2PS Z19, Z30, Z17; \
	MOVQ off(R9), DX; \
	ADDQ R12, DX; \
	KANDW K2, K7, K6; \
	VMOVUPS.Z (DX), K6, Z22; \
	VADDPS Z22, Z20, Z20; \
	KANDW K3, K7, K6; \
	VMOVUPS.Z 64(DX), K6, Z22; \
	VADDPS Z22, Z16, Z16; \
	KANDW K4, K7, K6; \
	VMOVUPS.Z 128(DX), K6, Z22; \
	VADDPS Z22, Z21, Z21; \
	KANDW K5, K7, K6; \
	VMOVUPS.Z 192(DX), K6, Z22; \
	VADDPS Z22, Z17, Z17; \
	VADDPS Z25, Z20, Z20; \
	VADDPS Z25, Z16, Z16; \
	VADDPS Z25, Z21, Z21; \
	VADDPS Z25, Z17, Z17; \
	VMAXPS Z20, Z28, Z20; \
	VMAXPS Z16, Z28, Z16; \
	VMAXPS Z21, Z28, Z21; \
	VMAXPS Z17, Z28, Z17; \
	MOVQ off(R11), DX; \
	ADDQ R12, DX; \
	VMOVUPS Z20, K2, (DX); \
	VMOVUPS Z16, K3, 64(DX); \
	VMOVUPS Z21, K4, 128(DX); \
	VMOVUPS Z17, K5, 192(DX)

// A43: Aᵀ of F(4×4, 3×3) on Z0-Z5 into Z6-Z9 (Z10-Z13 clobbered; Z24 = 8,
// Z26 = 2, Z27 = 4).
#define A43 \
	VADDPS Z2, Z1, Z10; \
	VSUBPS Z2, Z1, Z11; \
	VADDPS Z4, Z3, Z12; \
	VSUBPS Z4, Z3, Z13; \
	VADDPS Z10, Z0, Z6; \
	VADDPS Z12, Z6, Z6; \
	VMOVAPS Z11, Z7; \
	VFMADD231PS Z26, Z13, Z7; \
	VMOVAPS Z10, Z8; \
	VFMADD231PS Z27, Z12, Z8; \
	VADDPS Z5, Z11, Z9; \
	VFMADD231PS Z24, Z13, Z9

// OUT43PT: points 6a..6a+5 (at AX) transformed along b into tmp at toff.
#define OUT43PT(toff) \
	VMOVUPS.Z (AX), K1, Z0; \
	VMOVUPS.Z (AX)(R8*1), K1, Z1; \
	VMOVUPS.Z (AX)(R8*2), K1, Z2; \
	VMOVUPS.Z (AX)(BX*1), K1, Z3; \
	VMOVUPS.Z (AX)(R8*4), K1, Z4; \
	VMOVUPS.Z (AX)(DI*1), K1, Z5; \
	A43; \
	VMOVUPS Z6, (toff)(R13); \
	VMOVUPS Z7, (toff+64)(R13); \
	VMOVUPS Z8, (toff+128)(R13); \
	VMOVUPS Z9, (toff+192)(R13); \
	LEAQ (AX)(BX*2), AX

// OUT43Q: column phase q (byte offset qoff in tmp) along a into y0..y3.
#define OUT43Q(qoff, y0, y1, y2, y3) \
	VMOVUPS (qoff)(R13), Z16; \
	VMOVUPS (qoff+256)(R13), Z17; \
	VMOVUPS (qoff+512)(R13), Z18; \
	VMOVUPS (qoff+768)(R13), Z19; \
	VMOVUPS (qoff+1024)(R13), Z20; \
	VMOVUPS (qoff+1280)(R13), Z21; \
	VADDPS Z18, Z17, Z22; \
	VSUBPS Z18, Z17, Z23; \
	VADDPS Z20, Z19, Z31; \
	VSUBPS Z20, Z19, Z19; \
	VADDPS Z22, Z16, y0; \
	VADDPS Z31, y0, y0; \
	VMOVAPS Z23, y1; \
	VFMADD231PS Z26, Z19, y1; \
	VMOVAPS Z22, y2; \
	VFMADD231PS Z27, Z31, y2; \
	VADDPS Z21, Z23, y3; \
	VFMADD231PS Z24, Z19, y3

// func winoOut43_512(ys, zs **float32, src *float32, lds, n, cols int, bias float32, flags int, consts *float32, idx *int32)
// WinoOut43 over 16 tiles (64 output columns) at a time: Aᵀ along each
// point row into tmp (24 vectors), then along the columns into the 4×4
// outputs (row r, column phase q in Z(4r+q)); each present row (flags bit
// 4+r) is interleaved, finished and stored. flags&1: residual rows in zs;
// flags&2: ReLU. consts holds 2, 4, 8, then 0 and -Inf (the floors). tmp
// is the 1536-byte frame.
TEXT ·winoOut43_512(SB), $1536-80
	MOVQ ys+0(FP), R11
	MOVQ zs+8(FP), R9
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), BX // 3·lds bytes
	LEAQ (R8)(R8*4), DI // 5·lds bytes
	MOVQ n+32(FP), R14
	MOVQ cols+40(FP), R10
	VBROADCASTSS bias+48(FP), Z25
	LEAQ 0(SP), R13
	MOVQ consts+64(FP), CX
	VBROADCASTSS 0(CX), Z26
	VBROADCASTSS 4(CX), Z27
	VBROADCASTSS 8(CX), Z24
	VBROADCASTSS 16(CX), Z28
	MOVQ flags+56(FP), DX
	TESTQ $2, DX
	JEQ winoOut43_floor
	VBROADCASTSS 12(CX), Z28
winoOut43_floor:
	MOVQ $0, R15
	TESTQ $1, DX
	JEQ winoOut43_noz
	MOVQ $0xffff, R15
winoOut43_noz:
	KMOVW R15, K7
	MOVQ idx+72(FP), CX
	VMOVDQU32 (CX), Z29
	VMOVDQU32 64(CX), Z30
	XORQ R12, R12
winoOut43_loop:
	WINOMASK(R14, K1)
	WINOMASK(R10, K2)
	LEAQ -16(R10), DX
	WINOMASK(DX, K3)
	LEAQ -32(R10), DX
	WINOMASK(DX, K4)
	LEAQ -48(R10), DX
	WINOMASK(DX, K5)
	MOVQ SI, AX
	OUT43PT(0)
	OUT43PT(256)
	OUT43PT(512)
	OUT43PT(768)
	OUT43PT(1024)
	OUT43PT(1280)
	OUT43Q(0, Z0, Z4, Z8, Z12)
	OUT43Q(64, Z1, Z5, Z9, Z13)
	OUT43Q(128, Z2, Z6, Z10, Z14)
	OUT43Q(192, Z3, Z7, Z11, Z15)
	MOVQ flags+56(FP), CX
	TESTQ $16, CX
	JEQ winoOut43_r1
	OUT43ROW(Z0, Z1, Z2, Z3, 0)
winoOut43_r1:
	MOVQ flags+56(FP), CX
	TESTQ $32, CX
	JEQ winoOut43_r2
	OUT43ROW(Z4, Z5, Z6, Z7, 8)
winoOut43_r2:
	MOVQ flags+56(FP), CX
	TESTQ $64, CX
	JEQ winoOut43_r3
	OUT43ROW(Z8, Z9, Z10, Z11, 16)
winoOut43_r3:
	MOVQ flags+56(FP), CX
	TESTQ $128, CX
	JEQ winoOut43_next
	OUT43ROW(Z12, Z13, Z14, Z15, 24)
winoOut43_next:
	ADDQ $64, SI
	ADDQ $256, R12
	SUBQ $64, R10
	SUBQ $16, R14
	JGT winoOut43_loop
	VZEROUPPER
	RET
