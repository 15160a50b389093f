// QPF is how far ahead of its loads a decode GEMV prefetches its weights
// (PREFETCHT0, every line). A streaming read on one core is bound by the
// loads it keeps in flight, not by the DRAM: on a Zen 5 guest, 16 KiB
// ahead took the q4_0 decode of a 110M model from about 340 to 470 tok/s
// on one thread.
#define QPF 16384

// ROWPF(lloop, ldone) is a decode rows kernel's prefetch (func(nr, n int,
// w *byte, rb int, ...), the weight row at R13): at each row's start it
// prefetches, one PREFETCHT0 a line, the lines from R10 up to QPF bytes
// past the row's end, and leaves R10 there (ROWPFINIT sets it QPF bytes
// past the first row's start). Every weight line is then prefetched once,
// about QPF bytes ahead of its loads. Three prefetches in each pass of
// two groups (one per 48 bytes) asked for most lines twice and for none
// of the lines that fell QPF ahead of a row's last groups, which the loop
// leaves to its tail: a third of the lines of a 768-wide Q4_0 row. DX is
// scratch.
#define ROWPF(lloop, ldone) \
	MOVQ rb+24(FP), DX \
	LEAQ QPF(R13)(DX*1), DX \
lloop: \
	CMPQ R10, DX \
	JGE ldone \
	PREFETCHT0 (R10) \
	ADDQ $64, R10 \
	JMP lloop \
ldone:

// ROWPFINIT points ROWPF at QPF bytes past the first row (R13).
#define ROWPFINIT LEAQ QPF(R13), R10
