//go:build !noasm

#include "textflag.h"

// Half-weight (F16 / BF16) dot-product micro-kernels; see f16.go.
//
// Each weight element is widened to float32 in a register: VCVTPH2PS for
// F16; for BF16 a zero extension of the 16-bit words to 32 bits and a left
// shift by 16 (bf16 is the top half of an f32). Sums are accumulated in
// float32 lanes along k and reduced horizontally once at the end.
//
// Registers: CX = k, BX = element index, R8-R11 = weight rows 0-3,
// SI/DX/R12/R13 = activation rows 0-3, DI = out.

#define LOADW \
	MOVQ k+0(FP), CX \
	MOVQ w+8(FP), AX \
	MOVQ 0(AX), R8 \
	MOVQ 8(AX), R9 \
	MOVQ 16(AX), R10 \
	MOVQ 24(AX), R11 \
	XORQ BX, BX

#define LOADX4 \
	MOVQ x+16(FP), AX \
	MOVQ 0(AX), SI \
	MOVQ 8(AX), DX \
	MOVQ 16(AX), R12 \
	MOVQ 24(AX), R13

// Widen 16 halves at mem into zmm z (AVX-512) or 8 into ymm y (AVX2).
#define CVTF16(mem, z) VCVTPH2PS mem, z
#define CVTBF16(mem, z) \
	VPMOVZXWD mem, z \
	VPSLLD $16, z, z

// REDZ sums the 16 lanes of zs into the 4 lanes of xd (xd < X15; X15 is
// clobbered).
#define REDZ(zs, ys, yd, xd) \
	VEXTRACTF64X4 $1, zs, yd \
	VADDPS ys, yd, yd \
	VEXTRACTF128 $1, yd, X15 \
	VADDPS X15, xd, xd

// REDY sums the 8 lanes of ys into the 4 lanes of xs.
#define REDY(ys, xs) \
	VEXTRACTF128 $1, ys, X15 \
	VADDPS X15, xs, xs

// HADD4 leaves the full sums of xa, xb, xc, xd in the lanes of xa.
#define HADD4(xa, xb, xc, xd) \
	VHADDPS xb, xa, xa \
	VHADDPS xd, xc, xc \
	VHADDPS xc, xa, xa

// ---- AVX-512 GEMV: one activation row, four weight rows, 16 per step.
// One accumulator per weight row, as in the GEMM below, so that a row's
// sums round the same at M = 1 and in a batch (speculative decoding);
// two steps per iteration still keep four FMA chains in flight.

// func hgemvF16AVX512(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)
TEXT ·hgemvF16AVX512(SB), NOSPLIT, $0-32
	LOADW
	MOVQ x+16(FP), SI
	MOVQ out+24(FP), DI
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	CMPQ CX, $32
	JB   gv16one

gv16loop2:
	PREFETCHT0 1024(R8)(BX*2)
	PREFETCHT0 1024(R9)(BX*2)
	PREFETCHT0 1024(R10)(BX*2)
	PREFETCHT0 1024(R11)(BX*2)
	VMOVUPS (SI)(BX*4), Z4
	VMOVUPS 64(SI)(BX*4), Z9
	CVTF16((R8)(BX*2), Z5)
	CVTF16((R9)(BX*2), Z6)
	CVTF16((R10)(BX*2), Z7)
	CVTF16((R11)(BX*2), Z8)
	VFMADD231PS Z5, Z4, Z0
	VFMADD231PS Z6, Z4, Z1
	VFMADD231PS Z7, Z4, Z2
	VFMADD231PS Z8, Z4, Z3
	CVTF16(32(R8)(BX*2), Z10)
	CVTF16(32(R9)(BX*2), Z11)
	CVTF16(32(R10)(BX*2), Z12)
	CVTF16(32(R11)(BX*2), Z13)
	VFMADD231PS Z10, Z9, Z0
	VFMADD231PS Z11, Z9, Z1
	VFMADD231PS Z12, Z9, Z2
	VFMADD231PS Z13, Z9, Z3
	ADDQ $32, BX
	LEAQ 32(BX), AX
	CMPQ AX, CX
	JBE  gv16loop2

gv16one:
	CMPQ BX, CX
	JAE  gv16sum
	VMOVUPS (SI)(BX*4), Z4
	CVTF16((R8)(BX*2), Z5)
	CVTF16((R9)(BX*2), Z6)
	CVTF16((R10)(BX*2), Z7)
	CVTF16((R11)(BX*2), Z8)
	VFMADD231PS Z5, Z4, Z0
	VFMADD231PS Z6, Z4, Z1
	VFMADD231PS Z7, Z4, Z2
	VFMADD231PS Z8, Z4, Z3

