// Package gemm benchmarks weft's fast CPU kernels (backends/cpu/kernels)
// against the machine and its peers:
//
//   - BenchmarkSgemm: SGEMM GFLOP/s at 1 and 2 threads on 256³, 1024³ and
//     M×4096×4096 for M ∈ {1, 16, 512}; bench/numpy/sgemm.py times
//     numpy/OpenBLAS on the same sizes (`make bench` runs both; alone:
//     OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 python3 bench/numpy/sgemm.py).
//   - BenchmarkReadBandwidth: the best streaming read of 256 MB that
//     internal/membw's readers make (plain Go, vector loads, vector loads
//     with software prefetch), the ceiling for BenchmarkQGemv, which reports the GB/s of weight bytes of the
//     quantized decode GEMV (Q4_0, Q8_0, Q4_K, Q6_K; "hot" reuses one
//     matrix that may sit in L3, "cold" cycles through copies totalling
//     256 MB).
//   - BenchmarkQGemm: quantized GEMM (prefill) GOP/s, also per CPU second.
//
// Besides wall-clock rates the benchmarks report rates per CPU-second
// ("@cpu", scaled by the thread count), which stay meaningful when other
// jobs share the machine: compare wall-clock rates only from quiet runs.
//
//	go test -run xxx -bench . ./bench/gemm/
package gemm
