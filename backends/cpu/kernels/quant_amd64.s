//go:build !noasm

#include "textflag.h"
#include "prefetch_amd64.h"

// Quantized row dot products: one weight row (nb blocks of Q4_0 or Q8_0)
// against one q8 activation row (qs, float32 block scales d, negated block
// sums). Per block: integer dot of 32 byte pairs into 8 int32 lanes,
// convert, and one FMA with the product of the two block scales. Two
// blocks per iteration with separate float accumulators (Y0, Y8) hide the
// FMA latency; the lanes are summed once at the end.
//
// Registers: SI weights, DI activations, R8 activation scales, R9 negated
// sums, CX blocks left; Y15 = bytes 0x0F, Y14 = int16 ones, Y13 = qword
// shift counts {0, 0, 4, 4}.

// SCALE leaves dw·da of the block whose f16 weight scale is at woff(SI)
// and activation scale at doff(R8) in all lanes of Y6.
#define SCALE(woff, doff) \
	VPBROADCASTW woff(SI), X6 \
	VCVTPH2PS X6, Y6 \
	VBROADCASTSS doff(R8), Y7 \
	VMULPS Y7, Y6, Y6

// NIBBLES puts the 32 Q4 codes of the block at woff(SI) in Y1 as unsigned
// bytes in element order: the 16 code bytes go to both halves, the upper
// half is shifted down by 4, and the mask keeps one nibble per byte.
#define NIBBLES(woff) \
	VBROADCASTI128 woff+2(SI), Y1 \
	VPSRLVQ Y13, Y1, Y1 \
	VPAND Y15, Y1, Y1

// BIAS8 sets every lane of Y4 to -Σa of the block: summed over the 8
// lanes at the end this is the -8·Σa offset correction of Q4_0.
#define BIAS8(soff) \
	VPBROADCASTD soff(R9), Y4

#define CONSTS \
	MOVL $0x0F0F0F0F, AX \
	VMOVD AX, X15 \
	VPBROADCASTD X15, Y15 \
	MOVL $0x00010001, AX \
	VMOVD AX, X14 \
	VPBROADCASTD X14, Y14 \
	MOVQ $4, AX \
	VMOVQ AX, X13 \
	VPBROADCASTQ X13, X13 \
	VPXOR X12, X12, X12 \
	VINSERTI128 $1, X13, Y12, Y13 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y8, Y8, Y8

#define ARGS \
	MOVQ nb+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ qs+16(FP), DI \
	MOVQ d+24(FP), R8 \
	MOVQ nsum+32(FP), R9

// HSUMTO adds Y0 and Y8 and stores the horizontal sum at dst (X1 is
// scratch).
#define HSUMTO(dst) \
	VADDPS Y8, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0 \
	VMOVSS X0, dst

// HSUM returns HSUMTO's sum.
#define HSUM \
	HSUMTO(ret+40(FP)) \
	VZEROUPPER \
	RET

// Q4 block with AVX2: VPMADDUBSW (unsigned codes × signed activations; the
// pair sums fit int16: 2·15·127) then VPMADDWD by ones to int32.
#define Q4_AVX2(woff, aoff, soff, doff, acc) \
	NIBBLES(woff) \
	VPMADDUBSW aoff(DI), Y1, Y3 \
	VPMADDWD Y14, Y3, Y3 \
	BIAS8(soff) \
	VPADDD Y4, Y3, Y3 \
	VCVTDQ2PS Y3, Y3 \
	SCALE(woff, doff) \
	VFMADD231PS Y6, Y3, acc

// func dotQ4AVX2(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32
TEXT ·dotQ4AVX2(SB), NOSPLIT, $0-44
	ARGS
	CONSTS
	CMPQ CX, $2
	JLT q4a2_tail
q4a2_loop:
	Q4_AVX2(0, 0, 0, 0, Y0)
	Q4_AVX2(18, 32, 4, 4, Y8)
	ADDQ $36, SI
	ADDQ $64, DI
	ADDQ $8, R8
	ADDQ $8, R9
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q4a2_loop
q4a2_tail:
	TESTQ CX, CX
	JEQ q4a2_done
	Q4_AVX2(0, 0, 0, 0, Y0)
q4a2_done:
	HSUM

// Q4 block with AVX-512 VNNI: VPDPBUSD accumulates onto the bias vector.
#define Q4_VNNI(woff, aoff, soff, doff, acc) \
	NIBBLES(woff) \
	BIAS8(soff) \
	VPDPBUSD aoff(DI), Y1, Y4 \
	VCVTDQ2PS Y4, Y3 \
	SCALE(woff, doff) \
	VFMADD231PS Y6, Y3, acc