gv16sum:

gv16done:
	REDZ(Z0, Y0, Y4, X4)
	REDZ(Z1, Y1, Y5, X5)
	REDZ(Z2, Y2, Y6, X6)
	REDZ(Z3, Y3, Y7, X7)
	HADD4(X4, X5, X6, X7)
	VMOVUPS X4, (DI)
	VZEROUPPER
	RET

// func hgemvBF16AVX512(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)
TEXT ·hgemvBF16AVX512(SB), NOSPLIT, $0-32
	LOADW
	MOVQ x+16(FP), SI
	MOVQ out+24(FP), DI
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	CMPQ CX, $32
	JB   gvb16one

gvb16loop2:
	PREFETCHT0 1024(R8)(BX*2)
	PREFETCHT0 1024(R9)(BX*2)
	PREFETCHT0 1024(R10)(BX*2)
	PREFETCHT0 1024(R11)(BX*2)
	VMOVUPS (SI)(BX*4), Z4
	VMOVUPS 64(SI)(BX*4), Z9
	CVTBF16((R8)(BX*2), Z5)
	CVTBF16((R9)(BX*2), Z6)
	CVTBF16((R10)(BX*2), Z7)
	CVTBF16((R11)(BX*2), Z8)
	VFMADD231PS Z5, Z4, Z0
	VFMADD231PS Z6, Z4, Z1
	VFMADD231PS Z7, Z4, Z2
	VFMADD231PS Z8, Z4, Z3
	CVTBF16(32(R8)(BX*2), Z10)
	CVTBF16(32(R9)(BX*2), Z11)
	CVTBF16(32(R10)(BX*2), Z12)
	CVTBF16(32(R11)(BX*2), Z13)
	VFMADD231PS Z10, Z9, Z0
	VFMADD231PS Z11, Z9, Z1
	VFMADD231PS Z12, Z9, Z2
	VFMADD231PS Z13, Z9, Z3
	ADDQ $32, BX
	LEAQ 32(BX), AX
	CMPQ AX, CX
	JBE  gvb16loop2

gvb16one:
	CMPQ BX, CX
	JAE  gvb16sum
	VMOVUPS (SI)(BX*4), Z4
	CVTBF16((R8)(BX*2), Z5)
	CVTBF16((R9)(BX*2), Z6)
	CVTBF16((R10)(BX*2), Z7)
	CVTBF16((R11)(BX*2), Z8)
	VFMADD231PS Z5, Z4, Z0
	VFMADD231PS Z6, Z4, Z1
	VFMADD231PS Z7, Z4, Z2
	VFMADD231PS Z8, Z4, Z3

gvb16sum:

gvb16done:
	REDZ(Z0, Y0, Y4, X4)
	REDZ(Z1, Y1, Y5, X5)
	REDZ(Z2, Y2, Y6, X6)
	REDZ(Z3, Y3, Y7, X7)
	HADD4(X4, X5, X6, X7)
	VMOVUPS X4, (DI)
	VZEROUPPER
	RET

// ---- AVX-512 GEMM: four activation rows × four weight rows. Z16-Z31
// accumulate (Z16+4m+n for activation row m, weight row n).

#define FMA4x4 \
	VFMADD231PS Z4, Z0, Z16 \
	VFMADD231PS Z5, Z0, Z17 \
	VFMADD231PS Z6, Z0, Z18 \
	VFMADD231PS Z7, Z0, Z19 \
	VFMADD231PS Z4, Z1, Z20 \
	VFMADD231PS Z5, Z1, Z21 \
	VFMADD231PS Z6, Z1, Z22 \
	VFMADD231PS Z7, Z1, Z23 \
	VFMADD231PS Z4, Z2, Z24 \
	VFMADD231PS Z5, Z2, Z25 \
	VFMADD231PS Z6, Z2, Z26 \
	VFMADD231PS Z7, Z2, Z27 \
	VFMADD231PS Z4, Z3, Z28 \
	VFMADD231PS Z5, Z3, Z29 \
	VFMADD231PS Z6, Z3, Z30 \
	VFMADD231PS Z7, Z3, Z31

