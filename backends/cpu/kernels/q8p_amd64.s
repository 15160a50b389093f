//go:build !noasm

#include "textflag.h"
#include "qrows_amd64.h"
#include "prefetch_amd64.h"
#include "packed_amd64.h"

// The lane-packed Q8_0 kernels (q8p.go): weights in groups of 16 blocks
// with one block per 32-bit lane (codes plus 128, as unsigned bytes),
// against the packed Q4_0 kernels' activation records of 640 bytes (eight
// chunks of activations, 16 scales, 16 biases 8·nsum). Every kernel runs
// one group as P8W (the weights, once) and P8A (one activation row), in
// the same order, into one float accumulator per activation row, and sums
// it with HSUM: a row's result is the same whatever the number of
// activation rows (speculative decoding verifies k tokens in one batch
// against one-token decoding). K1 is the lane mask of the row's short
// group (nb%16 lanes).

// P8FULL loads the full group at SI: chunk j in Zj, the scales widened to
// float32 in Z8.
#define P8FULL \
	VMOVDQU64 32(SI), Z0 \
	VMOVDQU64 96(SI), Z1 \
	VMOVDQU64 160(SI), Z2 \
	VMOVDQU64 224(SI), Z3 \
	VMOVDQU64 288(SI), Z4 \
	VMOVDQU64 352(SI), Z5 \
	VMOVDQU64 416(SI), Z6 \
	VMOVDQU64 480(SI), Z7 \
	VCVTPH2PS (SI), Z8

// P8TAIL loads the short group at SI (t = nb%16 lanes: scales at SI,
// chunks 4t bytes apart from SI+2t); lanes past K1 load as zero and read
// nothing. AX and DX are scratch.
#define P8TAIL \
	MOVQ nb+8(FP), AX \
	ANDQ $15, AX \
	LEAQ (SI)(AX*2), DX \
	SHLQ $2, AX \
	VMOVDQU32.Z (DX), K1, Z0 \
	ADDQ AX, DX \
	VMOVDQU32.Z (DX), K1, Z1 \
	ADDQ AX, DX \
	VMOVDQU32.Z (DX), K1, Z2 \
	ADDQ AX, DX \
	VMOVDQU32.Z (DX), K1, Z3 \
	ADDQ AX, DX \
	VMOVDQU32.Z (DX), K1, Z4 \
	ADDQ AX, DX \
	VMOVDQU32.Z (DX), K1, Z5 \
	ADDQ AX, DX \
	VMOVDQU32.Z (DX), K1, Z6 \
	ADDQ AX, DX \
	VMOVDQU32.Z (DX), K1, Z7 \
	VCVTPH2PS.Z (SI), K1, Z8

// P8A adds the group's dot products with the activation record at rec
// into acc: the bias (16 × the record's 8·nsum = -128·Σa per block, which
// takes out the codes' +128) and the eight chunks' products in two int32
// chains, then one convert, the scales' product and one FMA. Z9 and Z10
// are scratch.
#define P8A(rec, acc) \
	VMOVDQU32 576 rec, Z9 \
	VPSLLD $4, Z9, Z9 \
	PDOT8(rec, acc)

// P8CONSTS sets K1 from nb+8(FP).
#define P8CONSTS \
	MOVQ nb+8(FP), CX \
	ANDQ $15, CX \
	MOVL $1, AX \
	SHLL CX, AX \
	DECL AX \
	KMOVW AX, K1

// P8X4 and P8X8 run the group loaded by P8FULL or P8TAIL against four
// (eight) activation rows (packed_amd64.h).
#define P8X4 PX4(P8A)

#define P8X8 PX8(P8A)

// func dotQ8P512rows(nr int, nb int, w *byte, rb int, lay *byte, y *float32, pf int)
//
// The decode GEMV's rows: y[i] = weight row i (rb bytes apart) · the
// activation row whose records are at lay, for nr rows. Each weight line
// is prefetched once, |pf| bytes ahead (ROWPF1), with PREFETCHNTA where
// pf > 0 (PrefetchStream), else PREFETCHT0.
TEXT ·dotQ8P512rows(SB), NOSPLIT, $0-56
	P8CONSTS
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+40(FP), R11
	MOVQ rb+24(FP), BX
	TESTQ R12, R12
	JEQ q8pr_end
	Q4PDIST

	PROWS1(P8FULL, P8TAIL, P8A, $544, q8pr_row, q8pr_pfnta, q8pr_pf, q8pr_pfdone, q8pr_loop, q8pr_tail, q8pr_done)

q8pr_end:
	VZEROUPPER
	RET

// func dotQ8P512x4rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)
//
// dotQ8P512rows for four activation rows (records ld bytes apart): each
// group is loaded once for the four; the sums of weight row i go to
// y[r·ldy+i].
TEXT ·dotQ8P512x4rows(SB), NOSPLIT, $0-64
	PMANY(P8CONSTS, P8FULL, P8TAIL, $544, PZ4, P8X4, PSTORE4, q8px4_row, q8px4_loop, q8px4_tail, q8px4_done, q8px4_end)

// func dotQ8P512x8rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)
//
// dotQ8P512x4rows for eight activation rows.
TEXT ·dotQ8P512x8rows(SB), NOSPLIT, $0-64
	PMANY(P8CONSTS, P8FULL, P8TAIL, $544, PZ8, P8X8, PSTORE8, q8px8_row, q8px8_loop, q8px8_tail, q8px8_done, q8px8_end)
