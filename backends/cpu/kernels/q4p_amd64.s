//go:build !noasm

#include "textflag.h"
#include "qrows_amd64.h"
#include "prefetch_amd64.h"
#include "packed_amd64.h"

// The lane-packed Q4_0 kernels (q4p.go): weights in groups of 16 blocks
// with one block per 32-bit lane, against activation records of 640 bytes
// (eight chunks of activations, 16 scales, 16 biases). Every kernel runs
// one group as P16W (the weights, once) and P16A (one activation row), in
// the same order, into one float accumulator per activation row, and sums
// it with HSUM: a row's result is the same whatever the number of
// activation rows (speculative decoding verifies k tokens in one batch
// against one-token decoding).
//
// Constants: Z29 = 0x0F bytes, Z30 = 0xF0 bytes; K1 the lane mask of the
// row's short group (nb%16 lanes).

// P16W loads one group of weights: the scales widened to float32 in Z8,
// chunk j's low nibbles in Z(2j) and its high nibbles, left in place (16×
// the code), in Z(2j+1). S is the scales' address, C0..C3 the chunks'.
#define P16W(S, C0, C1, C2, C3) \
	VMOVDQU64 C0, Z0 \
	VMOVDQU64 C1, Z2 \
	VMOVDQU64 C2, Z4 \
	VMOVDQU64 C3, Z6 \
	P16SPLIT \
	VCVTPH2PS S, Z8

// P16WT is P16W for the row's short group: lanes past K1 load as zero
// (and read nothing).
#define P16WT(S, C0, C1, C2, C3) \
	VMOVDQU32.Z C0, K1, Z0 \
	VMOVDQU32.Z C1, K1, Z2 \
	VMOVDQU32.Z C2, K1, Z4 \
	VMOVDQU32.Z C3, K1, Z6 \
	P16SPLIT \
	VCVTPH2PS.Z S, K1, Z8

// P16SPLIT splits the codes in Z0, Z2, Z4, Z6 into low nibbles (in place)
// and high nibbles (Z1, Z3, Z5, Z7).
#define P16SPLIT \
	VPANDD Z0, Z30, Z1 \
	VPANDD Z0, Z29, Z0 \
	VPANDD Z2, Z30, Z3 \
	VPANDD Z2, Z29, Z2 \
	VPANDD Z4, Z30, Z5 \
	VPANDD Z4, Z29, Z4 \
	VPANDD Z6, Z30, Z7 \
	VPANDD Z6, Z29, Z6

// P16A adds the group's dot products with the activation record at rec
// into acc: the bias (-8·Σa per block) and the low nibbles' products in
// two int32 chains, the high nibbles' (16× the code) in two more, shifted
// back by 4 (exact: each is a multiple of 16), then one convert, the
// scales' product and one FMA. Z9..Z12 are scratch.
#define P16A(rec, acc) \
	P16DOT(rec) \
	VFMADD231PS Z9, Z10, acc

// P16DOT is P16A up to its FMA: the group's integer dot products with the
// record at rec, converted, in Z9, and the products of the two scales in
// Z10.
#define P16DOT(rec) \
	VMOVDQU32 576 rec, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPDPBUSD rec, Z0, Z9 \
	VPDPBUSD 64 rec, Z2, Z10 \
	VPDPBUSD 128 rec, Z4, Z9 \
	VPDPBUSD 192 rec, Z6, Z10 \
	VPDPBUSD 256 rec, Z1, Z11 \
	VPDPBUSD 320 rec, Z3, Z12 \
	VPDPBUSD 384 rec, Z5, Z11 \
	VPDPBUSD 448 rec, Z7, Z12 \
	P16FIN \
	VMULPS 512 rec, Z8, Z10

// P16R is P16A with the record in registers (P16LOADA): the decode GEMV
// runs two weight rows against one load of it.
#define P16R(acc) \
	VMOVDQA32 Z28, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPDPBUSD Z20, Z0, Z9 \
	VPDPBUSD Z21, Z2, Z10 \
	VPDPBUSD Z22, Z4, Z9 \
	VPDPBUSD Z23, Z6, Z10 \
	VPDPBUSD Z24, Z1, Z11 \
	VPDPBUSD Z25, Z3, Z12 \
	VPDPBUSD Z26, Z5, Z11 \
	VPDPBUSD Z27, Z7, Z12 \
	P16FIN \
	VMULPS Z31, Z8, Z10 \
	VFMADD231PS Z9, Z10, acc