#define ZERO16 \
	VXORPS Z16, Z16, Z16 \
	VMOVAPS Z16, Z17 \
	VMOVAPS Z16, Z18 \
	VMOVAPS Z16, Z19 \
	VMOVAPS Z16, Z20 \
	VMOVAPS Z16, Z21 \
	VMOVAPS Z16, Z22 \
	VMOVAPS Z16, Z23 \
	VMOVAPS Z16, Z24 \
	VMOVAPS Z16, Z25 \
	VMOVAPS Z16, Z26 \
	VMOVAPS Z16, Z27 \
	VMOVAPS Z16, Z28 \
	VMOVAPS Z16, Z29 \
	VMOVAPS Z16, Z30 \
	VMOVAPS Z16, Z31

#define LOADX512 \
	VMOVUPS (SI)(BX*4), Z0 \
	VMOVUPS (DX)(BX*4), Z1 \
	VMOVUPS (R12)(BX*4), Z2 \
	VMOVUPS (R13)(BX*4), Z3

// STORE4x4 reduces the 16 accumulators into out[0:16].
#define STORE4x4 \
	MOVQ out+24(FP), DI \
	REDZ(Z16, Y16, Y8, X8) \
	REDZ(Z17, Y17, Y9, X9) \
	REDZ(Z18, Y18, Y10, X10) \
	REDZ(Z19, Y19, Y11, X11) \
	HADD4(X8, X9, X10, X11) \
	VMOVUPS X8, 0(DI) \
	REDZ(Z20, Y20, Y8, X8) \
	REDZ(Z21, Y21, Y9, X9) \
	REDZ(Z22, Y22, Y10, X10) \
	REDZ(Z23, Y23, Y11, X11) \
	HADD4(X8, X9, X10, X11) \
	VMOVUPS X8, 16(DI) \
	REDZ(Z24, Y24, Y8, X8) \
	REDZ(Z25, Y25, Y9, X9) \
	REDZ(Z26, Y26, Y10, X10) \
	REDZ(Z27, Y27, Y11, X11) \
	HADD4(X8, X9, X10, X11) \
	VMOVUPS X8, 32(DI) \
	REDZ(Z28, Y28, Y8, X8) \
	REDZ(Z29, Y29, Y9, X9) \
	REDZ(Z30, Y30, Y10, X10) \
	REDZ(Z31, Y31, Y11, X11) \
	HADD4(X8, X9, X10, X11) \
	VMOVUPS X8, 48(DI)

// func hgemmF16AVX512(k int, w *[4]unsafe.Pointer, x *[4]*float32, out *[16]float32)
TEXT ·hgemmF16AVX512(SB), NOSPLIT, $0-32
	LOADW
	LOADX4
	ZERO16
	TESTQ CX, CX
	JEQ   gm16done

gm16loop:
	LOADX512
	CVTF16((R8)(BX*2), Z4)
	CVTF16((R9)(BX*2), Z5)
	CVTF16((R10)(BX*2), Z6)
	CVTF16((R11)(BX*2), Z7)
	FMA4x4
	ADDQ $16, BX
	CMPQ BX, CX
	JB   gm16loop

gm16done:
	STORE4x4
	VZEROUPPER
	RET

// func hgemmBF16AVX512(k int, w *[4]unsafe.Pointer, x *[4]*float32, out *[16]float32)
TEXT ·hgemmBF16AVX512(SB), NOSPLIT, $0-32
	LOADW
	LOADX4
	ZERO16
	TESTQ CX, CX
	JEQ   gmb16done

gmb16loop:
	LOADX512
	CVTBF16((R8)(BX*2), Z4)
	CVTBF16((R9)(BX*2), Z5)
	CVTBF16((R10)(BX*2), Z6)
	CVTBF16((R11)(BX*2), Z7)
	FMA4x4
	ADDQ $16, BX
	CMPQ BX, CX
	JB   gmb16loop

gmb16done:
	STORE4x4
	VZEROUPPER
	RET

// ---- AVX2 GEMV: one activation row, four weight rows, 8 per step.

// func hgemvF16AVX2(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)
TEXT ·hgemvF16AVX2(SB), NOSPLIT, $0-32
	LOADW
	MOVQ x+16(FP), SI
	MOVQ out+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ CX, CX
	JEQ   gv8done

gv8loop:
	VMOVUPS (SI)(BX*4), Y4
	CVTF16((R8)(BX*2), Y5)
	CVTF16((R9)(BX*2), Y6)
	CVTF16((R10)(BX*2), Y7)
	CVTF16((R11)(BX*2), Y8)
	VFMADD231PS Y5, Y4, Y0
	VFMADD231PS Y6, Y4, Y1
	VFMADD231PS Y7, Y4, Y2
	VFMADD231PS Y8, Y4, Y3
	ADDQ $8, BX
	CMPQ BX, CX
	JB   gv8loop

