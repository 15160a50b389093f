//go:build !noasm

#include "textflag.h"

// AVX-512 kernels of KVAttention for query heads that share a KV head
// (grouped-query attention), head size 64, f16 caches (fast_kv_group.go):
// each cache row is widened once for every query of the group, where the
// one-head kernels (fast_kv_avx512_amd64.s) widen it once per query head.
// A query's arithmetic depends only on the row and the number of rows, so
// its result does not depend on the other queries in the call.

// WIDEN4(off, z0, z1, z2, z3) widens the 64 f16 values at off(DI).
#define WIDEN4(off, z0, z1, z2, z3) \
	VCVTPH2PS (off)(DI), z0 \
	VCVTPH2PS (off+32)(DI), z1 \
	VCVTPH2PS (off+64)(DI), z2 \
	VCVTPH2PS (off+96)(DI), z3

// WIDEN16 widens the 256 f16 values at DI into Z0..Z15 (four rows of 64,
// two of 128).
#define WIDEN16 \
	WIDEN4(0, Z0, Z1, Z2, Z3) \
	WIDEN4(128, Z4, Z5, Z6, Z7) \
	WIDEN4(256, Z8, Z9, Z10, Z11) \
	WIDEN4(384, Z12, Z13, Z14, Z15)

// PF8(off) prefetches the eight lines from off(DI).
#define PF8(off) \
	PREFETCHT0 (off)(DI) \
	PREFETCHT0 (off+64)(DI) \
	PREFETCHT0 (off+128)(DI) \
	PREFETCHT0 (off+192)(DI) \
	PREFETCHT0 (off+256)(DI) \
	PREFETCHT0 (off+320)(DI) \
	PREFETCHT0 (off+384)(DI) \
	PREFETCHT0 (off+448)(DI)

// QSTART points R11 at the first query, R13 at its output and CX at the
// query count.
#define QSTART \
	MOVQ SI, R11 \
	MOVQ R10, R13 \
	MOVQ R8, CX

// FOLD1(b, a, ay, ax, ty, tx) stores one row's score at (R13): chains a
// and b added, folded to four lanes l0..l3 (t is scratch), then
// (l0+l2)+(l1+l3).
#define FOLD1(b, a, ay, ax, ty, tx) \
	VADDPS b, a, a \
	VEXTRACTF64X4 $1, a, ty \
	VADDPS ty, ay, ay \
	VEXTRACTF32X4 $1, ay, tx \
	VADDPS tx, ax, ax \
	VMOVHLPS ax, ax, tx \
	VADDPS tx, ax, ax \
	VMOVSHDUP ax, tx \
	VADDPS tx, ax, ax \
	VMOVSS ax, (R13)

// KSUM4 adds the four rows' products with one query (its 64 elements in
// Z16..Z19, the rows widened in Z0..Z15, row r's chunk j in Z(4r+j)) and
// stores the four sums at (R13): per row, chunks 0 and 2 into one chain,
// 1 and 3 into another; the chains added, folded to four lanes l0..l3,
// then (l0+l2)+(l1+l3), as the one-row path sums a row: a row's score
// does not depend on whether it falls in a block of four. (EVEX forms
// only: the VEX horizontal adds cannot reach Z16..Z31.)
#define KSUM4 \
	VMULPS Z0, Z16, Z20 \
	VMULPS Z1, Z17, Z24 \
	VMULPS Z4, Z16, Z21 \
	VMULPS Z5, Z17, Z25 \
	VMULPS Z8, Z16, Z22 \
	VMULPS Z9, Z17, Z26 \
	VMULPS Z12, Z16, Z23 \
	VMULPS Z13, Z17, Z27 \
	VFMADD231PS Z2, Z18, Z20 \
	VFMADD231PS Z3, Z19, Z24 \
	VFMADD231PS Z6, Z18, Z21 \
	VFMADD231PS Z7, Z19, Z25 \
	VFMADD231PS Z10, Z18, Z22 \
	VFMADD231PS Z11, Z19, Z26 \
	VFMADD231PS Z14, Z18, Z23 \
	VFMADD231PS Z15, Z19, Z27 \
	VADDPS Z24, Z20, Z20 \
	VADDPS Z25, Z21, Z21 \
	VADDPS Z26, Z22, Z22 \
	VADDPS Z27, Z23, Z23 \
	VEXTRACTF64X4 $1, Z20, Y24 \
	VEXTRACTF64X4 $1, Z21, Y25 \
	VEXTRACTF64X4 $1, Z22, Y26 \
	VEXTRACTF64X4 $1, Z23, Y27 \
	VADDPS Y24, Y20, Y20 \
	VADDPS Y25, Y21, Y21 \
	VADDPS Y26, Y22, Y22 \
	VADDPS Y27, Y23, Y23 \
	VEXTRACTF32X4 $1, Y20, X24 \
	VEXTRACTF32X4 $1, Y21, X25 \
	VEXTRACTF32X4 $1, Y22, X26 \
	VEXTRACTF32X4 $1, Y23, X27 \
	VADDPS X24, X20, X20 \
	VADDPS X25, X21, X21 \
	VADDPS X26, X22, X22 \
	VADDPS X27, X23, X23 \
	VUNPCKLPS X21, X20, X24 \
	VUNPCKHPS X21, X20, X25 \
	VADDPS X25, X24, X24 \
	VUNPCKLPS X23, X22, X25 \
	VUNPCKHPS X23, X22, X26 \
	VADDPS X26, X25, X25 \
	VMOVLHPS X25, X24, X26 \
	VMOVHLPS X24, X25, X27 \
	VADDPS X27, X26, X26 \
	VMOVUPS X26, (R13)

