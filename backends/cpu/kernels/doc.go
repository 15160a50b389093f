// Package kernels holds weft's fast CPU kernels: a persistent worker pool,
// a cache-blocked SGEMM over pre-packed B panels, and quantized (Q8_0,
// Q4_0, Q4_K, Q6_K) GEMV/GEMM with int8 dot products. Each kernel has a generic Go
// implementation (every GOARCH) and, on amd64, AVX2+FMA and AVX-512
// micro-kernels in Go assembly chosen at run time from golang.org/x/sys/cpu.
// On arm64 the SGEMM and the Q8_0/Q4_0 dot products have NEON kernels
// (levels neon and dotprod, the latter with SDOT; gen_neon_arm64.go), the
// other kernels run their generic code. SetISA forces a lower level so
// tests can check every path on one machine (Levels lists them); the build
// tag noasm drops the assembly altogether.
//
// Conventions: matrices are row-major with explicit leading dimensions
// (gonum/BLAS style: element (i, j) of A is a[i*lda+j]); quantized weights
// are [N, K] in GGUF block layout (see ir/dtype.go), blocks along K, and
// QMatMul computes y = x·wᵀ. Kernels trust shapes checked by their caller
// but panic (SGEMM) or return an error (quantized) rather than touch memory
// outside the slices they are given.
//
// The main entry points:
//   - Pool (NewPool, Default, Run, RunTasks): persistent workers, tasks
//     handed out by an atomic counter, no allocation per call.
//   - PackB / PackBT / PackBInto, then SgemmPacked: C (+)= A·B with B
//     packed once (constant weights at compile time); Sgemm packs per call.
//   - Vector math (vec.go): GeluErf, GeluTanh, SiLU, Sigmoid in place;
//     Max, ExpSum, Sum, SumSqDev, ScaleAdd, NormAffine for softmax and
//     normalization rows (float32, AVX-512/AVX2 assembly in vec_amd64.s).
//   - QuantizeActs, then QMatMul: activations quantized once per row to
//     q8 blocks, integer dot products per block (VPDPBUSD, or
//     VPMADDUBSW+VPMADDWD), one float multiply by the two block scales.
//     On AVX-512 with VBMI the Q4_0/Q8_0 kernels gather 4 (2) blocks into
//     one vector with VPERMT2B against a per-call activation layout
//     (qlay.go); decode runs a task's weight rows in one assembly call,
//     and so does prefill, unpacking each weight group once for eight
//     activation rows (then four, then one at a time), every sum in the
//     one-row kernel's order. The K-quants (qk.go) keep the q8 blocks of
//     32, which line up with their sub-blocks, and scale per sub-block in
//     float; their prefill takes a task's rows four activation rows at a
//     time in one call too. With AVX2 and no VNNI, Q8_0 decode runs a
//     task's rows in one call (dotQ8AVX2rows, two prefetches 16 KiB ahead
//     a pass of two blocks), and Q8_0, Q4_K and Q6_K prefill take four
//     activation rows a call (a block's or super-block's weight side
//     unpacked once for the four); every row's sum is bit for bit the row
//     dot product's.
//   - HalfMatMul: y = x·wᵀ with an F16 or BF16 weight widened to f32 in
//     registers (f16.go): a streaming GEMV at one row (a task's groups of
//     four rows in one call; the AVX2 one prefetches a line a step, 4 KiB
//     ahead), dot-product kernels for a few rows, and from 32 rows
//     (AVX-512, AVX2) K tiles of the weight converted into the SGEMM's
//     panel layout for its micro-kernels;
//     on arm64 a NEON GEMV (FCVTL) run once per activation row.
//   - Convolution (conv.go, conv_t.go, dw.go; kernels from gen_conv.go):
//     implicit GEMM over a padded input read in place, weights packed
//     once: ConvGemm (output pixels in the lanes), ConvGemmT (output
//     channels in the lanes, for small planes), DepthwiseRows, and
//     PadCopyRows, which builds the padded, stride-phase split input;
//     Winograd F(2×2,3×3) and F(4×4,3×3) for 3×3 stride-1 convs
//     (conv_wino*.go: weight transforms in float64 at compile time,
//     AVX-512 input/output transforms, the multiplies through ConvGemm).
//   - Region batches (Pool.RunRegions, Pool.RunStream; regions.go): a
//     batch's tasks in one contiguous region per worker, published and
//     counted through one cache line per worker, with stealing from the back, so that a streaming kernel reads
//     long sequential runs per core, and with RunStream (the weight
//     kernels) the core that ended one batch starts the next; the decode
//     GEMVs prefetch 16 KiB ahead of their loads (prefetch_amd64.h; the
//     AVX-512 Q4_0 ones every line once, in a burst at each row or pair
//     of rows' start), non-temporally and 4 KiB ahead where the caller
//     says the weights pass through no cache that could keep them
//     (Prefetch, LastLevelCache; on AMD's cores only,
//     StreamPrefetchHelps). BenchmarkQ4ReadShare measures the
//     packed Q4_0 GEMV against the read probe turn about, as weft bench
//     measures decode.
//   - QRows (qrows.go): QMatMul's one-row decode kernel bound to one
//     activation row, for callers that split the rows themselves
//     (QMatMulGroup).
//   - PackQ4Rows and QMatMulPacked (q4p.go): Q4_0 weights repacked so
//     that each 32-bit lane of a vector holds one block (16 blocks a
//     group, scales together, codes transposed; a row keeps its size).
//     No byte permutes, one convert, multiply and FMA per 16 blocks: on
//     AVX-512 VNNI (no VBMI needed) about 25 vector instructions per 288
//     weight bytes instead of 56, and the decode GEMV runs two rows
//     against each load of the activations, a pair's short groups of up
//     to eight blocks in one vector. In L2 that read 52–68 GB/s a core
//     against 31–42 for the GGUF-layout kernel (BenchmarkQRowsK); the CPU
//     backend packs constant Q4_0 weights once, at compile time. With
//     AVX2 (q4p_avx2_amd64.s) a vector holds half a group: VPMADDUBSW per
//     chunk, the eight int16 products of a block added exactly before one
//     VPMADDWD, about five instructions a block against ten for the GGUF
//     layout's AVX2 kernel; on a Zen 3 guest, 15–22 against 8.6–10.3 GB/s a
//     core in L2 (rows of 768 and 2048), prefill of a 110M Q4_0 model
//     1.9–2.5× faster (weft bench, two threads), decode as fast.
//   - PackQ8RowsTo (q8p.go) and QMatMulPacked: the same layout for Q8_0
//     (codes plus 128 as unsigned bytes, eight chunks a group), against
//     the same activation records, whose biases shifted left by four take
//     the offset out: eight VPDPBUSD, one convert, multiply and FMA per
//     16 blocks and activation row (AVX-512 VNNI only). A 2048×768 GEMV
//     on one core of an Intel Xeon guest: 28.5 → 48.8 GMAC/s at 128
//     activation rows, 10.3 → 20.4 at one (in cache).
//
// The AVX-512 and AVX2 SGEMM micro-kernels are generated by gen_sgemm.go
// (go generate); the AVX-512 one-row kernel, which an f32 GEMV runs,
// prefetches its B panel 16 KiB ahead (bPrefetch1). The quantized dot
// products are hand-written assembly.
//
// This package owns arithmetic only. It must not know about graphs, nodes,
// tensors, plans or backends: the CPU backend wires these kernels in, and
// the reference kernels (backends/cpu/ref) are the oracle its tests use.
package kernels
