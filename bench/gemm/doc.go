// Package gemm benchmarks weft's fast CPU kernels (backends/cpu/kernels)
// against the machine and its peers: SGEMM GFLOP/s next to numpy/OpenBLAS
// (sgemm_numpy.py times the same sizes), and quantized GEMV GB/s next to a
// plain streaming read of a 256 MB buffer measured in the same run.
package gemm