// KDOT(r0, r1, r2, r3, qoff, a, b) leaves in a the products of the row
// widened in r0..r3 with the query at qoff(R11), chunks 0 and 2 in one
// chain and 1 and 3 in another (b), the chains added: KSUM4's sums before
// their fold.
#define KDOT(r0, r1, r2, r3, qoff, a, b) \
	VMULPS (qoff)(R11), r0, a \
	VMULPS (qoff+64)(R11), r1, b \
	VFMADD231PS (qoff+128)(R11), r2, a \
	VFMADD231PS (qoff+192)(R11), r3, b \
	VADDPS b, a, a

// KPAIR(r0, r1, r2, r3, qa, qb, u) folds the products of one row with two
// queries (qa, qb) once, into u: the 256-bit halves of each added, the
// first query's eight lanes low, the second's high (Z24..Z27 scratch).
#define KPAIR(r0, r1, r2, r3, qa, qb, u) \
	KDOT(r0, r1, r2, r3, qa, Z24, Z25) \
	KDOT(r0, r1, r2, r3, qb, Z26, Z27) \
	VSHUFF64X2 $0x44, Z26, Z24, Z25 \
	VSHUFF64X2 $0xEE, Z26, Z24, Z27 \
	VADDPS Z27, Z25, u

// KPAIR1(r0, r1, r2, r3, qa, u) is KPAIR for one query, which fills both
// halves of u (KQUAD3's missing fourth query repeats its third).
#define KPAIR1(r0, r1, r2, r3, qa, u) \
	KDOT(r0, r1, r2, r3, qa, Z24, Z25) \
	VSHUFF64X2 $0x44, Z24, Z24, Z25 \
	VSHUFF64X2 $0xEE, Z24, Z24, Z27 \
	VADDPS Z27, Z25, u

// KFOLD2(u01, u23, v) folds one row's KPAIRs for queries 0, 1 (u01) and
// 2, 3 (u23) once more: v's 128-bit lane k holds query k's four lanes,
// the 128-bit halves of its eight added (Z24, Z25 scratch).
#define KFOLD2(u01, u23, v) \
	VSHUFF64X2 $0x88, u23, u01, Z24 \
	VSHUFF64X2 $0xDD, u23, u01, Z25 \
	VADDPS Z25, Z24, v

// KQUAD4 computes the four rows widened in Z0..Z15 against four queries
// (at R11, 256 bytes apart) and stores query k's four scores at
// R13+k·R12 (AX = 3·R12): the sixteen sums are folded together, two at a
// time, then four, each lane of each sum meeting the same lanes in the
// same order as KSUM4 and FOLD1 add them, so every score has the bits
// of the one-query path: 132 instructions for sixteen scores against 196.
#define KQUAD4 \
	KPAIR(Z0, Z1, Z2, Z3, 0, 256, Z16) \
	KPAIR(Z0, Z1, Z2, Z3, 512, 768, Z17) \
	KPAIR(Z4, Z5, Z6, Z7, 0, 256, Z18) \
	KPAIR(Z4, Z5, Z6, Z7, 512, 768, Z19) \
	KPAIR(Z8, Z9, Z10, Z11, 0, 256, Z20) \
	KPAIR(Z8, Z9, Z10, Z11, 512, 768, Z21) \
	KPAIR(Z12, Z13, Z14, Z15, 0, 256, Z22) \
	KPAIR(Z12, Z13, Z14, Z15, 512, 768, Z23) \
	KQUADFOLD \
	VEXTRACTF32X4 $3, Z28, X29 \
	VMOVUPS X29, (R13)(AX*1)