// func dotQ4VNNI(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32
TEXT ·dotQ4VNNI(SB), NOSPLIT, $0-44
	ARGS
	CONSTS
	CMPQ CX, $2
	JLT q4v_tail
q4v_loop:
	Q4_VNNI(0, 0, 0, 0, Y0)
	Q4_VNNI(18, 32, 4, 4, Y8)
	ADDQ $36, SI
	ADDQ $64, DI
	ADDQ $8, R8
	ADDQ $8, R9
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q4v_loop
q4v_tail:
	TESTQ CX, CX
	JEQ q4v_done
	Q4_VNNI(0, 0, 0, 0, Y0)
q4v_done:
	HSUM

// Q8 block: both operands signed, so multiply |w| (unsigned) by a with
// w's sign applied (VPSIGNB); |−128| = 128 is still exact as unsigned.
#define Q8_SIGN(woff, aoff) \
	VMOVDQU woff+2(SI), Y1 \
	VPABSB Y1, Y2 \
	VMOVDQU aoff(DI), Y3 \
	VPSIGNB Y1, Y3, Y3

#define Q8_AVX2(woff, aoff, doff, acc) \
	Q8_SIGN(woff, aoff) \
	VPMADDUBSW Y3, Y2, Y3 \
	VPMADDWD Y14, Y3, Y3 \
	VCVTDQ2PS Y3, Y3 \
	SCALE(woff, doff) \
	VFMADD231PS Y6, Y3, acc

// func dotQ8AVX2(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32
TEXT ·dotQ8AVX2(SB), NOSPLIT, $0-44
	ARGS
	CONSTS
	CMPQ CX, $2
	JLT q8a2_tail
q8a2_loop:
	Q8_AVX2(0, 0, 0, Y0)
	Q8_AVX2(34, 32, 4, Y8)
	ADDQ $68, SI
	ADDQ $64, DI
	ADDQ $8, R8
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q8a2_loop
q8a2_tail:
	TESTQ CX, CX
	JEQ q8a2_done
	Q8_AVX2(0, 0, 0, Y0)
q8a2_done:
	HSUM

#define Q8_VNNI(woff, aoff, doff, acc) \
	Q8_SIGN(woff, aoff) \
	VPXOR Y4, Y4, Y4 \
	VPDPBUSD Y3, Y2, Y4 \
	VCVTDQ2PS Y4, Y3 \
	SCALE(woff, doff) \
	VFMADD231PS Y6, Y3, acc

// func dotQ8VNNI(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32
TEXT ·dotQ8VNNI(SB), NOSPLIT, $0-44
	ARGS
	CONSTS
	CMPQ CX, $2
	JLT q8v_tail
q8v_loop:
	Q8_VNNI(0, 0, 0, Y0)
	Q8_VNNI(34, 32, 4, Y8)
	ADDQ $68, SI
	ADDQ $64, DI
	ADDQ $8, R8
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q8v_loop
q8v_tail:
	TESTQ CX, CX
	JEQ q8v_done
	Q8_VNNI(0, 0, 0, Y0)
q8v_done:
	HSUM

// func dotQ8AVX2rows(nr int, nb int, w *byte, rb int, qs *int8, d *float32, y *float32)
//
// The decode GEMV's rows: dotQ8AVX2 (the same arithmetic, so the same sum
// bit for bit) for nr weight rows rb bytes apart, y[i] = row i's sum. Each
// pass of two blocks (68 bytes) prefetches the two lines 16 KiB ahead of
// it (PREFETCHT0), so every weight line is asked for about once, well
// ahead of its loads. On a Zen 3 guest (AVX2) over 256 MB of cold Q8_0
// rows (BenchmarkQ8ReadShare, turn about with the read probe), the row
// dot products one call each, without prefetch, read at 0.63–0.72 of the
// probe; this kernel at 0.96–1.00 (rows of 768 and 2048, one and two
// threads). A burst at each row's start (ROWPF) reached 0.77–0.97, and
// 4 KiB ahead 0.85–0.94.
TEXT ·dotQ8AVX2rows(SB), NOSPLIT, $0-56
	CONSTS
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+48(FP), R11
	TESTQ R12, R12
	JEQ q8ar_end
q8ar_row:
	MOVQ nb+8(FP), CX
	MOVQ R13, SI
	MOVQ qs+32(FP), DI
	MOVQ d+40(FP), R8
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
	CMPQ CX, $2
	JLT q8ar_tail
q8ar_loop:
	PREFETCHT0 QPF(SI)
	PREFETCHT0 QPF+64(SI)
	Q8_AVX2(0, 0, 0, Y0)
	Q8_AVX2(34, 32, 4, Y8)
	ADDQ $68, SI
	ADDQ $64, DI
	ADDQ $8, R8
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q8ar_loop
q8ar_tail:
	TESTQ CX, CX
	JEQ q8ar_done
	Q8_AVX2(0, 0, 0, Y0)
