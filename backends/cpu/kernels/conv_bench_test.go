package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkConvGemm compares ConvGemm (B rows read in place, aligned or
// not) with SgemmPacked over a packed B of the same size, serially
// (go test -bench ConvGemm -count 5; compare in one run).
func BenchmarkConvGemm(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ M, K, N int }{{64, 576, 128}, {256, 2304, 128}, {512, 4608, 64}} {
		w := randFloats(r, s.M*s.K)
		bm := randFloats(r, s.K*(s.N+64)+64)
		c := make([]float32, s.M*s.N)
		flops := 2 * float64(s.M*s.K*s.N)
		b.Run(fmt.Sprintf("sgemm_%dx%dx%d", s.M, s.K, s.N), func(b *testing.B) {
			pb := PackB(bm, s.N, s.K, s.N)
			for b.Loop() {
				SgemmPacked(nil, s.M, w, s.K, pb, c, s.N, false)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		cw := PackConvWeights(w, s.K, s.M, s.K)
		for _, shift := range []int{0, 1} {
			off := make([]int, s.K)
			for k := range off {
				off[k] = k*(s.N+64) + shift
			}
			b.Run(fmt.Sprintf("conv_%dx%dx%d_shift%d", s.M, s.K, s.N, shift), func(b *testing.B) {
				for b.Loop() {
					for kb := 0; kb < cw.Blocks(); kb++ {
						k0, _ := cw.Block(kb)
						ConvGemm(cw, kb, 0, s.M, bm, off[k0:], s.N, c, s.N, kb > 0, nil)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkConvKernel compares the 14×32 implicit-GEMM micro-kernel with
// the packed SGEMM one on L1-resident operands, alternating the two.
func BenchmarkConvKernel(b *testing.B) {
	if BestISA() != AVX512 {
		b.Skip("no AVX-512")
	}
	const k = 192
	r := rand.New(rand.NewPCG(1, 2))
	a, bp := randFloats(r, 14*k), randFloats(r, 32*k+64)
	c := make([]float32, 14*32)
	off := make([]int, k)
	for i := range off {
		off[i] = i*32 + 1
	}
	conv, gemm := convKernel(AVX512, 32, 14), archKernel(AVX512, 32, 14)
	var dc, dg time.Duration
	for b.Loop() {
		t0 := time.Now()
		for range 100 {
			conv(k, &a[0], &bp[0], &off[0], &c[0], 32, 0xffffffff, 0, nil, nil, 0)
		}
		t1 := time.Now()
		for range 100 {
			gemm(k, &a[0], &bp[0], &c[0], 32, 0xffffffff, 0)
		}
		t2 := time.Now()
		dc += t1.Sub(t0)
		dg += t2.Sub(t1)
	}
	flops := float64(b.N) * 100 * 2 * 14 * 32 * k
	b.ReportMetric(flops/float64(dc), "conv-GFLOP/s")
	b.ReportMetric(flops/float64(dg), "gemm-GFLOP/s")
}

// BenchmarkConvKc compares K block depths for ConvGemm on ResNet-like
// shapes (B rows at channel-plane strides, as the CPU backend lays them
// out), alternating the depths in each iteration; it reports µs per
// call for each.
func BenchmarkConvKc(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	kcs := []int{128, 192, 256, 384}
	for _, s := range []struct{ M, C, taps, plane, N int }{{64, 64, 9, 3306, 128}, {256, 256, 9, 240, 224}, {512, 512, 9, 72, 64}, {256, 1024, 1, 196, 196}} {
		K := s.C * s.taps
		w := randFloats(r, s.M*K)
		bm := randFloats(r, s.C*s.plane+s.N+64)
		off := make([]int, K)
		for k := range off {
			off[k] = k/s.taps*s.plane + k%s.taps
		}
		c := make([]float32, s.M*s.N)
		cws := make([]*ConvWeights, len(kcs))
		for i, kc := range kcs {
			prev := convKcTarget
			convKcTarget = kc
			cws[i] = PackConvWeights(w, K, s.M, K)
			convKcTarget = prev
		}
		b.Run(fmt.Sprintf("M%d_K%d_N%d", s.M, K, s.N), func(b *testing.B) {
			d := make([]time.Duration, len(kcs))
			for b.Loop() {
				for i, cw := range cws {
					t0 := time.Now()
					for kb := 0; kb < cw.Blocks(); kb++ {
						k0, _ := cw.Block(kb)
						ConvGemm(cw, kb, 0, s.M, bm, off[k0:], s.N, c, s.N, kb > 0, nil)
					}
					d[i] += time.Since(t0)
				}
			}
			for i, kc := range kcs {
				b.ReportMetric(float64(d[i].Nanoseconds())/1e3/float64(b.N), fmt.Sprintf("kc%d-µs", kc))
			}
		})
	}
}