// KQUAD3 is KQUAD4 for three queries: the third's sums stand in for the
// fourth's, whose scores are not stored.
#define KQUAD3 \
	KPAIR(Z0, Z1, Z2, Z3, 0, 256, Z16) \
	KPAIR1(Z0, Z1, Z2, Z3, 512, Z17) \
	KPAIR(Z4, Z5, Z6, Z7, 0, 256, Z18) \
	KPAIR1(Z4, Z5, Z6, Z7, 512, Z19) \
	KPAIR(Z8, Z9, Z10, Z11, 0, 256, Z20) \
	KPAIR1(Z8, Z9, Z10, Z11, 512, Z21) \
	KPAIR(Z12, Z13, Z14, Z15, 0, 256, Z22) \
	KPAIR1(Z12, Z13, Z14, Z15, 512, Z23) \
	KQUADFOLD

// KQUADFOLD folds KQUAD4's eight pair sums (Z16..Z23) to the sixteen
// scores and stores those of queries 0..2.
#define KQUADFOLD \
	KFOLD2(Z16, Z17, Z28) \
	KFOLD2(Z18, Z19, Z29) \
	KFOLD2(Z20, Z21, Z30) \
	KFOLD2(Z22, Z23, Z31) \
	VUNPCKLPS Z29, Z28, Z24 \
	VUNPCKHPS Z29, Z28, Z25 \
	VADDPS Z25, Z24, Z24 \
	VUNPCKLPS Z31, Z30, Z26 \
	VUNPCKHPS Z31, Z30, Z27 \
	VADDPS Z27, Z26, Z26 \
	VUNPCKLPD Z26, Z24, Z28 \
	VUNPCKHPD Z26, Z24, Z29 \
	VADDPS Z29, Z28, Z28 \
	VMOVUPS X28, (R13) \
	VEXTRACTF32X4 $1, Z28, X29 \
	VMOVUPS X29, (R13)(R12*1) \
	VEXTRACTF32X4 $2, Z28, X29 \
	VMOVUPS X29, (R13)(R12*2)

