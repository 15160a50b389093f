package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// hWeights returns n×k random f16 or bf16 weights.
func hWeights(dt ir.DType, n, k int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 11))
	w := make([]byte, 2*n*k)
	for i := 0; i < n*k; i++ {
		v := float32(r.NormFloat64() * 0.02)
		h := ir.F32ToF16(v)
		if dt == ir.BFloat16 {
			h = ir.F32ToBF16(v)
		}
		w[2*i], w[2*i+1] = byte(h), byte(h>>8)
	}
	return w
}

// BenchmarkHGemv times the decode GEMV on F16 and BF16 weights (converted
// in registers) and reports GB/s of weight bytes, to compare with
// BenchmarkReadBandwidth in the same run: go test -bench 'ReadBandwidth|HGemv'.
// "cold" cycles through copies totalling >= 256 MB, as a model's layers do.
func BenchmarkHGemv(b *testing.B) {
	for _, dt := range []ir.DType{ir.Float16, ir.BFloat16} {
		for _, sh := range [][2]int{{4096, 4096}, {2048, 768}} {
			N, K := sh[0], sh[1]
			size := 2 * N * K
			copies := max(1, (streamBytes+size-1)/size)
			ws := make([][]byte, copies)
			for i := range ws {
				ws[i] = hWeights(dt, N, K, uint64(i))
			}
			x := randFloats(K)
			y := make([]float32, N)
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%v/%dx%d/t%d/cold", dt, N, K, threads), func(b *testing.B) {
					pool := kernels.NewPool(threads)
					defer pool.Close()
					i := 0
					b.ResetTimer()
					cpu0 := cpuSeconds()
					for b.Loop() {
						if err := kernels.HalfMatMul(pool, dt, ws[i%copies], N, K, x, K, 1, y, N); err != nil {
							b.Fatal(err)
						}
						i++
					}
					b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
					if cpu := cpuSeconds() - cpu0; cpu > 0 {
						b.ReportMetric(float64(size)*float64(b.N)/cpu/1e9*float64(threads), "GB/s@cpu")
					}
				})
			}
		}
	}
}

// BenchmarkHGemm times F16-weight GEMM (prefill: M activation rows against
// a 2048×768 or 4096×4096 weight) and reports GFLOP/s (2·M·N·K per call),
// next to the f32 SGEMM over the same weight pre-packed (the path an f32
// copy of the weight takes).
func BenchmarkHGemm(b *testing.B) {
	for _, sh := range [][2]int{{2048, 768}, {4096, 4096}} {
		N, K := sh[0], sh[1]
		w := hWeights(ir.Float16, N, K, 1)
		for _, M := range []int{16, 128} {
			x := randFloats(M * K)
			y := make([]float32, M*N)
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("f16/%dx%d/M%d/t%d", N, K, M, threads), func(b *testing.B) {
					pool := kernels.NewPool(threads)
					defer pool.Close()
					cpu0 := cpuSeconds()
					for b.Loop() {
						if err := kernels.HalfMatMul(pool, ir.Float16, w, N, K, x, K, M, y, N); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(2*float64(M*N*K)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					if cpu := cpuSeconds() - cpu0; cpu > 0 {
						b.ReportMetric(2*float64(M*N*K)*float64(b.N)/cpu/1e9*float64(threads), "GFLOP/s@cpu")
					}
				})
				b.Run(fmt.Sprintf("f32packed/%dx%d/M%d/t%d", N, K, M, threads), func(b *testing.B) {
					pool := kernels.NewPool(threads)
					defer pool.Close()
					wf := make([]float32, N*K)
					kernels.DecodeHalfRow(wf, w, false)
					pb := kernels.PackBT(wf, K, K, N)
					cpu0 := cpuSeconds()
					for b.Loop() {
						kernels.SgemmPacked(pool, M, x, K, pb, y, N, false)
					}
					b.ReportMetric(2*float64(M*N*K)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					if cpu := cpuSeconds() - cpu0; cpu > 0 {
						b.ReportMetric(2*float64(M*N*K)*float64(b.N)/cpu/1e9*float64(threads), "GFLOP/s@cpu")
					}
				})
			}
		}
	}
}
