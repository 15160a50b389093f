package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkConvGemmT times ConvGemmT and ConvGemm on the same cache-resident
// problem (weights in L2, B rows contiguous) and reports GFLOP/s, to show
// the kernels' own rate apart from memory (the best iteration: the
// machine may be shared).
func BenchmarkConvGemmT(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct{ M, K, N int }{{64, 256, 196}, {64, 256, 56}, {64, 256, 49}} {
		w := randFloats(r, c.M*c.K)
		bm := randFloats(r, c.K*c.N+64)
		off := make([]int, c.K)
		dst := make([]int, c.N)
		for k := range off {
			off[k] = k * c.N
		}
		for v := range dst {
			dst[v] = v
		}
		y := make([]float32, c.M*c.N)
		flops := float64(2 * c.M * c.K * c.N)
		b.Run(fmt.Sprintf("T/%dx%dx%d", c.M, c.K, c.N), func(b *testing.B) {
			cw := PackConvWeightsT(w, c.K, c.M, c.K)
			tiles := ConvTTiles(nil, 0, c.N)
			tmp := make([]float32, ConvTTempLen(len(tiles)))
			lay := NewConvTLayout(off, dst, tiles)
			best := time.Hour
			for b.Loop() {
				t0 := time.Now()
				for p := 0; p < cw.Panels(); p++ {
					ConvGemmT(cw, p, lay, bm, tmp, y, c.N, nil)
				}
				best = min(best, time.Since(t0))
			}
			b.ReportMetric(flops/best.Seconds()/1e9, "best-GFLOP/s")
		})
		b.Run(fmt.Sprintf("lanes/%dx%dx%d", c.M, c.K, c.N), func(b *testing.B) {
			cw := PackConvWeights(w, c.K, c.M, c.K)
			best := time.Hour
			for b.Loop() {
				t0 := time.Now()
				for kb := 0; kb < cw.Blocks(); kb++ {
					k0, _ := cw.Block(kb)
					ConvGemm(cw, kb, 0, c.M, bm, off[k0:], c.N, y, c.N, kb > 0, nil)
				}
				best = min(best, time.Since(t0))
			}
			b.ReportMetric(flops/best.Seconds()/1e9, "best-GFLOP/s")
		})
	}
}
