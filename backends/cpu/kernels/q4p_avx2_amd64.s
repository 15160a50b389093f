//go:build !noasm

#include "textflag.h"
#include "prefetch_amd64.h"

// The lane-packed Q4_0 kernels with AVX2 (q4p.go's layout and records,
// the AVX-512 kernels' in q4p_amd64.s): a 256-bit vector holds half a
// group, one block per 32-bit lane, so each group runs as two halves of
// eight lanes. A half's four code chunks are split into nibbles and
// multiplied with the record's activations by VPMADDUBSW (codes 0..15
// against int8: each pair sum is at most 2·15·128 = 3840 in magnitude);
// the eight int16 results add up exactly in int16 (at most 30720), and one
// VPMADDWD by ones widens them to one int32 per block. Then the bias
// (-8·Σa), one convert, the product of the weight and activation scales
// and one FMA into the row's float accumulator: against about ten vector
// instructions a block for the GGUF layout's AVX2 kernel (PAIR2 in
// q4g_amd64.s), about five.
//
// Every kernel runs each half in the same order (half 0, then half 1,
// group after group, the short group last) into one accumulator per
// activation row and sums it with Q2HSUM: a row's result is the same
// whatever the number of activation rows (speculative decoding verifies
// k tokens in one batch against one-token decoding).
//
// The short group (t = nb%16 lanes, chunks 4t bytes apart): a half of
// fewer than eight lanes loads its codes with VPMASKMOVD under its lane
// mask (masks: 8 dwords for lanes 0..7, then 8 for lanes 8..15;
// q4pAVX2Masks), which reads nothing past the row; where t >= 8, half 0's
// chunks end inside the row and load whole. The scales load whole (16
// bytes, inside the row) and the lanes past t are cleared after the
// widening (the bytes there may be any f16, infinities included).
//
// Constants: Y15 = 0x0F bytes, Y14 = 0x0001 words.

// Q2CONSTS loads Y15 and Y14.
#define Q2CONSTS \
	MOVL $0x0F0F0F0F, AX \
	VMOVD AX, X15 \
	VPBROADCASTD X15, Y15 \
	MOVL $0x00010001, AX \
	VMOVD AX, X14 \
	VPBROADCASTD X14, Y14

// Q2DOT adds one half (codes in Y0, Y2, Y4, Y6, weight scales as floats
// in Y8) against the half of the activation record at ro(rec) into acc.
// Y1, Y3, Y5, Y7 are scratch; Y8 is left with the scales' product.
#define Q2DOT(ro, rec, acc) \
	VPSRLW $4, Y0, Y1 \
	VPSRLW $4, Y2, Y3 \
	VPSRLW $4, Y4, Y5 \
	VPSRLW $4, Y6, Y7 \
	VPAND Y15, Y0, Y0 \
	VPAND Y15, Y1, Y1 \
	VPAND Y15, Y2, Y2 \
	VPAND Y15, Y3, Y3 \
	VPAND Y15, Y4, Y4 \
	VPAND Y15, Y5, Y5 \
	VPAND Y15, Y6, Y6 \
	VPAND Y15, Y7, Y7 \
	VPMADDUBSW ro+0(rec), Y0, Y0 \
	VPMADDUBSW ro+64(rec), Y2, Y2 \
	VPMADDUBSW ro+128(rec), Y4, Y4 \
	VPMADDUBSW ro+192(rec), Y6, Y6 \
	VPMADDUBSW ro+256(rec), Y1, Y1 \
	VPMADDUBSW ro+320(rec), Y3, Y3 \
	VPMADDUBSW ro+384(rec), Y5, Y5 \
	VPMADDUBSW ro+448(rec), Y7, Y7 \
	VPADDW Y1, Y0, Y0 \
	VPADDW Y3, Y2, Y2 \
	VPADDW Y5, Y4, Y4 \
	VPADDW Y7, Y6, Y6 \
	VPADDW Y2, Y0, Y0 \
	VPADDW Y6, Y4, Y4 \
	VPADDW Y4, Y0, Y0 \
	VPMADDWD Y14, Y0, Y0 \
	VPADDD ro+576(rec), Y0, Y0 \
	VCVTDQ2PS Y0, Y0 \
	VMULPS ro+512(rec), Y8, Y8 \
	VFMADD231PS Y0, Y8, acc


// Q2FULL adds the full group at SI against the record at DI into acc.
#define Q2FULL(acc) \
	VMOVDQU 32(SI), Y0 \
	VMOVDQU 96(SI), Y2 \
	VMOVDQU 160(SI), Y4 \
	VMOVDQU 224(SI), Y6 \
	VCVTPH2PS (SI), Y8 \
	Q2DOT(0, DI, acc) \
	VMOVDQU 64(SI), Y0 \
	VMOVDQU 128(SI), Y2 \
	VMOVDQU 192(SI), Y4 \
	VMOVDQU 256(SI), Y6 \
	VCVTPH2PS 16(SI), Y8 \
	Q2DOT(32, DI, acc)