// func kvScoresF16G64(q *float32, ng int, k *uint16, n int, out *float32, ldo int)
//
// out[i·ldo+c] = q[i·64:(i+1)·64]·k[c·64:(c+1)·64] for i < ng, c < n:
// four rows at a time, widened into registers once for the ng queries
// (four queries at a time, KQUAD4, then three at once, KQUAD3, or one by
// one), then row by row.
// Rows are prefetched 32 ahead, as in the one-head kernels. KQUAD4 took
// Qwen2-0.5B's decode attention (groups of seven, one thread, warm;
// BenchmarkKVAttentionDecode, six alternating rounds) from 7.7–8.1 to
// 7.2–7.7 µs at 192 positions and from 68.7–72.5 to 64.5–68.2 µs at 2048;
// with KQUAD3 as well, 2048 positions took 74.4–76.3 µs against 77.5–80.1
// with KQUAD4 alone and 81.7–99.3 before (five rounds, in a slower state
// of the host).
TEXT ·kvScoresF16G64(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ ng+8(FP), R8
	MOVQ k+16(FP), DI
	MOVQ n+24(FP), R9
	MOVQ out+32(FP), R10
	MOVQ ldo+40(FP), R12
	SHLQ $2, R12
	LEAQ (R12)(R12*2), AX

ksg4:
	CMPQ R9, $4
	JL ksg1
	PF8(4096)
	WIDEN16
	QSTART

ksg4quad:
	CMPQ CX, $4
	JL ksg4rest
	KQUAD4
	ADDQ $1024, R11
	LEAQ (R13)(R12*4), R13
	SUBQ $4, CX
	JMP ksg4quad

ksg4rest:
	CMPQ CX, $3
	JNE ksg4few
	KQUAD3
	JMP ksg4next

ksg4few:
	TESTQ CX, CX
	JZ ksg4next

ksg4q:
	VMOVUPS 0(R11), Z16
	VMOVUPS 64(R11), Z17
	VMOVUPS 128(R11), Z18
	VMOVUPS 192(R11), Z19
	KSUM4
	ADDQ $256, R11
	ADDQ R12, R13
	DECQ CX
	JNZ ksg4q

ksg4next:
	ADDQ $512, DI
	ADDQ $16, R10
	SUBQ $4, R9
	JMP ksg4

ksg1:
	TESTQ R9, R9
	JZ ksgdone
	WIDEN4(0, Z0, Z1, Z2, Z3)
	QSTART

ksg1q:
	VMULPS 0(R11), Z0, Z20
	VMULPS 64(R11), Z1, Z24
	VFMADD231PS 128(R11), Z2, Z20
	VFMADD231PS 192(R11), Z3, Z24
	FOLD1(Z24, Z20, Y20, X20, Y24, X24)
	ADDQ $256, R11
	ADDQ R12, R13
	DECQ CX
	JNZ ksg1q
	ADDQ $128, DI
	ADDQ $4, R10
	DECQ R9
	JMP ksg1

ksgdone:
	VZEROUPPER
	RET

// GACC adds row CX of v (widened in Z28..Z31) times query i's weight
// (w_i at base, broadcast from memory) into query i's accumulators.
#define GACC(base, a0, a1, a2, a3) \
	VFMADD231PS.BCST (base)(CX*4), Z28, a0 \
	VFMADD231PS.BCST (base)(CX*4), Z29, a1 \
	VFMADD231PS.BCST (base)(CX*4), Z30, a2 \
	VFMADD231PS.BCST (base)(CX*4), Z31, a3

// GLOAD and GSTORE move query i's 64 accumulators (at base) to and from
// registers.
#define GLOAD(base, a0, a1, a2, a3) \
	VMOVUPS 0(base), a0 \
	VMOVUPS 64(base), a1 \
	VMOVUPS 128(base), a2 \
	VMOVUPS 192(base), a3

#define GSTORE(base, a0, a1, a2, a3) \
	VMOVUPS a0, 0(base) \
	VMOVUPS a1, 64(base) \
	VMOVUPS a2, 128(base) \
	VMOVUPS a3, 192(base)

// GNEXT(k, lskip) jumps to lskip when there are fewer than k queries (SI)
// and otherwise moves AX to the next query's accumulators.
#define GNEXT(k, lskip) \
	CMPQ SI, $k \
	JL lskip \
	ADDQ R8, AX

// GEACH7(OP, lskip) applies OP (GLOAD or GSTORE) to the accumulators of
// each of the SI ≤ 7 queries, from DI, then goes to lskip.
#define GEACH7(OP, lskip) \
	MOVQ DI, AX \
	OP(AX, Z0, Z1, Z2, Z3) \
	GNEXT(2, lskip) \
	OP(AX, Z4, Z5, Z6, Z7) \
	GNEXT(3, lskip) \
	OP(AX, Z8, Z9, Z10, Z11) \
	GNEXT(4, lskip) \
	OP(AX, Z12, Z13, Z14, Z15) \
	GNEXT(5, lskip) \
	OP(AX, Z16, Z17, Z18, Z19) \
	GNEXT(6, lskip) \
	OP(AX, Z20, Z21, Z22, Z23) \
	GNEXT(7, lskip) \
	OP(AX, Z24, Z25, Z26, Z27)

// func kvAccumF16G64(acc *float32, lda int, ng int, w *float32, ldw int, v *uint16, n int)
//
// acc[i·lda:i·lda+64] += Σ_c w[i·ldw+c]·v[c·64:(c+1)·64] for i < ng
// (1 ≤ ng ≤ 7), c < n: each row widened once for the ng queries, whose
// accumulators stay in registers (query i's in Z4i..Z4i+3); each query's
// sum runs over the rows in order, one chain per element.
TEXT ·kvAccumF16G64(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), DI
	MOVQ lda+8(FP), R8
	SHLQ $2, R8
	MOVQ ng+16(FP), SI
	MOVQ w+24(FP), R9
	MOVQ ldw+32(FP), AX
	SHLQ $2, AX
	MOVQ v+40(FP), DX
	MOVQ n+48(FP), R12
	// w_i for i = 1..6 in R10, R11, R13, R14, R15, BX.
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	LEAQ (R11)(AX*1), R13
	LEAQ (R13)(AX*1), R14
	LEAQ (R14)(AX*1), R15
	LEAQ (R15)(AX*1), BX
	// Load the accumulators (AX walks them).
	GEACH7(GLOAD, kagl)

kagl:
	XORQ CX, CX

kagrow:
	CMPQ CX, R12
	JGE kagst
	PREFETCHT0 4096(DX)
	PREFETCHT0 4160(DX)
	VCVTPH2PS 0(DX), Z28
	VCVTPH2PS 32(DX), Z29
	VCVTPH2PS 64(DX), Z30
	VCVTPH2PS 96(DX), Z31
	GACC(R9, Z0, Z1, Z2, Z3)
	CMPQ SI, $2
	JL kagnext
	GACC(R10, Z4, Z5, Z6, Z7)
	CMPQ SI, $3
	JL kagnext
	GACC(R11, Z8, Z9, Z10, Z11)
	CMPQ SI, $4
	JL kagnext
	GACC(R13, Z12, Z13, Z14, Z15)
	CMPQ SI, $5
	JL kagnext
	GACC(R14, Z16, Z17, Z18, Z19)
	CMPQ SI, $6
	JL kagnext
	GACC(R15, Z20, Z21, Z22, Z23)
	CMPQ SI, $7
	JL kagnext
	GACC(BX, Z24, Z25, Z26, Z27)

kagnext:
	ADDQ $128, DX
	INCQ CX
	JMP kagrow

kagst:
	GEACH7(GSTORE, kagdone)

kagdone:
	VZEROUPPER
	RET

// The same kernels for head size 128 (Llama 3, Qwen2-1.5B and up,
// Mistral): two cache rows at a time in the scores (16 registers), three
// queries' accumulators at a time in the weighted sum (24 registers). A
// row's score is summed as at 64 (chunks 0, 2, 4, 6 into one chain, 1, 3,
// 5, 7 into another; folded to four lanes, then (l0+l2)+(l1+l3)), in a
// pair of rows or alone.

// KDOT8(r0, …, r7, qoff, a, b) is KDOT for rows of 128 (widened in
// r0..r7), the query at qoff(R11): chunks 0, 2, 4, 6 into a, 1, 3, 5, 7
// into b, then added.
#define KDOT8(r0, r1, r2, r3, r4, r5, r6, r7, qoff, a, b) \
	VMULPS (qoff)(R11), r0, a \
	VMULPS (qoff+64)(R11), r1, b \
	VFMADD231PS (qoff+128)(R11), r2, a \
	VFMADD231PS (qoff+192)(R11), r3, b \
	VFMADD231PS (qoff+256)(R11), r4, a \
	VFMADD231PS (qoff+320)(R11), r5, b \
	VFMADD231PS (qoff+384)(R11), r6, a \
	VFMADD231PS (qoff+448)(R11), r7, b \
	VADDPS b, a, a

// KPAIR8 is KPAIR for rows of 128: the row widened in r0..r7.
#define KPAIR8(r0, r1, r2, r3, r4, r5, r6, r7, qa, qb, u) \
	KDOT8(r0, r1, r2, r3, r4, r5, r6, r7, qa, Z24, Z25) \
	KDOT8(r0, r1, r2, r3, r4, r5, r6, r7, qb, Z26, Z27) \
	VSHUFF64X2 $0x44, Z26, Z24, Z25 \
	VSHUFF64X2 $0xEE, Z26, Z24, Z27 \
	VADDPS Z27, Z25, u

// KQUAD128 computes the two rows of 128 widened in Z0..Z15 against four
// queries (at R11, 512 bytes apart) and stores query k's two scores at
// R13+k·R12 (AX = 3·R12), every score with the bits of the one-query
// path (as KQUAD4): 102 instructions for eight scores against 164.
#define KQUAD128 \
	KPAIR8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, 0, 512, Z16) \
	KPAIR8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, 1024, 1536, Z17) \
	KPAIR8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, 0, 512, Z18) \
	KPAIR8(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, 1024, 1536, Z19) \
	KFOLD2(Z16, Z17, Z28) \
	KFOLD2(Z18, Z19, Z29) \
	VUNPCKLPS Z29, Z28, Z24 \
	VUNPCKHPS Z29, Z28, Z25 \
	VADDPS Z25, Z24, Z24 \
	VSHUFPS $0xEE, Z24, Z24, Z25 \
	VADDPS Z25, Z24, Z24 \
	VMOVSD X24, (R13) \
	VEXTRACTF32X4 $1, Z24, X25 \
	VMOVSD X25, (R13)(R12*1) \
	VEXTRACTF32X4 $2, Z24, X25 \
	VMOVSD X25, (R13)(R12*2) \
	VEXTRACTF32X4 $3, Z24, X25 \
	VMOVSD X25, (R13)(AX*1)