// P16FIN adds P16A's four int32 chains into Z9 and converts it to float.
#define P16FIN \
	VPADDD Z12, Z11, Z11 \
	VPSRAD $4, Z11, Z11 \
	VPADDD Z10, Z9, Z9 \
	VPADDD Z11, Z9, Z9 \
	VCVTDQ2PS Z9, Z9

// The kernels for several activation rows split each group once for
// all of them, so they shift the high nibbles down there (P16SPLITS: four
// more shifts a group) and sum each row in two int32 chains instead of
// four (P16AS: no shift and two fewer instructions a row). The integer
// sums are the same, so every result keeps its bits: a row comes out as
// the decode kernel's.

// P16SPLITS splits the codes in Z0..Z3 into low nibbles (in place) and
// high nibbles shifted down (Z4..Z7): the order of the activation
// record's chunks, for PDOT8.
#define P16SPLITS \
	VPSRLW $4, Z0, Z4 \
	VPSRLW $4, Z1, Z5 \
	VPSRLW $4, Z2, Z6 \
	VPSRLW $4, Z3, Z7 \
	VPANDD Z0, Z29, Z0 \
	VPANDD Z1, Z29, Z1 \
	VPANDD Z2, Z29, Z2 \
	VPANDD Z3, Z29, Z3 \
	VPANDD Z4, Z29, Z4 \
	VPANDD Z5, Z29, Z5 \
	VPANDD Z6, Z29, Z6 \
	VPANDD Z7, Z29, Z7

// P16FULLS and P16TAILS are P16FULL and P16TAIL with P16SPLITS.
#define P16FULLS \
	VMOVDQU64 32(SI), Z0 \
	VMOVDQU64 96(SI), Z1 \
	VMOVDQU64 160(SI), Z2 \
	VMOVDQU64 224(SI), Z3 \
	P16SPLITS \
	VCVTPH2PS (SI), Z8

#define P16TAILS \
	MOVQ nb+8(FP), AX \
	ANDQ $15, AX \
	LEAQ (SI)(AX*2), DX \
	SHLQ $2, AX \
	LEAQ (DX)(AX*2), R14 \
	VMOVDQU32.Z (DX), K1, Z0 \
	VMOVDQU32.Z (DX)(AX*1), K1, Z1 \
	VMOVDQU32.Z (R14), K1, Z2 \
	VMOVDQU32.Z (R14)(AX*1), K1, Z3 \
	P16SPLITS \
	VCVTPH2PS.Z (SI), K1, Z8

// P16AS is P16A on a group split by P16SPLITS: the bias, then PDOT8.
#define P16AS(rec, acc) \
	VMOVDQU32 576 rec, Z9 \
	PDOT8(rec, acc)

// P16LOADA loads the activation record at DI for P16R: chunks into
// Z20..Z27, the biases into Z28, the scales into Z31.
#define P16LOADA \
	VMOVDQU64 (DI), Z20 \
	VMOVDQU64 64(DI), Z21 \
	VMOVDQU64 128(DI), Z22 \
	VMOVDQU64 192(DI), Z23 \
	VMOVDQU64 256(DI), Z24 \
	VMOVDQU64 320(DI), Z25 \
	VMOVDQU64 384(DI), Z26 \
	VMOVDQU64 448(DI), Z27 \
	VMOVDQU64 576(DI), Z28 \
	VMOVDQU64 512(DI), Z31

// P16FULL and P16TAIL load a full group at SI and the short group at SI
// (t = nb%16 lanes: scales at SI, chunks 4t bytes apart from SI+2t; AX,
// DX and R14 are scratch).
#define P16FULL P16W((SI), 32(SI), 96(SI), 160(SI), 224(SI))

#define P16TAIL P16TAILAT(SI)

// P16TAILAT is P16TAIL for the short group at base.
#define P16TAILAT(base) \
	MOVQ nb+8(FP), AX \
	ANDQ $15, AX \
	LEAQ (base)(AX*2), DX \
	SHLQ $2, AX \
	LEAQ (DX)(AX*2), R14 \
	P16WT((base), (DX), (DX)(AX*1), (R14), (R14)(AX*1))

// ROWPF2 is ROWPF (prefetch_amd64.h) for the pair of rows at R13: up to
// the kernel's distance (R9, Q4PDIST) past the second row's end, in one
// burst. Measured slower on cold rows (BenchmarkQRowsK): nine prefetches
// a pass spread over the loop (K = 4096: 15–18 against 21–25 GB/s), a
// second burst halfway through the pair, and PREFETCHT0 8 or 32 KiB
// ahead.
#define ROWPF2(lnta, lloop, ldone) \
	LEAQ (R13)(BX*2), DX \
	ADDQ R9, DX \
	PFUPTOHINT(pf+48(FP), lnta, lloop, ldone)

