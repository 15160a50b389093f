// Package kernels holds weft's fast CPU kernels: a persistent worker pool,
// a cache-blocked SGEMM over pre-packed B panels, and quantized (Q8_0,
// Q4_0) GEMV/GEMM with int8 dot products. Each kernel has a generic Go
// implementation (every GOARCH) and, on amd64, AVX2+FMA and AVX-512
// micro-kernels in Go assembly chosen at run time from golang.org/x/sys/cpu.
// SetISA forces a lower level so tests can check every path on one machine.
//
// Conventions: matrices are row-major with explicit leading dimensions
// (gonum/BLAS style: element (i, j) of A is a[i*lda+j]); quantized weights
// are [N, K] in GGUF block layout (see ir/dtype.go), blocks along K.
//
// This package owns arithmetic only. It must not know about graphs, nodes,
// tensors, plans or backends: the CPU backend wires these kernels in, and
// the reference kernels (backends/cpu/ref) are the oracle its tests use.
package kernels