// func kvScoresF16G128(q *float32, ng int, k *uint16, n int, out *float32, ldo int)
//
// kvScoresF16G64 for rows of 128: out[i·ldo+c] = q[i·128:(i+1)·128]·
// k[c·128:(c+1)·128] for i < ng, c < n; two rows at a time, four queries
// at a time (KQUAD128), then one by one. KQUAD128 took the decode
// attention of a Llama 3 layer (32 heads on 8, 2048 positions, one
// thread, warm) from 400.6–417.9 to 379.1–389.8 µs (five alternating
// rounds).
TEXT ·kvScoresF16G128(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ ng+8(FP), R8
	MOVQ k+16(FP), DI
	MOVQ n+24(FP), R9
	MOVQ out+32(FP), R10
	MOVQ ldo+40(FP), R12
	SHLQ $2, R12
	LEAQ (R12)(R12*2), AX

ksh2:
	CMPQ R9, $2
	JL ksh1
	PF8(8192)
	WIDEN16
	QSTART

ksh2quad:
	CMPQ CX, $4
	JL ksh2rest
	KQUAD128
	ADDQ $2048, R11
	LEAQ (R13)(R12*4), R13
	SUBQ $4, CX
	JMP ksh2quad

ksh2rest:
	TESTQ CX, CX
	JZ ksh2next

ksh2q:
	VMOVUPS 0(R11), Z16
	VMOVUPS 64(R11), Z17
	VMOVUPS 128(R11), Z18
	VMOVUPS 192(R11), Z19
	VMOVUPS 256(R11), Z20
	VMOVUPS 320(R11), Z21
	VMOVUPS 384(R11), Z22
	VMOVUPS 448(R11), Z23
	VMULPS Z0, Z16, Z24
	VMULPS Z1, Z17, Z25
	VMULPS Z8, Z16, Z26
	VMULPS Z9, Z17, Z27
	VFMADD231PS Z2, Z18, Z24
	VFMADD231PS Z3, Z19, Z25
	VFMADD231PS Z10, Z18, Z26
	VFMADD231PS Z11, Z19, Z27
	VFMADD231PS Z4, Z20, Z24
	VFMADD231PS Z5, Z21, Z25
	VFMADD231PS Z12, Z20, Z26
	VFMADD231PS Z13, Z21, Z27
	VFMADD231PS Z6, Z22, Z24
	VFMADD231PS Z7, Z23, Z25
	VFMADD231PS Z14, Z22, Z26
	VFMADD231PS Z15, Z23, Z27
	VADDPS Z25, Z24, Z24
	VADDPS Z27, Z26, Z26
	VEXTRACTF64X4 $1, Z24, Y28
	VEXTRACTF64X4 $1, Z26, Y29
	VADDPS Y28, Y24, Y24
	VADDPS Y29, Y26, Y26
	VEXTRACTF32X4 $1, Y24, X28
	VEXTRACTF32X4 $1, Y26, X29
	VADDPS X28, X24, X24
	VADDPS X29, X26, X26
	VUNPCKLPS X26, X24, X28
	VUNPCKHPS X26, X24, X29
	VADDPS X29, X28, X28
	VMOVHLPS X28, X28, X29
	VADDPS X29, X28, X28
	VMOVSD X28, (R13)
	ADDQ $512, R11
	ADDQ R12, R13
	DECQ CX
	JNZ ksh2q

ksh2next:
	ADDQ $512, DI
	ADDQ $8, R10
	SUBQ $2, R9
	JMP ksh2

ksh1:
	TESTQ R9, R9
	JZ kshdone
	WIDEN4(0, Z0, Z1, Z2, Z3)
	WIDEN4(128, Z4, Z5, Z6, Z7)
	QSTART

ksh1q:
	VMULPS 0(R11), Z0, Z24
	VMULPS 64(R11), Z1, Z25
	VFMADD231PS 128(R11), Z2, Z24
	VFMADD231PS 192(R11), Z3, Z25
	VFMADD231PS 256(R11), Z4, Z24
	VFMADD231PS 320(R11), Z5, Z25
	VFMADD231PS 384(R11), Z6, Z24
	VFMADD231PS 448(R11), Z7, Z25
	FOLD1(Z25, Z24, Y24, X24, Y28, X28)
	ADDQ $512, R11
	ADDQ R12, R13
	DECQ CX
	JNZ ksh1q
	ADDQ $256, DI
	ADDQ $4, R10
	DECQ R9
	JMP ksh1

kshdone:
	VZEROUPPER
	RET

// GACC8 adds row CX of v (widened in Z24..Z31) times query i's weight
// (w_i at base, broadcast from memory) into its eight accumulators.
#define GACC8(base, a0, a1, a2, a3, a4, a5, a6, a7) \
	VFMADD231PS.BCST (base)(CX*4), Z24, a0 \
	VFMADD231PS.BCST (base)(CX*4), Z25, a1 \
	VFMADD231PS.BCST (base)(CX*4), Z26, a2 \
	VFMADD231PS.BCST (base)(CX*4), Z27, a3 \
	VFMADD231PS.BCST (base)(CX*4), Z28, a4 \
	VFMADD231PS.BCST (base)(CX*4), Z29, a5 \
	VFMADD231PS.BCST (base)(CX*4), Z30, a6 \
	VFMADD231PS.BCST (base)(CX*4), Z31, a7

// GLOAD8 and GSTORE8 move query i's 128 accumulators (at base) to and
// from registers.
#define GLOAD8(base, a0, a1, a2, a3, a4, a5, a6, a7) \
	GLOAD(base, a0, a1, a2, a3) \
	VMOVUPS 256(base), a4 \
	VMOVUPS 320(base), a5 \
	VMOVUPS 384(base), a6 \
	VMOVUPS 448(base), a7

#define GSTORE8(base, a0, a1, a2, a3, a4, a5, a6, a7) \
	GSTORE(base, a0, a1, a2, a3) \
	VMOVUPS a4, 256(base) \
	VMOVUPS a5, 320(base) \
	VMOVUPS a6, 384(base) \
	VMOVUPS a7, 448(base)

// GEACH3(OP, lskip) is GEACH7 for the SI ≤ 3 queries of head size 128
// (OP GLOAD8 or GSTORE8).
#define GEACH3(OP, lskip) \
	MOVQ DI, AX \
	OP(AX, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7) \
	GNEXT(2, lskip) \
	OP(AX, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15) \
	GNEXT(3, lskip) \
	OP(AX, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)

// func kvAccumF16G128(acc *float32, lda int, ng int, w *float32, ldw int, v *uint16, n int)
//
// kvAccumF16G64 for rows of 128 and 1 ≤ ng ≤ 3: acc[i·lda:i·lda+128] +=
// Σ_c w[i·ldw+c]·v[c·128:(c+1)·128], query i's accumulators in
// Z8i..Z8i+7, each row widened once into Z24..Z31.
TEXT ·kvAccumF16G128(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), DI
	MOVQ lda+8(FP), R8
	SHLQ $2, R8
	MOVQ ng+16(FP), SI
	MOVQ w+24(FP), R9
	MOVQ ldw+32(FP), AX
	SHLQ $2, AX
	MOVQ v+40(FP), DX
	MOVQ n+48(FP), R12
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	GEACH3(GLOAD8, kahl)

kahl:
	XORQ CX, CX

kahrow:
	CMPQ CX, R12
	JGE kahst
	PREFETCHT0 8192(DX)
	PREFETCHT0 8256(DX)
	PREFETCHT0 8320(DX)
	PREFETCHT0 8384(DX)
	VCVTPH2PS 0(DX), Z24
	VCVTPH2PS 32(DX), Z25
	VCVTPH2PS 64(DX), Z26
	VCVTPH2PS 96(DX), Z27
	VCVTPH2PS 128(DX), Z28
	VCVTPH2PS 160(DX), Z29
	VCVTPH2PS 192(DX), Z30
	VCVTPH2PS 224(DX), Z31
	GACC8(R9, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	CMPQ SI, $2
	JL kahnext
	GACC8(R10, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	CMPQ SI, $3
	JL kahnext
	GACC8(R11, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)

kahnext:
	ADDQ $256, DX
	INCQ CX
	JMP kahrow

kahst:
	GEACH3(GSTORE8, kahdone)

kahdone:
	VZEROUPPER
	RET
