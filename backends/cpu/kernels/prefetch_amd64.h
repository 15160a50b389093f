// QPF is how far ahead of its loads a decode GEMV prefetches its weights
// (PREFETCHT0, every line). A streaming read on one core is bound by the
// loads it keeps in flight, not by the DRAM: on a Zen 5 guest, 16 KiB
// ahead took the q4_0 decode of a 110M model from about 340 to 470 tok/s
// on one thread.
#define QPF 16384

// ROWPF(lloop, ldone) is the prefetch of the AVX-512 Q4_0 decode rows
// kernel (func(nr, n int, w *byte, rb int, ...), the weight row at R13):
// at each row's start it prefetches, one PREFETCHT0 a line, the lines from
// R10 up to QPF bytes past the row's end, and leaves R10 there (ROWPFINIT
// sets it QPF bytes past the first row's start). Every weight line is then
// prefetched once, about QPF bytes ahead of its loads. Three prefetches in
// each pass of two groups (one per 48 bytes) asked for most lines twice
// and for none of the lines that fell QPF ahead of a row's last groups,
// which the loop leaves to its tail: a third of the lines of a 768-wide
// row. Measured in alternating runs (6 rounds, one thread, cold weights,
// median GB/s): rows of 768 22.9 → 24.8, 2048 24.7 → 26.6, 4096 28.8 →
// 30.5; the same line-exact prefetch spread over the loop instead, or the
// old one plus the tail's lines, did worse than this burst. The other
// decode kernels keep their in-loop prefetches: this burst made Q8_0 (a
// 4096 row is 68 lines), Q4_K and Q6_K 3–15% slower, and the AVX2 Q4_0
// kernel no faster. DX is scratch.
#define ROWPF(lloop, ldone) \
	MOVQ rb+24(FP), DX \
	LEAQ QPF(R13)(DX*1), DX \
	PFUPTO(lloop, ldone)

// PFUPTO prefetches the lines from R10 up to DX, one PREFETCHT0 a line,
// and leaves R10 there.
#define PFUPTO(lloop, ldone) \
lloop: \
	CMPQ R10, DX \
	JGE ldone \
	PREFETCHT0 (R10) \
	ADDQ $64, R10 \
	JMP lloop \
ldone:

// PFUPTOHINT is PFUPTO with PREFETCHNTA instead where hint (an operand,
// such as a kernel argument) is positive: the weight's lines then come
// into the core's L1 without displacing the caches' other lines, for a
// model whose weights no cache keeps from one token to the next
// (kernels.Prefetch).
#define PFUPTOHINT(hint, lnta, lkeep, ldone) \
	CMPQ hint, $0 \
	JLE lkeep \
lnta: \
	CMPQ R10, DX \
	JGE ldone \
	PREFETCHNTA (R10) \
	ADDQ $64, R10 \
	JMP lnta \
	PFUPTO(lkeep, ldone)

// ROWPFINIT points ROWPF at QPF bytes past the first row (R13).
#define ROWPFINIT LEAQ QPF(R13), R10

// ROWPF1 is ROWPF with the kernel's prefetch hint and distance (pf+48(FP),
// R9), for the packed Q4_0 decode kernels (q4p_amd64.s, q4p_avx2_amd64.s:
// the row at R13, the row bytes in BX).
#define ROWPF1(lnta, lloop, ldone) \
	LEAQ (R13)(BX*1), DX \
	ADDQ R9, DX \
	PFUPTOHINT(pf+48(FP), lnta, lloop, ldone)

// Q4PDIST sets R9 to the decode kernel's prefetch distance in bytes, |pf|
// (PREFETCHNTA where pf > 0, else PREFETCHT0), and R10, the next line to
// prefetch, that far past the first row (R13).
#define Q4PDIST \
	MOVQ pf+48(FP), R9 \
	MOVQ R9, AX \
	NEGQ AX \
	CMOVQGT AX, R9 \
	LEAQ (R13)(R9*1), R10