// Q2TAILADDR points DX at the short group's first chunk (SI + 2t) and R14
// at its third, and leaves the chunks' stride 4t in AX (t = nb%16, not 0).
#define Q2TAILADDR \
	MOVQ nb+8(FP), AX \
	ANDQ $15, AX \
	LEAQ (SI)(AX*2), DX \
	SHLQ $2, AX \
	LEAQ (DX)(AX*2), R14

// Q2TAILHALF loads half h (code offset co, scale offset so) of the short
// group under the mask at mo(R8) (R8 = masks) into Y0, Y2, Y4, Y6 and Y8,
// for Q2DOT. Y9 is left with the mask.
#define Q2TAILHALF(co, so, mo) \
	VMOVDQU mo(R8), Y9 \
	VPMASKMOVD co(DX), Y9, Y0 \
	VPMASKMOVD co(DX)(AX*1), Y9, Y2 \
	VPMASKMOVD co(R14), Y9, Y4 \
	VPMASKMOVD co(R14)(AX*1), Y9, Y6 \
	VCVTPH2PS so(SI), Y8 \
	VANDPS Y9, Y8, Y8

// Q2TAILHALF0 is Q2TAILHALF for half 0 where t >= 8: its chunks, 32
// bytes each, end inside the row (2t + 12t + 32 <= 18t), so they load
// whole, without masks (a masked load is slower, and most short groups of
// real models are of eight or twelve blocks).
#define Q2TAILHALF0 \
	VMOVDQU (DX), Y0 \
	VMOVDQU (DX)(AX*1), Y2 \
	VMOVDQU (R14), Y4 \
	VMOVDQU (R14)(AX*1), Y6 \
	VCVTPH2PS (SI), Y8


// Q2HSUM stores the sum of the eight floats of acc (xacc: its low half)
// at (dst): the halves, then lanes two apart, then neighbours. X0 and X1
// are scratch.
#define Q2HSUM(acc, xacc, dst) \
	VEXTRACTF128 $1, acc, X1 \
	VADDPS X1, xacc, X0 \
	VPERMILPS $0x4E, X0, X1 \
	VADDPS X1, X0, X0 \
	VPERMILPS $0xB1, X0, X1 \
	VADDPS X1, X0, X0 \
	VMOVSS X0, dst

// Q2X4CHUNK multiplies the codes of chunk j (in Y0; co: the chunk's byte
// offset in a record half, ro + 64j) with the four rows' records at DI,
// DI+R8, DI+2·R8 and DI+R9 and adds the int16 sums into Y2..Y5. Y1, Y6
// and Y7 are scratch.
#define Q2X4CHUNK(co) \
	VPSRLW $4, Y0, Y1 \
	VPAND Y15, Y0, Y0 \
	VPAND Y15, Y1, Y1 \
	VPMADDUBSW co(DI), Y0, Y6 \
	VPMADDUBSW co+256(DI), Y1, Y7 \
	VPADDW Y6, Y2, Y2 \
	VPADDW Y7, Y2, Y2 \
	VPMADDUBSW co(DI)(R8*1), Y0, Y6 \
	VPMADDUBSW co+256(DI)(R8*1), Y1, Y7 \
	VPADDW Y6, Y3, Y3 \
	VPADDW Y7, Y3, Y3 \
	VPMADDUBSW co(DI)(R8*2), Y0, Y6 \
	VPMADDUBSW co+256(DI)(R8*2), Y1, Y7 \
	VPADDW Y6, Y4, Y4 \
	VPADDW Y7, Y4, Y4 \
	VPMADDUBSW co(DI)(R9*1), Y0, Y6 \
	VPMADDUBSW co+256(DI)(R9*1), Y1, Y7 \
	VPADDW Y6, Y5, Y5 \
	VPADDW Y7, Y5, Y5

// Q2X4FIN ends a half for one row: its int16 sums s widened, the bias,
// the convert, the scales' product (weight scales in Y12, the row's
// activation scales at ro+512 rec) and the FMA into acc, as Q2DOT. Y6 is
// scratch.
#define Q2X4FIN(s, ro, rec, acc) \
	VPMADDWD Y14, s, s \
	VPADDD ro+576 rec, s, s \
	VCVTDQ2PS s, s \
	VMULPS ro+512 rec, Y12, Y6 \
	VFMADD231PS s, Y6, acc