q8ar_done:
	HSUMTO((R11))
	ADDQ $4, R11
	ADDQ rb+24(FP), R13
	DECQ R12
	JNZ q8ar_row
q8ar_end:
	VZEROUPPER
	RET

// Q8X4ROW is one activation row's part of a Q8_0 block for dotQ8AVX2x4rows
// (Y8 the weight codes, Y9 their magnitudes, Y10 the weight scale; the
// row's codes at a, its scale at d): Q8_AVX2's steps in its order, into
// acc.
#define Q8X4ROW(a, d, acc) \
	VMOVDQU a, Y12 \
	VPSIGNB Y8, Y12, Y12 \
	VPMADDUBSW Y12, Y9, Y12 \
	VPMADDWD Y14, Y12, Y12 \
	VCVTDQ2PS Y12, Y12 \
	VBROADCASTSS d, Y13 \
	VMULPS Y13, Y10, Y13 \
	VFMADD231PS Y13, Y12, acc

// Q8X4BLK is the block at woff(SI) for the four activation rows (codes
// at aoff(DI) and K = R9 bytes apart, scales at doff(R8) and R14 bytes
// apart; R15 = 3·K, AX = 3·R14), into a0..a3.
#define Q8X4BLK(woff, aoff, doff, a0, a1, a2, a3) \
	VMOVDQU woff+2(SI), Y8 \
	VPABSB Y8, Y9 \
	VPBROADCASTW woff(SI), X10 \
	VCVTPH2PS X10, Y10 \
	Q8X4ROW(aoff(DI), doff(R8), a0) \
	Q8X4ROW(aoff(DI)(R9*1), doff(R8)(R14*1), a1) \
	Q8X4ROW(aoff(DI)(R9*2), doff(R8)(R14*2), a2) \
	Q8X4ROW(aoff(DI)(R15*1), doff(R8)(AX*1), a3)

// Q8X4SUM stores row r's sum (its accumulators a and b) at dst, as
// dotQ8AVX2 ends.
#define Q8X4SUM(a, b, xa, dst) \
	VADDPS b, a, a \
	VEXTRACTF128 $1, a, X12 \
	VADDPS X12, xa, xa \
	VHADDPS xa, xa, xa \
	VHADDPS xa, xa, xa \
	VMOVSS xa, dst

// func dotQ8AVX2x4rows(nr int, nb int, w *byte, rb int, qs *int8, d *float32, k int, y *float32, ldy int)
//
// dotQ8AVX2 for nr weight rows (rb bytes apart) against four activation
// rows (codes k bytes apart, scales nb floats apart): y[r·ldy+i] = weight
// row i · activation row r, each bit for bit dotQ8AVX2's sum (the same
// steps in the same order per row). A block's codes are loaded, their
// magnitudes taken and its scale widened once for the four rows. No
// prefetch: prefill's tasks read their weight rows from cache once per
// four activation rows.
TEXT ·dotQ8AVX2x4rows(SB), NOSPLIT, $0-72
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVQ k+48(FP), R9
	LEAQ (R9)(R9*2), R15
	MOVQ nb+8(FP), R14
	SHLQ $2, R14
	LEAQ (R14)(R14*2), AX
	MOVQ ldy+64(FP), BX
	SHLQ $2, BX
	LEAQ (BX)(BX*2), DX
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+56(FP), R11
	TESTQ R12, R12
	JEQ q8x4_end
q8x4_row:
	MOVQ nb+8(FP), CX
	MOVQ R13, SI
	MOVQ qs+32(FP), DI
	MOVQ d+40(FP), R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	CMPQ CX, $2
	JLT q8x4_tail
q8x4_loop:
	Q8X4BLK(0, 0, 0, Y0, Y1, Y2, Y3)
	Q8X4BLK(34, 32, 4, Y4, Y5, Y6, Y7)
	ADDQ $68, SI
	ADDQ $64, DI
	ADDQ $8, R8
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q8x4_loop
q8x4_tail:
	TESTQ CX, CX
	JEQ q8x4_done
	Q8X4BLK(0, 0, 0, Y0, Y1, Y2, Y3)
q8x4_done:
	Q8X4SUM(Y0, Y4, X0, (R11))
	Q8X4SUM(Y1, Y5, X1, (R11)(BX*1))
	Q8X4SUM(Y2, Y6, X2, (R11)(BX*2))
	Q8X4SUM(Y3, Y7, X3, (R11)(DX*1))
	ADDQ $4, R11
	ADDQ rb+24(FP), R13
	DECQ R12
	JNZ q8x4_row
q8x4_end:
	VZEROUPPER
	RET
