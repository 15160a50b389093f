// Macros the lane-packed AVX-512 kernels share (q4p_amd64.s, q8p_amd64.s).
// A family defines A(rec, acc), which runs the group its FULL or TAIL
// loaded (from SI) against the activation record at rec into acc, and
// CONSTS, which sets up its constants and K1 (the short group's lanes).

// PDOT8 adds a group's dot products with the activation record at rec
// into acc, the group's eight 64-byte chunks of unsigned codes in Z0..Z7
// (Zj against the record's chunk j) and its scales in Z8, Z9 holding the
// int32 biases the chains start from: the products in two int32 chains,
// then one convert, the scales' product and one FMA. Z10 is scratch.
#define PDOT8(rec, acc) \
	VPXORD Z10, Z10, Z10 \
	VPDPBUSD rec, Z0, Z9 \
	VPDPBUSD 64 rec, Z1, Z10 \
	VPDPBUSD 128 rec, Z2, Z9 \
	VPDPBUSD 192 rec, Z3, Z10 \
	VPDPBUSD 256 rec, Z4, Z9 \
	VPDPBUSD 320 rec, Z5, Z10 \
	VPDPBUSD 384 rec, Z6, Z9 \
	VPDPBUSD 448 rec, Z7, Z10 \
	VPADDD Z10, Z9, Z9 \
	VCVTDQ2PS Z9, Z9 \
	VMULPS 512 rec, Z8, Z10 \
	VFMADD231PS Z9, Z10, acc

// PROWSTART points SI at the weight row R13 and DI at the first
// activation record, sets CX to the row's full groups and clears Z16.
#define PROWSTART \
	MOVQ nb+8(FP), CX \
	SHRQ $4, CX \
	MOVQ R13, SI \
	MOVQ lay+32(FP), DI \
	VPXORD Z16, Z16, Z16

// PROWS1 is the loop of a family's decode kernel (func(nr, nb int, w
// *byte, rb int, lay *byte, y *float32, pf int)) over its rows one at a
// time, from the weight row at R13 (R12 rows left, BX bytes apart, the
// outputs at R11), each prefetched with ROWPF1 (prefetch_amd64.h), each
// group GB bytes (an immediate) loaded by FULL or TAIL and run by A into
// Z16, then summed with HSUM. It falls through when no row is left.
#define PROWS1(FULL, TAIL, A, GB, lrow, lnta, lpf, lpfdone, lloop, ltail, ldone) \
lrow: \
	ROWPF1(lnta, lpf, lpfdone) \
	PROWSTART \
	TESTQ CX, CX \
	JEQ ltail \
lloop: \
	FULL \
	A((DI), Z16) \
	ADDQ GB, SI \
	ADDQ $640, DI \
	DECQ CX \
	JNZ lloop \
ltail: \
	KORTESTW K1, K1 \
	JEQ ldone \
	TAIL \
	A((DI), Z16) \
ldone: \
	MOVQ R11, AX \
	HSUM(Z16, Y16, 0) \
	ADDQ $4, R11 \
	ADDQ BX, R13 \
	DECQ R12 \
	JNZ lrow

// PX4(A) and PX8(A) run the loaded group against four (eight) activation
// rows: records at DI, DI+R8, DI+2·R8, DI+R9 (R9 = 3·R8), and the same
// from BX = DI+4·R8, into Z16..Z19 (Z16..Z23).
#define PX4(A) \
	A((DI), Z16) \
	A((DI)(R8*1), Z17) \
	A((DI)(R8*2), Z18) \
	A((DI)(R9*1), Z19)

#define PX8(A) \
	PX4(A) \
	A((BX), Z20) \
	A((BX)(R8*1), Z21) \
	A((BX)(R8*2), Z22) \
	A((BX)(R9*1), Z23)

// PSTORE4 stores the sums of Z16..Z19 at R11, R11+R15, … (R15 the bytes
// between two output rows; BX, free at a row's end, takes it for STORE4);
// PSTORE8 those of Z16..Z23.
#define PSTORE4 \
	MOVQ R11, AX \
	MOVQ R15, BX \
	STORE4(Z16, Z17, Z18, Z19, Y16, Y17, Y18, Y19)

#define PSTORE8 \
	PSTORE4 \
	ADDQ BX, AX \
	STORE4(Z20, Z21, Z22, Z23, Y20, Y21, Y22, Y23)

// PZ4 and PZ8 clear the accumulators of four (eight) rows.
#define PZ4 ZERO4(Z16, Z17, Z18, Z19)

#define PZ8 \
	PZ4 \
	ZERO4(Z20, Z21, Z22, Z23)

// PMANY is the body of a family's kernels for several activation rows
// (func(nr, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy
// int)): per weight row, ZEROS clears the accumulators, X runs each group
// (GB bytes of weights, an immediate; a 640-byte record per activation
// row) against the rows, STORE stores the row's sums.
#define PMANY(CONSTS, FULL, TAIL, GB, ZEROS, X, STORE, lrow, lloop, ltail, ldone, lend) \
	CONSTS \
	MOVQ nr+0(FP), R12 \
	MOVQ w+16(FP), R13 \
	MOVQ y+48(FP), R11 \
	MOVQ ld+40(FP), R8 \
	LEAQ (R8)(R8*2), R9 \
	MOVQ ldy+56(FP), R15 \
	SHLQ $2, R15 \
	TESTQ R12, R12 \
	JEQ lend \
lrow: \
	MOVQ nb+8(FP), CX \
	SHRQ $4, CX \
	MOVQ R13, SI \
	MOVQ lay+32(FP), DI \
	LEAQ (DI)(R8*4), BX \
	ZEROS \
	TESTQ CX, CX \
	JEQ ltail \
lloop: \
	FULL \
	X \
	ADDQ GB, SI \
	ADDQ $640, DI \
	ADDQ $640, BX \
	DECQ CX \
	JNZ lloop \
ltail: \
	KORTESTW K1, K1 \
	JEQ ldone \
	TAIL \
	X \
ldone: \
	STORE \
	ADDQ $4, R11 \
	ADDQ rb+24(FP), R13 \
	DECQ R12 \
	JNZ lrow \
lend: \
	VZEROUPPER \
	RET