gv8done:
	REDY(Y0, X0)
	REDY(Y1, X1)
	REDY(Y2, X2)
	REDY(Y3, X3)
	HADD4(X0, X1, X2, X3)
	VMOVUPS X0, (DI)
	VZEROUPPER
	RET

// func hgemvBF16AVX2(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)
TEXT ·hgemvBF16AVX2(SB), NOSPLIT, $0-32
	LOADW
	MOVQ x+16(FP), SI
	MOVQ out+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ CX, CX
	JEQ   gvb8done

gvb8loop:
	VMOVUPS (SI)(BX*4), Y4
	CVTBF16((R8)(BX*2), Y5)
	CVTBF16((R9)(BX*2), Y6)
	CVTBF16((R10)(BX*2), Y7)
	CVTBF16((R11)(BX*2), Y8)
	VFMADD231PS Y5, Y4, Y0
	VFMADD231PS Y6, Y4, Y1
	VFMADD231PS Y7, Y4, Y2
	VFMADD231PS Y8, Y4, Y3
	ADDQ $8, BX
	CMPQ BX, CX
	JB   gvb8loop

gvb8done:
	REDY(Y0, X0)
	REDY(Y1, X1)
	REDY(Y2, X2)
	REDY(Y3, X3)
	HADD4(X0, X1, X2, X3)
	VMOVUPS X0, (DI)
	VZEROUPPER
	RET

// ---- AVX2 GEMM: two activation rows × four weight rows. Y8-Y15 would
// be all the accumulators, but X15 is REDY's scratch: accumulate in
// Y6-Y13 (Y6+4m+n), weights in Y2-Y5, activations in Y0, Y1.

#define FMA2x4 \
	VFMADD231PS Y2, Y0, Y6 \
	VFMADD231PS Y3, Y0, Y7 \
	VFMADD231PS Y4, Y0, Y8 \
	VFMADD231PS Y5, Y0, Y9 \
	VFMADD231PS Y2, Y1, Y10 \
	VFMADD231PS Y3, Y1, Y11 \
	VFMADD231PS Y4, Y1, Y12 \
	VFMADD231PS Y5, Y1, Y13

#define ZERO8 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7 \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11 \
	VXORPS Y12, Y12, Y12 \
	VXORPS Y13, Y13, Y13

#define STORE2x4 \
	MOVQ out+24(FP), DI \
	REDY(Y6, X6) \
	REDY(Y7, X7) \
	REDY(Y8, X8) \
	REDY(Y9, X9) \
	HADD4(X6, X7, X8, X9) \
	VMOVUPS X6, 0(DI) \
	REDY(Y10, X10) \
	REDY(Y11, X11) \
	REDY(Y12, X12) \
	REDY(Y13, X13) \
	HADD4(X10, X11, X12, X13) \
	VMOVUPS X10, 16(DI)

// func hgemmF16AVX2(k int, w *[4]unsafe.Pointer, x *[4]*float32, out *[16]float32)
TEXT ·hgemmF16AVX2(SB), NOSPLIT, $0-32
	LOADW
	LOADX4
	ZERO8
	TESTQ CX, CX
	JEQ   gm8done

gm8loop:
	VMOVUPS (SI)(BX*4), Y0
	VMOVUPS (DX)(BX*4), Y1
	CVTF16((R8)(BX*2), Y2)
	CVTF16((R9)(BX*2), Y3)
	CVTF16((R10)(BX*2), Y4)
	CVTF16((R11)(BX*2), Y5)
	FMA2x4
	ADDQ $8, BX
	CMPQ BX, CX
	JB   gm8loop

gm8done:
	STORE2x4
	VZEROUPPER
	RET

// func hgemmBF16AVX2(k int, w *[4]unsafe.Pointer, x *[4]*float32, out *[16]float32)
TEXT ·hgemmBF16AVX2(SB), NOSPLIT, $0-32
	LOADW
	LOADX4
	ZERO8
	TESTQ CX, CX
	JEQ   gmb8done

gmb8loop:
	VMOVUPS (SI)(BX*4), Y0
	VMOVUPS (DX)(BX*4), Y1
	CVTBF16((R8)(BX*2), Y2)
	CVTBF16((R9)(BX*2), Y3)
	CVTBF16((R10)(BX*2), Y4)
	CVTBF16((R11)(BX*2), Y5)
	FMA2x4
	ADDQ $8, BX
	CMPQ BX, CX
	JB   gmb8loop

