//go:build unix && amd64 && !noasm

package kernels

import "testing"

func BenchmarkMicro512(b *testing.B) {
	k := 256
	a := make([]float32, 14*k)
	bb := make([]float32, 32*k)
	c := make([]float32, 14*32)
	c0 := cpuNow()
	for b.Loop() {
		sgemm512x14(k, &a[0], &bb[0], &c[0], 32, 0xffffffff, 1)
	}
	b.ReportMetric(2*14*32*float64(k)*float64(b.N)/(cpuNow()-c0)/1e9, "GFLOP/s@cpu")
}
