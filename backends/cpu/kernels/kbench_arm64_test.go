//go:build !noasm

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// The arm64 benchmarks, for a real device (under qemu the timings mean
// nothing): the full-tile SGEMM micro-kernel in GFLOP/s, and the Q8_0/Q4_0
// GEMV at each level in weight GB/s.

func BenchmarkMicroNEON(b *testing.B) {
	k := 256
	a := make([]float32, neonMR*k)
	bb := make([]float32, neonNR*k)
	c := make([]float32, neonMR*neonNR)
	fn := sgemmNEONKernels[neonMR]
	for b.Loop() {
		fn(k, &a[0], &bb[0], &c[0], neonNR, 0, 1)
	}
	b.ReportMetric(2*neonMR*neonNR*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkQGEMVArm64(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	N, K := 1024, 4096
	for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0} {
		w, _ := randQWeights(r, dt, N, K)
		var qa QuantizedActs
		if err := QuantizeActs(&qa, randFloats(r, K), K, 1, K); err != nil {
			b.Fatal(err)
		}
		y := make([]float32, N)
		for _, isa := range Levels() {
			b.Run(fmt.Sprintf("%v/%v", dt, isa), func(b *testing.B) {
				prev, _ := SetISA(isa.String())
				defer current.Store(int32(prev))
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					if err := QMatMul(nil, dt, w, N, &qa, y, N); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