// Q2X4FINS ends a half (record offset ro) for the four rows.
#define Q2X4FINS(ro) \
	Q2X4FIN(Y2, ro, (DI), Y8) \
	Q2X4FIN(Y3, ro, (DI)(R8*1), Y9) \
	Q2X4FIN(Y4, ro, (DI)(R8*2), Y10) \
	Q2X4FIN(Y5, ro, (DI)(R9*1), Y11)

// Q2X4ZERO clears the four rows' int16 sums.
#define Q2X4ZERO \
	VPXOR Y2, Y2, Y2 \
	VPXOR Y3, Y3, Y3 \
	VPXOR Y4, Y4, Y4 \
	VPXOR Y5, Y5, Y5

// Q2X4FULLHALF runs half h (code offset co = 32h, scale offset so = 16h,
// record offset ro = 32h) of the full group at SI for the four rows.
#define Q2X4FULLHALF(co, so, ro) \
	VCVTPH2PS so(SI), Y12 \
	Q2X4ZERO \
	VMOVDQU 32+co(SI), Y0 \
	Q2X4CHUNK(ro) \
	VMOVDQU 96+co(SI), Y0 \
	Q2X4CHUNK(ro+64) \
	VMOVDQU 160+co(SI), Y0 \
	Q2X4CHUNK(ro+128) \
	VMOVDQU 224+co(SI), Y0 \
	Q2X4CHUNK(ro+192) \
	Q2X4FINS(ro)

// Q2X4TAILHALF is Q2X4FULLHALF for half h of the short group (Q2TAILADDR
// set DX, R14 and AX; the lane mask at mo of the masks, whose address is
// at masks+64(FP)). Y13 is left with the mask.
#define Q2X4TAILHALF(co, so, ro, mo) \
	MOVQ masks+64(FP), BX \
	VMOVDQU mo(BX), Y13 \
	VCVTPH2PS so(SI), Y12 \
	VANDPS Y13, Y12, Y12 \
	Q2X4ZERO \
	VPMASKMOVD co(DX), Y13, Y0 \
	Q2X4CHUNK(ro) \
	VPMASKMOVD co(DX)(AX*1), Y13, Y0 \
	Q2X4CHUNK(ro+64) \
	VPMASKMOVD co(R14), Y13, Y0 \
	Q2X4CHUNK(ro+128) \
	VPMASKMOVD co(R14)(AX*1), Y13, Y0 \
	Q2X4CHUNK(ro+192) \
	Q2X4FINS(ro)

// Q2X4HALF0 is Q2X4TAILHALF for half 0 where t >= 8: plain loads, as
// Q2TAILHALF0.
#define Q2X4HALF0 \
	VCVTPH2PS (SI), Y12 \
	Q2X4ZERO \
	VMOVDQU (DX), Y0 \
	Q2X4CHUNK(0) \
	VMOVDQU (DX)(AX*1), Y0 \
	Q2X4CHUNK(64) \
	VMOVDQU (R14), Y0 \
	Q2X4CHUNK(128) \
	VMOVDQU (R14)(AX*1), Y0 \
	Q2X4CHUNK(192) \
	Q2X4FINS(0)

// Q2GROUPS runs a weight row's groups (SI: the row, DI: the first
// record, CX: the full groups) for the kernels: FULL per full group, then
// for the short group (t = nb%16 lanes) TAILM0 where t < 8 (half 0
// masked), else TAIL0 (half 0 whole) and, where t > 8, TAILM1 (half 1
// masked). It ends at label ldone.
#define Q2GROUPS(FULL, TAILM0, TAIL0, TAILM1, lloop, ltail, lt8, ldone) \
	TESTQ CX, CX \
	JEQ ltail \
lloop: \
	FULL \
	ADDQ $288, SI \
	ADDQ $640, DI \
	DECQ CX \
	JNZ lloop \
ltail: \
	TESTQ $15, nb+8(FP) \
	JEQ ldone \
	Q2TAILADDR \
	MOVQ nb+8(FP), CX \
	ANDQ $15, CX \
	CMPQ CX, $8 \
	JGE lt8 \
	TAILM0 \
	JMP ldone \
lt8: \
	TAIL0 \
	CMPQ CX, $8 \
	JEQ ldone \
	TAILM1 \
ldone:

// The one-row kernel's steps for Q2GROUPS, into Y11. A full group first
// prefetches the lines up to R9 bytes past its end (Q2ROWPF).
#define Q2X1FULL \
	LEAQ 288(SI)(R9*1), DX \
	PFUPTO(q2r_gpf, q2r_gpfdone) \
	Q2FULL(Y11)

#define Q2X1TAILM0 \
	Q2TAILHALF(0, 0, 0) \
	Q2DOT(0, DI, Y11)

#define Q2X1TAIL0 \
	Q2TAILHALF0 \
	Q2DOT(0, DI, Y11)

