//go:build unix

package kernels

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

func cpuNow() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkSgemmTune sweeps the cache-blocking parameters at one size
// (single thread). It only runs with WEFT_TUNE=1: it is a tool for
// choosing kcBlock and mcBlock on a new machine, not a regression check.
func BenchmarkSgemmTune(b *testing.B) {
	if os.Getenv("WEFT_TUNE") == "" {
		b.Skip("set WEFT_TUNE=1 to sweep the blocking parameters")
	}
	M, N, K := 1024, 1024, 1024
	a, bm, c := make([]float32, M*K), make([]float32, K*N), make([]float32, M*N)
	for i := range a {
		a[i], bm[i] = float32(i%7)-3, float32(i%5)-2
	}
	kc0, mc0 := kcBlock, mcBlock
	defer func() { kcBlock, mcBlock = kc0, mc0 }()
	for _, kc := range []int{128, 160, 192, 224} {
		for _, mc := range []int{252, 336, 420} {
			b.Run(fmt.Sprintf("kc%d/mc%d", kc, mc), func(b *testing.B) {
				kcBlock, mcBlock = kc, mc
				pb := PackB(bm, N, K, N)
				c0 := cpuNow()
				for b.Loop() {
					SgemmPacked(nil, M, a, K, pb, c, N, false)
				}
				b.ReportMetric(2*float64(M*N*K)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				b.ReportMetric(2*float64(M*N*K)*float64(b.N)/(cpuNow()-c0)/1e9, "GFLOP/s@cpu")
			})
		}
	}
}