// P16TAILPAIR runs the short groups of t <= 8 lanes (t in AX) of the row
// pair at SI and SI+BX in one vector, the first row's blocks in lanes
// 0..7, the second's in 8..15, against the pair record after the short
// group's (DI+640: lanes 0..7 twice, q4pRecs), into Z16 and Z17: each lane
// adds into its row's accumulator exactly what P16TAIL and P16R would
// (the second row's lanes moved down to 0..7), so the sums keep their
// bits. The lanes t..7 of each half load as zero. K2 holds lanes 0..7
// (set once by the kernel); DX, R14 and Z9..Z12 are scratch.
#define P16TAILPAIR \
	LEAQ (SI)(AX*2), DX \
	SHLQ $2, AX \
	P16HALVES(Z0, Y0, Y9) \
	ADDQ AX, DX \
	P16HALVES(Z2, Y2, Y9) \
	ADDQ AX, DX \
	P16HALVES(Z4, Y4, Y9) \
	ADDQ AX, DX \
	P16HALVES(Z6, Y6, Y9) \
	P16SPLIT \
	LEAQ (SI)(BX*1), R14 \
	VMOVDQU16.Z (SI), K1, X8 \
	VMOVDQU16.Z (R14), K1, X9 \
	VINSERTI32X4 $1, X9, Y8, Y8 \
	VCVTPH2PS Y8, Z8 \
	LEAQ 640(DI), R14 \
	P16DOT((R14)) \
	VFMADD231PS Z9, Z10, K2, Z16 \
	VSHUFF64X2 $0xEE, Z9, Z9, Z9 \
	VSHUFF64X2 $0xEE, Z10, Z10, Z10 \
	VFMADD231PS Z9, Z10, K2, Z17

// P16HALVES loads t dwords (K1) of the first row's chunk at DX into the
// low half of z (y), the second row's (BX further) into its high half.
#define P16HALVES(z, y, tmp) \
	VMOVDQU32.Z (DX), K1, y \
	VMOVDQU32.Z (DX)(BX*1), K1, tmp \
	VINSERTI64X4 $1, tmp, z, z

// P16ROWSTART is PROWSTART (packed_amd64.h).
#define P16ROWSTART PROWSTART

// P16CONSTS loads Z29, Z30 and K1 (from nb+8(FP)).
#define P16CONSTS \
	MOVL $0x0F0F0F0F, AX \
	VPBROADCASTD AX, Z29 \
	MOVL $0xF0F0F0F0, AX \
	VPBROADCASTD AX, Z30 \
	MOVQ nb+8(FP), CX \
	ANDQ $15, CX \
	MOVL $1, AX \
	SHLL CX, AX \
	DECL AX \
	KMOVW AX, K1

// P16X4 and P16X8 run the group loaded by P16FULLS or P16TAILS against four (eight)
// activation rows (packed_amd64.h).
#define P16X4 PX4(P16AS)

#define P16X8 PX8(P16AS)

// func dotQ4P512rows(nr int, nb int, w *byte, rb int, lay *byte, y *float32, pf int)
//
// The decode GEMV's rows: y[i] = weight row i (rb bytes apart) · the
// activation row whose records are at lay, for nr rows. Rows go two at a
// time against one load of each activation record (P16R: a core loads one
// 512-bit vector a cycle, and the activations were half of the loads), the
// last odd one alone; a pair's short groups of up to eight lanes run in
// one vector (P16TAILPAIR: BenchmarkQRowsK l2 K768 52 → 55–57 GB/s, 4
// alternating rounds). Each weight line is prefetched once, |pf| bytes
// ahead (ROWPF; for a pair, that far past the second row), with
// PREFETCHNTA where pf > 0 (PrefetchStream), else PREFETCHT0.
TEXT ·dotQ4P512rows(SB), NOSPLIT, $0-56
	P16CONSTS
	MOVL $0xFF, AX
	KMOVW AX, K2
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+40(FP), R11
	MOVQ rb+24(FP), BX
	TESTQ R12, R12
	JEQ q4pr_end
	Q4PDIST
	CMPQ R12, $2
	JLT q4pr_one
q4pr_pair:
	ROWPF2(q4pr_pf2nta, q4pr_pf2, q4pr_pf2done)
	P16ROWSTART
	VPXORD Z17, Z17, Z17
	TESTQ CX, CX
	JEQ q4pr_ptail
