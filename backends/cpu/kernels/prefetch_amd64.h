// QPF is how far ahead of its loads a decode GEMV prefetches its weights
// (PREFETCHT0, every line). A streaming read on one core is bound by the
// loads it keeps in flight, not by the DRAM: on a Zen 5 guest, 16 KiB
// ahead took the q4_0 decode of a 110M model from about 340 to 470 tok/s
// on one thread.
#define QPF 16384
