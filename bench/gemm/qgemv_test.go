package gemm

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/internal/membw"
	"github.com/weftrt/weft/ir"
)

// streamBytes is the size of the read-bandwidth buffer and the least total
// size of the weight copies the "cold" GEMV benchmarks cycle through, so
// that neither fits in the 32 MiB L3.
const streamBytes = membw.Bytes

// BenchmarkReadBandwidth measures the streaming read bandwidth over a
// 256 MB buffer with 1 and 2 goroutines (each reads its share), as `weft
// bench` does (internal/membw): GB/s is the fastest reader's median pass
// (the plain Go loop, vector loads, vector loads with software prefetch;
// the median over the benchmark's iterations), the figure BenchmarkQGemv's
// mean rates are compared with; GB/s:READER is each reader's, and
// GB/s-best the fastest single pass of any.
func BenchmarkReadBandwidth(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("t%d", threads), func(b *testing.B) {
			med := map[string][]float64{}
			var best float64
			for b.Loop() {
				for _, r := range membw.Measure(threads) {
					med[r.Reader] = append(med[r.Reader], r.GBs)
					best = max(best, r.BestGBs)
				}
			}
			var top float64
			for name, v := range med {
				slices.Sort(v)
				m := v[len(v)/2]
				b.ReportMetric(m, "GB/s:"+name)
				top = max(top, m)
			}
			b.ReportMetric(top, "GB/s")
			b.ReportMetric(best, "GB/s-best")
		})
	}
}

// qWeights returns n×k random weights of dt in block layout (random
// bytes with finite f16 scales).
func qWeights(dt ir.DType, n, k int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 9))
	bb := dt.BlockBytes()
	nblk := n * k / dt.BlockSize()
	w := make([]byte, nblk*bb)
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	// The f16 scales: d (and dmin) at the start, Q6_K's d at the end.
	at := []int{0}
	switch dt {
	case ir.Q4_K:
		at = []int{0, 2}
	case ir.Q6_K:
		at = []int{208}
	}
	for b := 0; b < nblk; b++ {
		for _, o := range at {
			binary.LittleEndian.PutUint16(w[b*bb+o:], ir.F32ToF16(0.01))
		}
	}
	return w
}

// qTypes are the weight types of the quantized benchmarks.
var qTypes = []ir.DType{ir.Q4_0, ir.Q8_0, ir.Q4_K, ir.Q6_K}

// BenchmarkQGemv times the decode GEMV (one activation row) on Q4_0,
// Q8_0, Q4_K and Q6_K weights and reports GB/s of weight bytes. "hot" reuses one matrix
// (it may sit in L3); "cold" cycles through copies totalling >= 256 MB, as
// a model's layers do.
func BenchmarkQGemv(b *testing.B) {
	for _, dt := range qTypes {
		for _, sh := range [][2]int{{4096, 4096}, {11008, 4096}} {
			N, K := sh[0], sh[1]
			size := int(dt.Bytes(int64(N * K)))
			copies := max(1, (streamBytes+size-1)/size)
			ws := make([][]byte, copies)
			for i := range ws {
				ws[i] = qWeights(dt, N, K, uint64(i))
			}
			x := randFloats(K)
			var qa kernels.QuantizedActs
			if err := kernels.QuantizeActs(&qa, x, K, 1, K); err != nil {
				b.Fatal(err)
			}
			y := make([]float32, N)
			for _, threads := range []int{1, 2} {
				for _, mode := range []string{"hot", "cold"} {
					b.Run(fmt.Sprintf("%v/%dx%d/t%d/%s", dt, N, K, threads, mode), func(b *testing.B) {
						pool := kernels.NewPool(threads)
						defer pool.Close()
						i := 0
						b.ResetTimer()
						cpu0 := cpuSeconds()
						for b.Loop() {
							w := ws[0]
							if mode == "cold" {
								w = ws[i%copies]
								i++
							}
							if err := kernels.QMatMul(pool, dt, w, N, &qa, y, N); err != nil {
								b.Fatal(err)
							}
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
}

// BenchmarkQGemm times quantized GEMM (prefill: M activation rows against
// 4096×4096 weights) and reports GOP/s (2·M·N·K per call), also per CPU
// second (times the threads), which survives a busy machine better.
func BenchmarkQGemm(b *testing.B) {
	N, K := 4096, 4096
	for _, dt := range qTypes {
		w := qWeights(dt, N, K, 1)
		for _, M := range []int{16, 128} {
			x := randFloats(M * K)
			var qa kernels.QuantizedActs
			if err := kernels.QuantizeActs(&qa, x, K, M, K); err != nil {
				b.Fatal(err)
			}
			y := make([]float32, M*N)
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%v/M%d/t%d", dt, M, threads), func(b *testing.B) {
					pool := kernels.NewPool(threads)
					defer pool.Close()
					b.ResetTimer()
					cpu0 := cpuSeconds()
					for b.Loop() {
						if err := kernels.QMatMul(pool, dt, w, N, &qa, y, N); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(2*float64(M*N*K)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
					if cpu := cpuSeconds() - cpu0; cpu > 0 {
						b.ReportMetric(2*float64(M*N*K)*float64(b.N)/cpu/1e9*float64(threads), "GOP/s@cpu")
					}
				})
			}
		}
	}
}