#define Q2X1TAILM1 \
	Q2TAILHALF(32, 16, 32) \
	Q2DOT(32, DI, Y11)

// The four-row kernel's steps for Q2GROUPS (and Q2X4HALF0), into Y8..Y11.
#define Q2X4FULL \
	Q2X4FULLHALF(0, 0, 0) \
	Q2X4FULLHALF(32, 16, 32)

#define Q2X4TAILM0 Q2X4TAILHALF(0, 0, 0, 0)

#define Q2X4TAILM1 Q2X4TAILHALF(32, 16, 32, 32)

// Q2ROWPF is the one-row kernel's prefetch at a row's start (the row at
// R13, its bytes in BX, the distance in R9, the next line to prefetch in
// R10): PREFETCHT0 of the lines up to R9 bytes past the row's end, or past
// its first two groups where the row is longer, in one burst; each full
// group then asks for the lines up to R9 bytes past its own end
// (Q2X1FULL). Every weight line is prefetched once, about R9 bytes ahead
// of its loads. The burst alone (ROWPF1) suits short rows, but on a Zen 3
// guest a row of 4864 (43 lines, Qwen2-0.5B's down projection) read its
// cold weights at 0.78–0.83 of the read probe and, prefetched group by
// group, at 0.90 (one and two threads, turn about with the probe); rows of
// 768–2048 read at 0.87–0.97 either way.
#define Q2ROWPF \
	MOVQ BX, DX \
	MOVQ $576, AX \
	CMPQ DX, AX \
	CMOVQGT AX, DX \
	ADDQ R13, DX \
	ADDQ R9, DX \
	PFUPTO(q2r_pf, q2r_pfdone)

// func dotQ4PAVX2rows(nr int, nb int, w *byte, rb int, lay *byte, y *float32, pf int, masks *uint32)
//
// The decode GEMV's rows: y[i] = weight row i (rb bytes apart) · the
// activation row whose records are at lay, for nr rows. Each weight line
// is prefetched once, |pf| bytes ahead, with PREFETCHT0 whatever pf's
// sign (Q2ROWPF, Q2X1FULL).
TEXT ·dotQ4PAVX2rows(SB), NOSPLIT, $0-64
	Q2CONSTS
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+40(FP), R11
	MOVQ rb+24(FP), BX
	MOVQ masks+56(FP), R8
	TESTQ R12, R12
	JEQ q2r_end
	Q4PDIST
q2r_row:
	Q2ROWPF
	MOVQ nb+8(FP), CX
	SHRQ $4, CX
	MOVQ R13, SI
	MOVQ lay+32(FP), DI
	VXORPS Y11, Y11, Y11
	Q2GROUPS(Q2X1FULL, Q2X1TAILM0, Q2X1TAIL0, Q2X1TAILM1, q2r_loop, q2r_tail, q2r_t8, q2r_done)
	Q2HSUM(Y11, X11, (R11))
	ADDQ $4, R11
	ADDQ BX, R13
	DECQ R12
	JNZ q2r_row
q2r_end:
	VZEROUPPER
	RET

// func dotQ4PAVX2x4rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int, masks *uint32)
//
// dotQ4PAVX2rows for four activation rows (records ld bytes apart): each
// chunk is loaded and split once for the four; the sums of weight row i
// go to y[r·ldy+i]. No prefetch.
TEXT ·dotQ4PAVX2x4rows(SB), NOSPLIT, $0-72
	Q2CONSTS
	MOVQ nr+0(FP), R12
	MOVQ w+16(FP), R13
	MOVQ y+48(FP), R11
	MOVQ ld+40(FP), R8
	LEAQ (R8)(R8*2), R9
	MOVQ ldy+56(FP), R15
	SHLQ $2, R15
	TESTQ R12, R12
	JEQ q2x4_end
q2x4_row:
	MOVQ nb+8(FP), CX
	SHRQ $4, CX
	MOVQ R13, SI
	MOVQ lay+32(FP), DI
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	Q2GROUPS(Q2X4FULL, Q2X4TAILM0, Q2X4HALF0, Q2X4TAILM1, q2x4_loop, q2x4_tail, q2x4_t8, q2x4_done)
	MOVQ R11, BX
	Q2HSUM(Y8, X8, (BX))
	ADDQ R15, BX
	Q2HSUM(Y9, X9, (BX))
	ADDQ R15, BX
	Q2HSUM(Y10, X10, (BX))
	ADDQ R15, BX
	Q2HSUM(Y11, X11, (BX))
	ADDQ $4, R11
	ADDQ rb+24(FP), R13
	DECQ R12
	JNZ q2x4_row
q2x4_end:
	VZEROUPPER
	RET
