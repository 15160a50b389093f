// Macros the grouped quantized kernels share (q4g_amd64.s, q8g_amd64.s).

// HSUM stores the horizontal sum of src (ysrc: its low half) at off(AX):
// lanes i and i+8, then i and i+4, then neighbours, then the two pairs,
// the tree two VHADDPS would sum in, but with a swap and a high-half move
// instead, each a single simple µop: on Zen 5 the two VHADDPS made the
// sums of a decode GEMV's short rows its most costly step. Measured on
// L1-resident packed Q4_0 rows without prefetch, cycles per 288 bytes
// (one group of 16 blocks): K = 768 18.6 → 13.9, K = 896 16.2 → 12.2,
// K = 2048 9.0 either way; BenchmarkQRowsK l2 K768 49–53 → 52–56 GB/s.
#define HSUM(src, ysrc, off) \
	VEXTRACTF64X4 $1, src, Y1 \
	VADDPS Y1, ysrc, Y1 \
	VEXTRACTF128 $1, Y1, X0 \
	VADDPS X1, X0, X0 \
	VPERMILPS $0xB1, X0, X1 \
	VADDPS X1, X0, X0 \
	VMOVHLPS X0, X0, X1 \
	VADDSS X1, X0, X0 \
	VMOVSS X0, off(AX)

// HSUM2 is HSUM of two registers at once, a's sum at 0(AX) and b's at
// 4(AX), each in HSUM's tree (so bit for bit HSUM's sums): the halves of
// both go into one register, and each step then adds for both. 12
// instructions against 18 for two HSUMs; Z0 and Z1 are scratch. The
// packed Q4_0 decode kernel's pairs of rows, L1-resident without
// prefetch: K = 768 13.5–14.0 → 13.1–13.4 cycles a group, K = 896
// 12.1–12.3 → 11.7–11.8 (3 alternating rounds).
#define HSUM2(a, b) \
	VSHUFF64X2 $0x44, b, a, Z0 \
	VSHUFF64X2 $0xEE, b, a, Z1 \
	VADDPS Z1, Z0, Z0 \
	VSHUFF64X2 $0xB1, Z0, Z0, Z1 \
	VADDPS Z1, Z0, Z0 \
	VPERMILPS $0xB1, Z0, Z1 \
	VADDPS Z1, Z0, Z0 \
	VPERMILPS $0x4E, Z0, Z1 \
	VADDPS Z1, Z0, Z0 \
	VMOVSS X0, 0(AX) \
	VEXTRACTF32X4 $2, Z0, X1 \
	VMOVSS X1, 4(AX)

// ZERO4 clears four vector registers.
#define ZERO4(a, b, c, d) \
	VPXORD a, a, a \
	VPXORD b, b, b \
	VPXORD c, c, c \
	VPXORD d, d, d

// FOLD4 adds the odd-group accumulators o0..o3 into the even ones e0..e3.
#define FOLD4(e0, e1, e2, e3, o0, o1, o2, o3) \
	VADDPS o0, e0, e0 \
	VADDPS o1, e1, e1 \
	VADDPS o2, e2, e2 \
	VADDPS o3, e3, e3

// STORE4 stores the sums of a..d (ya..yd: their low halves) at AX, AX+BX,
// AX+2·BX and AX+3·BX, and leaves AX at the last.
#define STORE4(a, b, c, d, ya, yb, yc, yd) \
	HSUM(a, ya, 0) \
	ADDQ BX, AX \
	HSUM(b, yb, 0) \
	ADDQ BX, AX \
	HSUM(c, yc, 0) \
	ADDQ BX, AX \
	HSUM(d, yd, 0)

// ROWSARGS loads the arguments of the many-weight-rows kernels for
// several activation rows (nr, n, w, rb, lay, ld, y, ldy): R12 rows left,
// R13 the weight row, R9 the records, R10 ld, R15 the outputs of the
// weight row, BX the bytes between two output rows.
#define ROWSARGS \
	MOVQ nr+0(FP), R12 \
	MOVQ w+16(FP), R13 \
	MOVQ lay+32(FP), R9 \
	MOVQ ld+40(FP), R10 \
	MOVQ y+48(FP), R15 \
	MOVQ ldy+56(FP), BX \
	SHLQ $2, BX

// ROWSNEXT moves on to the next weight row and its outputs, and counts it.
#define ROWSNEXT \
	ADDQ $4, R15 \
	ADDQ rb+24(FP), R13 \
	DECQ R12

// MANYROWS is the body of a many-weight-rows kernel for several activation
// rows (func(nr, ng int, w *byte, rb int, lay *byte, ld int, y *float32,
// ldy int)): CONSTS loads the kernel's constants; per weight row, LAYS
// points the extra registers at the activation rows' records, ZEROS clears
// the accumulators, EVEN and ODD run one group into the even-group and the
// odd-group accumulators (two per pass while two are left, a last one
// even), and FINISH folds the odd ones in and stores the row's sums from
// AX = R15 on (STORE4). lrow, lloop, ltail, ldone and lend are the labels.
#define MANYROWS(CONSTS, LAYS, ZEROS, EVEN, ODD, FINISH, lrow, lloop, ltail, ldone, lend) \
	ROWSARGS \
	CONSTS \
	TESTQ R12, R12 \
	JEQ lend \
lrow: \
	MOVQ ng+8(FP), CX \
	MOVQ R13, SI \
	MOVQ R9, DI \
	LAYS \
	ZEROS \
	CMPQ CX, $2 \
	JLT ltail \
lloop: \
	EVEN \
	ODD \
	SUBQ $2, CX \
	CMPQ CX, $2 \
	JGE lloop \
ltail: \
	TESTQ CX, CX \
	JEQ ldone \
	EVEN \
ldone: \
	MOVQ R15, AX \
	FINISH \
	ROWSNEXT \
	JNZ lrow \
lend: \
	VZEROUPPER \
	RET

// LAYS4 and LAYS8 point R11 (and R14) at the records of activation rows 3
// (and 6) for four (eight) rows.
#define LAYS4 \
	LEAQ (DI)(R10*2), R11 \
	ADDQ R10, R11

#define LAYS8 \
	LAYS4 \
	LEAQ (R11)(R10*2), R14 \
	ADDQ R10, R14

// ZEROS4 and ZEROS8 clear the accumulators of four rows (Z16..Z23) and of
// eight (Z8..Z23).
#define ZEROS4 \
	ZERO4(Z16, Z17, Z18, Z19) \
	ZERO4(Z20, Z21, Z22, Z23)

#define ZEROS8 \
	ZERO4(Z8, Z9, Z10, Z11) \
	ZERO4(Z12, Z13, Z14, Z15) \
	ZEROS4

// FINISH4 and FINISH8 fold and store four rows' sums (even groups in
// Z16..Z19, odd in Z20..Z23) and eight rows' (even in Z16..Z23, odd in
// Z8..Z15).
#define FINISH4 \
	FOLD4(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23) \
	STORE4(Z16, Z17, Z18, Z19, Y16, Y17, Y18, Y19)

#define FINISH8 \
	FOLD4(Z16, Z17, Z18, Z19, Z8, Z9, Z10, Z11) \
	FOLD4(Z20, Z21, Z22, Z23, Z12, Z13, Z14, Z15) \
	STORE4(Z16, Z17, Z18, Z19, Y16, Y17, Y18, Y19) \
	ADDQ BX, AX \
	STORE4(Z20, Z21, Z22, Z23, Y20, Y21, Y22, Y23)