gmb8done:
	STORE2x4
	VZEROUPPER
	RET

// ---- AVX-512 multi-group GEMV: groups × 4 consecutive weight rows (row
// stride ldw bytes) against one activation row, four sums stored per
// group; one call per task instead of one per four rows. As a group
// starts, it prefetches the group two ahead (8 rows on) in one burst of
// 4·ldw bytes, which covers that group's rows exactly when the rows are
// contiguous (ldw = 2k): 12 KiB ahead at k = 768. The burst replaced
// four prefetches per 32 columns along the loop, the same lines spread
// over the group: over 256 MB of cold f16 rows (BenchmarkF16ReadShare,
// K = 768 and 2048, one and two threads) the GEMV's share of the read
// probe went from 0.61–0.87 to 0.76–0.95 in three rounds of the two
// turn about, and Llama-110M F16 decode from 63–74% of the read
// bandwidth to 81–87% on one thread and from 77–88% to 87–95% on two
// (weft bench, alternating builds).

#define GEMVN512(CVT, lgroup, lpf, lloop2, lone, lsum, lend) \
	TESTQ R13, R13 \
	JEQ lend \
lgroup: \
	LEAQ (R8)(R12*1), R9 \
	LEAQ (R9)(R12*1), R10 \
	LEAQ (R10)(R12*1), R11 \
	LEAQ (R8)(R12*8), DX \
	LEAQ (R12)(R12*1), AX \
	LEAQ (DX)(AX*2), AX \
lpf: \
	PREFETCHT0 (DX) \
	ADDQ $64, DX \
	CMPQ DX, AX \
	JB lpf \
	VXORPS Z0, Z0, Z0 \
	VXORPS Z1, Z1, Z1 \
	VXORPS Z2, Z2, Z2 \
	VXORPS Z3, Z3, Z3 \
	XORQ BX, BX \
	CMPQ CX, $32 \
	JB lone \
lloop2: \
	VMOVUPS (SI)(BX*4), Z4 \
	VMOVUPS 64(SI)(BX*4), Z9 \
	CVT((R8)(BX*2), Z5) \
	CVT((R9)(BX*2), Z6) \
	CVT((R10)(BX*2), Z7) \
	CVT((R11)(BX*2), Z8) \
	VFMADD231PS Z5, Z4, Z0 \
	VFMADD231PS Z6, Z4, Z1 \
	VFMADD231PS Z7, Z4, Z2 \
	VFMADD231PS Z8, Z4, Z3 \
	CVT(32(R8)(BX*2), Z10) \
	CVT(32(R9)(BX*2), Z11) \
	CVT(32(R10)(BX*2), Z12) \
	CVT(32(R11)(BX*2), Z13) \
	VFMADD231PS Z10, Z9, Z0 \
	VFMADD231PS Z11, Z9, Z1 \
	VFMADD231PS Z12, Z9, Z2 \
	VFMADD231PS Z13, Z9, Z3 \
	ADDQ $32, BX \
	LEAQ 32(BX), AX \
	CMPQ AX, CX \
	JBE lloop2 \
lone: \
	CMPQ BX, CX \
	JAE lsum \
	VMOVUPS (SI)(BX*4), Z4 \
	CVT((R8)(BX*2), Z5) \
	CVT((R9)(BX*2), Z6) \
	CVT((R10)(BX*2), Z7) \
	CVT((R11)(BX*2), Z8) \
	VFMADD231PS Z5, Z4, Z0 \
	VFMADD231PS Z6, Z4, Z1 \
	VFMADD231PS Z7, Z4, Z2 \
	VFMADD231PS Z8, Z4, Z3 \
lsum: \
	REDZ(Z0, Y0, Y4, X4) \
	REDZ(Z1, Y1, Y5, X5) \
	REDZ(Z2, Y2, Y6, X6) \
	REDZ(Z3, Y3, Y7, X7) \
	HADD4(X4, X5, X6, X7) \
	VMOVUPS X4, (DI) \
	ADDQ $16, DI \
	LEAQ (R11)(R12*1), R8 \
	DECQ R13 \
	JNZ lgroup \
lend: \
	VZEROUPPER \
	RET

// Registers on entry: CX = k, R8 = w, R12 = ldw, R13 = groups, SI = x,
// DI = y.

