package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// sgemmSizes are M×N×K; the 4096×4096 rows are M ∈ {1, 16, 512} tokens
// against a 4096×4096 weight.
var sgemmSizes = [][3]int{
	{256, 256, 256}, {1024, 1024, 1024},
	{1, 4096, 4096}, {16, 4096, 4096}, {512, 4096, 4096},
}

func randFloats(n int) []float32 {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.Float64()*2 - 1)
	}
	return x
}

// BenchmarkSgemm times SgemmPacked (B packed once, as constant weights
// are) at 1 and 2 threads and reports GFLOP/s.
func BenchmarkSgemm(b *testing.B) {
	for _, sh := range sgemmSizes {
		M, N, K := sh[0], sh[1], sh[2]
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%dx%dx%d/t%d", M, N, K, threads), func(b *testing.B) {
				a, bm, c := randFloats(M*K), randFloats(K*N), make([]float32, M*N)
				pb := kernels.PackB(bm, N, K, N)
				pool := kernels.NewPool(threads)
				defer pool.Close()
				kernels.SgemmPacked(pool, M, a, K, pb, c, N, false)
				b.ResetTimer()
				cpu0 := cpuSeconds()
				for b.Loop() {
					kernels.SgemmPacked(pool, M, a, K, pb, c, N, false)
				}
				flops := 2 * float64(M) * float64(N) * float64(K) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				if cpu := cpuSeconds() - cpu0; cpu > 0 {
					b.ReportMetric(flops/cpu/1e9*float64(threads), "GFLOP/s@cpu")
				}
			})
		}
	}
}