q4pr_ploop:
	P16LOADA
	P16FULL
	P16R(Z16)
	P16W(0(SI)(BX*1), 32(SI)(BX*1), 96(SI)(BX*1), 160(SI)(BX*1), 224(SI)(BX*1))
	P16R(Z17)
	ADDQ $288, SI
	ADDQ $640, DI
	DECQ CX
	JNZ q4pr_ploop
q4pr_ptail:
	KORTESTW K1, K1
	JEQ q4pr_pdone
	MOVQ nb+8(FP), AX
	ANDQ $15, AX
	CMPQ AX, $8
	JGT q4pr_ptail16
	P16TAILPAIR
	JMP q4pr_pdone
q4pr_ptail16:
	P16LOADA
	P16TAIL
	P16R(Z16)
	LEAQ (SI)(BX*1), SI
	P16TAILAT(SI)
	P16R(Z17)
q4pr_pdone:
	MOVQ R11, AX
	HSUM2(Z16, Z17)
	ADDQ $8, R11
	LEAQ (R13)(BX*2), R13
	SUBQ $2, R12
	CMPQ R12, $2
	JGE q4pr_pair
	TESTQ R12, R12
	JEQ q4pr_end
	PROWS1(P16FULL, P16TAIL, P16A, $288, q4pr_one, q4pr_pfnta, q4pr_pf, q4pr_pfdone, q4pr_loop, q4pr_tail, q4pr_done)
q4pr_end:
	VZEROUPPER
	RET

// func dotQ4P512x4rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)
//
// dotQ4P512rows for four activation rows (records ld bytes apart): each
// group is loaded and split once for the four; the sums of weight row i
// go to y[r·ldy+i].
TEXT ·dotQ4P512x4rows(SB), NOSPLIT, $0-64
	PMANY(P16CONSTS, P16FULLS, P16TAILS, $288, PZ4, P16X4, PSTORE4, q4px4_row, q4px4_loop, q4px4_tail, q4px4_done, q4px4_end)

// func dotQ4P512x8rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)
//
// dotQ4P512x4rows for eight activation rows.
TEXT ·dotQ4P512x8rows(SB), NOSPLIT, $0-64
	PMANY(P16CONSTS, P16FULLS, P16TAILS, $288, PZ8, P16X8, PSTORE8, q4px8_row, q4px8_loop, q4px8_tail, q4px8_done, q4px8_end)

// Q4PAGATHER(j) gathers dword j of the group's blocks (at SI, 32 bytes
// apart; lanes of K1) into chunk j of the record at DI.
#define Q4PAGATHER(j) \
	KMOVW K1, K2 \
	VPXORD Z0, Z0, Z0 \
	VPGATHERDD (4*j)(SI)(Z31*4), K2, Z0 \
	VMOVDQU32 Z0, (64*j)(DI)

// func q4pActsAVX512(qs *int8, d *float32, nsum *int32, nb int, out *byte, idx *int32)
//
// The packed records (q4pRec bytes per group of 16 blocks) of one
// activation row of nb blocks: chunk j's dword i is dword j of block i's
// codes (one masked gather a chunk, idx holding 8i for lane i), then the
// 16 scales and the biases 8·nsum; lanes past the row's last block are
// zero. Every byte of every record is written.
TEXT ·q4pActsAVX512(SB), NOSPLIT, $0-48
	MOVQ qs+0(FP), SI
	MOVQ d+8(FP), R8
	MOVQ nsum+16(FP), R9
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), DI
	MOVQ idx+40(FP), AX
	VMOVDQU32 (AX), Z31

q4pa_group:
	TESTQ CX, CX
	JLE q4pa_done
	MOVQ CX, AX
	CMPQ AX, $16
	JLE q4pa_mask
	MOVQ $16, AX

q4pa_mask:
	MOVL $1, DX
	SHLXL AX, DX, DX
	DECL DX
	KMOVW DX, K1
	Q4PAGATHER(0)
	Q4PAGATHER(1)
	Q4PAGATHER(2)
	Q4PAGATHER(3)
	Q4PAGATHER(4)
	Q4PAGATHER(5)
	Q4PAGATHER(6)
	Q4PAGATHER(7)
	VMOVUPS.Z (R8), K1, Z1
	VMOVUPS Z1, 512(DI)
	VMOVDQU32.Z (R9), K1, Z2
	VPSLLD $3, Z2, Z2
	VMOVDQU32 Z2, 576(DI)
	ADDQ $512, SI
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $640, DI
	SUBQ $16, CX
	JMP q4pa_group

q4pa_done:
	VZEROUPPER
	RET
