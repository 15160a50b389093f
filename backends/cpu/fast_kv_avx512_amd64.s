//go:build !noasm

#include "textflag.h"

// AVX-512 kernels of KVAttention over f16 caches (fast_kv.go): the AVX2
// ones' loops at twice the width, for head sizes that are a multiple of
// 32. Each row's lines are prefetched at two distances, pf and pf2 bytes
// ahead (the caller's choice: kvPFRows rows within the stream, or 0 for
// the stream's last rows; and the same row of the next head, whose
// stream then arrives while this one is computed).

// func kvScoresF16AVX512(q *float32, k *uint16, d, n int, out *float32, pf, pf2 int)
//
// out[c] = q·k[c·d:(c+1)·d] for c < n, d a multiple of 32. Four rows at a
// time: each 32-element chunk of q is loaded once for the four rows, two
// accumulators per row, one reduction for the four; then row by row.
TEXT ·kvScoresF16AVX512(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ k+8(FP), DI
	MOVQ d+16(FP), R8
	MOVQ n+24(FP), R9
	MOVQ out+32(FP), R10
	MOVQ R8, R12
	SHLQ $1, R12 // bytes per cache row
	LEAQ (R12)(R12*2), R13

ks512x4:
	CMPQ R9, $4
	JL ks512row
	MOVQ DI, R14
	MOVQ pf+40(FP), BX
	ADDQ DI, BX
	MOVQ pf2+48(FP), DX
	ADDQ DI, DX
	MOVQ SI, R11
	MOVQ R8, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

ks512x4in:
	PREFETCHT0 (BX)
	PREFETCHT0 (BX)(R12*1)
	PREFETCHT0 (BX)(R12*2)
	PREFETCHT0 (BX)(R13*1)
	ADDQ $64, BX
	PREFETCHT0 (DX)
	PREFETCHT0 (DX)(R12*1)
	PREFETCHT0 (DX)(R12*2)
	PREFETCHT0 (DX)(R13*1)
	ADDQ $64, DX
	VMOVUPS (R11), Z8
	VMOVUPS 64(R11), Z9
	VCVTPH2PS (R14), Z10
	VCVTPH2PS 32(R14), Z11
	VFMADD231PS Z10, Z8, Z0
	VFMADD231PS Z11, Z9, Z4
	VCVTPH2PS (R14)(R12*1), Z12
	VCVTPH2PS 32(R14)(R12*1), Z13
	VFMADD231PS Z12, Z8, Z1
	VFMADD231PS Z13, Z9, Z5
	VCVTPH2PS (R14)(R12*2), Z10
	VCVTPH2PS 32(R14)(R12*2), Z11
	VFMADD231PS Z10, Z8, Z2
	VFMADD231PS Z11, Z9, Z6
	VCVTPH2PS (R14)(R13*1), Z12
	VCVTPH2PS 32(R14)(R13*1), Z13
	VFMADD231PS Z12, Z8, Z3
	VFMADD231PS Z13, Z9, Z7
	ADDQ $64, R14
	ADDQ $128, R11
	SUBQ $32, CX
	JNZ ks512x4in

	// The four rows' sums: halves of each row added, the 256-bit halves
	// folded, then the AVX2 kernel's horizontal-add tree.
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	VEXTRACTF64X4 $1, Z0, Y4
	VEXTRACTF64X4 $1, Z1, Y5
	VEXTRACTF64X4 $1, Z2, Y6
	VEXTRACTF64X4 $1, Z3, Y7
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVUPS X0, (R10)
	ADDQ $16, R10
	LEAQ (DI)(R12*4), DI
	SUBQ $4, R9
	JMP ks512x4

ks512row:
	TESTQ R9, R9
	JZ ks512done
	MOVQ SI, R11
	MOVQ R8, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1

ks512in:
	VCVTPH2PS (DI), Z2
	VCVTPH2PS 32(DI), Z3
	VFMADD231PS (R11), Z2, Z0
	VFMADD231PS 64(R11), Z3, Z1
	ADDQ $64, DI
	ADDQ $128, R11
	SUBQ $32, CX
	JNZ ks512in

	VADDPS Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, (R10)
	ADDQ $4, R10
	DECQ R9
	JMP ks512row

ks512done:
	VZEROUPPER
	RET

// ROW64 adds w·(64 f16 values at R10) to a0..a3 (w broadcast in wz).
#define ROW64(wz, a0, a1, a2, a3) \
	VCVTPH2PS 0(R10), Z12 \
	VCVTPH2PS 32(R10), Z13 \
	VCVTPH2PS 64(R10), Z14 \
	VCVTPH2PS 96(R10), Z15 \
	VFMADD231PS Z12, wz, a0 \
	VFMADD231PS Z13, wz, a1 \
	VFMADD231PS Z14, wz, a2 \
	VFMADD231PS Z15, wz, a3

// func kvAccumF16AVX512(acc, w *float32, v *uint16, d, n, pf, pf2 int)
//
// acc[:d] += Σ_c w[c]·v[c·d:(c+1)·d] (c < n), d a multiple of 32. 64
// columns (then a last 32) at a time, two rows per step: even rows add
// into one set of accumulators (starting from acc), odd rows into a
// second (from zero), the two sets added at the end, so that the FMA
// latency of one row overlaps the next row's.
TEXT ·kvAccumF16AVX512(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ d+24(FP), R8
	MOVQ n+32(FP), R9
	MOVQ R8, R12
	SHLQ $1, R12 // bytes per cache row
	MOVQ pf+40(FP), R15 // prefetch distances in bytes
	MOVQ pf2+48(FP), BX
	XORQ R13, R13 // column

ka512c64:
	MOVQ R8, AX
	SUBQ R13, AX
	CMPQ AX, $64
	JL ka512c32
	VMOVUPS (DI)(R13*4), Z4
	VMOVUPS 64(DI)(R13*4), Z5
	VMOVUPS 128(DI)(R13*4), Z6
	VMOVUPS 192(DI)(R13*4), Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	LEAQ (DX)(R13*2), R10
	MOVQ SI, R11
	MOVQ R9, CX

ka512r64:
	CMPQ CX, $2
	JL ka512r64one
	PREFETCHT0 (R10)(R15*1)
	PREFETCHT0 64(R10)(R15*1)
	PREFETCHT0 (R10)(BX*1)
	PREFETCHT0 64(R10)(BX*1)
	VBROADCASTSS (R11), Z0
	VBROADCASTSS 4(R11), Z1
	ROW64(Z0, Z4, Z5, Z6, Z7)
	ADDQ R12, R10
	PREFETCHT0 (R10)(R15*1)
	PREFETCHT0 64(R10)(R15*1)
	PREFETCHT0 (R10)(BX*1)
	PREFETCHT0 64(R10)(BX*1)
	ROW64(Z1, Z8, Z9, Z10, Z11)
	ADDQ R12, R10
	ADDQ $8, R11
	SUBQ $2, CX
	JMP ka512r64

ka512r64one:
	TESTQ CX, CX
	JZ ka512s64
	VBROADCASTSS (R11), Z0
	ROW64(Z0, Z4, Z5, Z6, Z7)

ka512s64:
	VADDPS Z8, Z4, Z4
	VADDPS Z9, Z5, Z5
	VADDPS Z10, Z6, Z6
	VADDPS Z11, Z7, Z7
	VMOVUPS Z4, (DI)(R13*4)
	VMOVUPS Z5, 64(DI)(R13*4)
	VMOVUPS Z6, 128(DI)(R13*4)
	VMOVUPS Z7, 192(DI)(R13*4)
	ADDQ $64, R13
	JMP ka512c64

ka512c32:
	CMPQ AX, $32
	JL ka512done
	VMOVUPS (DI)(R13*4), Z4
	VMOVUPS 64(DI)(R13*4), Z5
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	LEAQ (DX)(R13*2), R10
	MOVQ SI, R11
	MOVQ R9, CX

ka512r32:
	CMPQ CX, $2
	JL ka512r32one
	VBROADCASTSS (R11), Z0
	VBROADCASTSS 4(R11), Z1
	VCVTPH2PS 0(R10), Z12
	VCVTPH2PS 32(R10), Z13
	VFMADD231PS Z12, Z0, Z4
	VFMADD231PS Z13, Z0, Z5
	ADDQ R12, R10
	VCVTPH2PS 0(R10), Z14
	VCVTPH2PS 32(R10), Z15
	VFMADD231PS Z14, Z1, Z8
	VFMADD231PS Z15, Z1, Z9
	ADDQ R12, R10
	ADDQ $8, R11
	SUBQ $2, CX
	JMP ka512r32

ka512r32one:
	TESTQ CX, CX
	JZ ka512s32
	VBROADCASTSS (R11), Z0
	VCVTPH2PS 0(R10), Z12
	VCVTPH2PS 32(R10), Z13
	VFMADD231PS Z12, Z0, Z4
	VFMADD231PS Z13, Z0, Z5

ka512s32:
	VADDPS Z8, Z4, Z4
	VADDPS Z9, Z5, Z5
	VMOVUPS Z4, (DI)(R13*4)
	VMOVUPS Z5, 64(DI)(R13*4)

ka512done:
	VZEROUPPER
	RET