// func hgemvNF16AVX512(k int, w unsafe.Pointer, ldw, groups int, x, y *float32)
TEXT ·hgemvNF16AVX512(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ w+8(FP), R8
	MOVQ ldw+16(FP), R12
	MOVQ groups+24(FP), R13
	MOVQ x+32(FP), SI
	MOVQ y+40(FP), DI
	GEMVN512(CVTF16, gnfgroup, gnfpf, gnfloop2, gnfone, gnfsum, gnfend)

// func hgemvNBF16AVX512(k int, w unsafe.Pointer, ldw, groups int, x, y *float32)
TEXT ·hgemvNBF16AVX512(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ w+8(FP), R8
	MOVQ ldw+16(FP), R12
	MOVQ groups+24(FP), R13
	MOVQ x+32(FP), SI
	MOVQ y+40(FP), DI
	GEMVN512(CVTBF16, gnbgroup, gnbpf, gnbloop2, gnbone, gnbsum, gnbend)

// ---- AVX2 multi-group GEMV: GEMVN512's loop with hgemvF16AVX2's (and
// hgemvBF16AVX2's) arithmetic, so that a row's sum is bit for bit the
// four-row kernel's: groups × 4 consecutive weight rows (row stride ldw
// bytes) against one activation row, 8 columns a step, one accumulator
// per weight row, four sums stored per group. k is a positive multiple
// of 8.
//
// Its prefetch is a line a step along the weights, from HPF bytes past
// the first row on (R14): a step reads 64 bytes, 16 of each row, so over
// a group R14 advances by the group's 4·2k bytes, and with contiguous
// rows (ldw = 2k, as a decode step's weights are) every line is
// prefetched once, about HPF bytes ahead. On a Zen 3 guest (AVX2, 32 KiB
// L1, 512 KiB L2) over 256 MB of cold f16 rows (BenchmarkF16ReadShare,
// turn about with the read probe, two runs, 6 and 10 rounds), K = 768 went
// from 0.44–0.61 of the probe without prefetch and 0.56–0.64 with
// GEMVN512's burst of the group two ahead to 0.76–0.86 (one thread) and
// 0.86 (two); K = 2048 from 0.80–0.97 to 0.82–1.03. 8 and 16 KiB ahead
// did about as well as 4.

#define HPF 4096

#define GEMVN256(CVT, lgroup, lloop, lend) \
	LEAQ HPF(R8), R14 \
	TESTQ R13, R13 \
	JEQ lend \
lgroup: \
	LEAQ (R8)(R12*1), R9 \
	LEAQ (R9)(R12*1), R10 \
	LEAQ (R10)(R12*1), R11 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	XORQ BX, BX \
lloop: \
	PREFETCHT0 (R14) \
	ADDQ $64, R14 \
	VMOVUPS (SI)(BX*4), Y4 \
	CVT((R8)(BX*2), Y5) \
	CVT((R9)(BX*2), Y6) \
	CVT((R10)(BX*2), Y7) \
	CVT((R11)(BX*2), Y8) \
	VFMADD231PS Y5, Y4, Y0 \
	VFMADD231PS Y6, Y4, Y1 \
	VFMADD231PS Y7, Y4, Y2 \
	VFMADD231PS Y8, Y4, Y3 \
	ADDQ $8, BX \
	CMPQ BX, CX \
	JB lloop \
	REDY(Y0, X0) \
	REDY(Y1, X1) \
	REDY(Y2, X2) \
	REDY(Y3, X3) \
	HADD4(X0, X1, X2, X3) \
	VMOVUPS X0, (DI) \
	ADDQ $16, DI \
	LEAQ (R11)(R12*1), R8 \
	DECQ R13 \
	JNZ lgroup \
lend: \
	VZEROUPPER \
	RET

#define GEMVNARGS \
	MOVQ k+0(FP), CX \
	MOVQ w+8(FP), R8 \
	MOVQ ldw+16(FP), R12 \
	MOVQ groups+24(FP), R13 \
	MOVQ x+32(FP), SI \
	MOVQ y+40(FP), DI

// func hgemvNF16AVX2(k int, w unsafe.Pointer, ldw, groups int, x, y *float32)
TEXT ·hgemvNF16AVX2(SB), NOSPLIT, $0-48
	GEMVNARGS
	GEMVN256(CVTF16, g2fgroup, g2floop, g2fend)

// func hgemvNBF16AVX2(k int, w unsafe.Pointer, ldw, groups int, x, y *float32)
TEXT ·hgemvNBF16AVX2(SB), NOSPLIT, $0-48
	GEMVNARGS
	GEMVN256(CVTBF16, g2bgroup, g2bloop, g2bend)
