package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// resnet50Convs lists the distinct convolutions of ResNet-50 (batch 1,
// 224²) with how often each occurs.
var resnet50Convs = []struct {
	name          string
	c, h, m, k, s int
	count         int
}{
	{"stem", 3, 224, 64, 7, 2, 1},
	{"l1_1x1_64_64", 64, 56, 64, 1, 1, 1},
	{"l1_1x1_256_64", 256, 56, 64, 1, 1, 2},
	{"l1_3x3", 64, 56, 64, 3, 1, 3},
	{"l1_1x1_64_256", 64, 56, 256, 1, 1, 4},
	{"l2_1x1_256_128", 256, 56, 128, 1, 1, 1},
	{"l2_3x3_s2", 128, 56, 128, 3, 2, 1},
	{"l2_ds_s2", 256, 56, 512, 1, 2, 1},
	{"l2_1x1_512_128", 512, 28, 128, 1, 1, 3},
	{"l2_3x3", 128, 28, 128, 3, 1, 3},
	{"l2_1x1_128_512", 128, 28, 512, 1, 1, 4},
	{"l3_1x1_512_256", 512, 28, 256, 1, 1, 1},
	{"l3_3x3_s2", 256, 28, 256, 3, 2, 1},
	{"l3_ds_s2", 512, 28, 1024, 1, 2, 1},
	{"l3_1x1_1024_256", 1024, 14, 256, 1, 1, 5},
	{"l3_3x3", 256, 14, 256, 3, 1, 5},
	{"l3_1x1_256_1024", 256, 14, 1024, 1, 1, 6},
	{"l4_1x1_1024_512", 1024, 14, 512, 1, 1, 1},
	{"l4_3x3_s2", 512, 14, 512, 3, 2, 1},
	{"l4_ds_s2", 1024, 14, 2048, 1, 2, 1},
	{"l4_1x1_2048_512", 2048, 7, 512, 1, 1, 2},
	{"l4_3x3", 512, 7, 512, 3, 1, 2},
	{"l4_1x1_512_2048", 512, 7, 2048, 1, 1, 3},
}

// BenchmarkResNet50Convs times every distinct ResNet-50 conv (FusedConv
// with bias and ReLU) on 1 and 2 workers with the implicit-GEMM path and
// with an older path, alternating the two in each iteration so that a
// shared machine disturbs both alike; it reports both times per layer
// (ms, weighted by how often the layer occurs) and their ratio
// (go test -run XXX -bench ResNet50Convs ./backends/cpu). The older path
// is the im2col one.
func BenchmarkResNet50Convs(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, threads := range []int{1, 2} {
		var totNew, totOld time.Duration
		for _, c := range resnet50Convs {
			oh := (c.h+2*(c.k/2)-c.k)/c.s + 1
			xs, ws, ys := []int64{1, int64(c.c), int64(c.h), int64(c.h)}, []int64{int64(c.m), int64(c.c), int64(c.k), int64(c.k)}, []int64{1, int64(c.m), int64(oh), int64(oh)}
			x, w, bias := randF32(r, xs...), randF32(r, ws...), randF32(r, int64(c.m))
			p := int64(c.k / 2)
			attrs := []ir.AttrOption{ir.Ints("strides", int64(c.s), int64(c.s)), ir.Ints("pads", p, p, p, p), ir.Str("activation", "Relu")}
			n := nodeN("FusedConv", attrs, []*ir.Tensor{x, w, bias}, 1)
			build := func(implicit bool) (intoKernel, []byte) {
				prev := implicitConvEnabled
				implicitConvEnabled = implicit
				defer func() { implicitConvEnabled = prev }()
				spec := &nodeSpec{n: n, pool: poolFor(threads)}
				spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: bias.Shape, ok: true, c: bias}}
				spec.out = []arg{{dt: ir.Float32, shape: ys, ok: true}}
				k := buildFastFusedConv(spec)
				if k == nil {
					b.Fatal("the fast kernel declined")
				}
				return k, ir.AlignedBytes(spec.scratch)
			}
			kNew, sNew := build(true)
			kOld, sOld := build(false)
			out := []*ir.Tensor{ir.NewTensor(ir.Float32, ys)}
			in := []*ir.Tensor{x, w, bias}
			b.Run(fmt.Sprintf("threads=%d/%s", threads, c.name), func(b *testing.B) {
				var dNew, dOld time.Duration
				minNew, minOld := time.Hour, time.Hour
				for b.Loop() {
					t0 := time.Now()
					_ = kNew(in, out, sNew)
					t1 := time.Now()
					_ = kOld(in, out, sOld)
					t2 := time.Now()
					dNew += t1.Sub(t0)
					dOld += t2.Sub(t1)
					minNew, minOld = min(minNew, t1.Sub(t0)), min(minOld, t2.Sub(t1))
				}
				b.ReportMetric(float64(minNew.Microseconds())/1000*float64(c.count), "new-ms")
				b.ReportMetric(float64(minOld.Microseconds())/1000*float64(c.count), "old-ms")
				b.ReportMetric(float64(dNew)/float64(dOld), "new/old")
				totNew += minNew * time.Duration(c.count)
				totOld += minOld * time.Duration(c.count)
			})
		}
		b.Logf("threads=%d: all convs (sum of per-layer mins): implicit %.2f ms, im2col %.2f ms", threads, float64(totNew.Microseconds())/1000, float64(totOld.Microseconds())/1000)
	}
}

// BenchmarkDepthwiseConv times MobileNet-style depthwise 3×3 convs (bias
// and ReLU fused) with the implicit-GEMM path and the plain direct kernel,
// alternating the two (go test -run XXX -bench DepthwiseConv ./backends/cpu).
func BenchmarkDepthwiseConv(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name     string
		ch, h, s int
	}{{"dw32_112", 32, 112, 1}, {"dw144_56_s2", 144, 112, 2}, {"dw512_14", 512, 14, 1}} {
		oh := (c.h+2-3)/c.s + 1
		x, w, bias := randF32(r, 1, int64(c.ch), int64(c.h), int64(c.h)), randF32(r, int64(c.ch), 1, 3, 3), randF32(r, int64(c.ch))
		ys := []int64{1, int64(c.ch), int64(oh), int64(oh)}
		attrs := []ir.AttrOption{ir.Ints("strides", int64(c.s), int64(c.s)), ir.Ints("pads", 1, 1, 1, 1), ir.Int("group", int64(c.ch))}
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("threads=%d/%s", threads, c.name), func(b *testing.B) {
				mk := func(build intoBuilder, op string, at []ir.AttrOption) (intoKernel, []byte) {
					spec := &nodeSpec{n: nodeN(op, at, []*ir.Tensor{x, w, bias}, 1), pool: poolFor(threads)}
					spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: bias.Shape, ok: true, c: bias}}
					spec.out = []arg{{dt: ir.Float32, shape: ys, ok: true}}
					k := build(spec)
					if k == nil {
						b.Fatal("declined")
					}
					return k, ir.AlignedBytes(spec.scratch)
				}
				kNew, sNew := mk(buildFastConv, "Conv", attrs)
				kOld, sOld := mk(buildConv, "Conv", attrs)
				out := []*ir.Tensor{ir.NewTensor(ir.Float32, ys)}
				in := []*ir.Tensor{x, w, bias}
				var dNew, dOld time.Duration
				for b.Loop() {
					t0 := time.Now()
					_ = kNew(in, out, sNew)
					t1 := time.Now()
					_ = kOld(in, out, sOld)
					dNew += t1.Sub(t0)
					dOld += time.Since(t1)
				}
				b.ReportMetric(float64(dNew.Microseconds())/float64(b.N), "implicit-µs")
				b.ReportMetric(float64(dOld.Microseconds())/float64(b.N), "direct-µs")
			})
		}
	}
}

// BenchmarkConvScaling measures how the implicit-GEMM conv scales from 1
// to 2 workers next to an SGEMM of similar work, alternating all four in
// each iteration, so that a shared machine's interference shows in both
// (the SGEMM ratio is the reference: about 2 on two free cores).
func BenchmarkConvScaling(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name          string
		c, h, m, k, s int
	}{{"l1_3x3", 64, 56, 64, 3, 1}, {"l3_3x3", 256, 14, 256, 3, 1}, {"l4_3x3", 512, 7, 512, 3, 1}, {"l3_1x1", 1024, 14, 256, 1, 1}} {
		oh := (c.h+2*(c.k/2)-c.k)/c.s + 1
		x, w, bias := randF32(r, 1, int64(c.c), int64(c.h), int64(c.h)), randF32(r, int64(c.m), int64(c.c), int64(c.k), int64(c.k)), randF32(r, int64(c.m))
		ys := []int64{1, int64(c.m), int64(oh), int64(oh)}
		p := int64(c.k / 2)
		attrs := []ir.AttrOption{ir.Ints("pads", p, p, p, p), ir.Str("activation", "Relu")}
		mk := func(threads int) (intoKernel, []byte) {
			spec := &nodeSpec{n: nodeN("FusedConv", attrs, []*ir.Tensor{x, w, bias}, 1), pool: poolFor(threads)}
			spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: bias.Shape, ok: true, c: bias}}
			spec.out = []arg{{dt: ir.Float32, shape: ys, ok: true}}
			return buildFastFusedConv(spec), ir.AlignedBytes(spec.scratch)
		}
		k1, s1 := mk(1)
		k2, s2 := mk(2)
		// An SGEMM with the same M, K and N.
		M, K, N := c.m, c.c*c.k*c.k, oh*oh
		a, bm, cm := randF32(r, int64(M*K)).Float32s(), randF32(r, int64(K*N)).Float32s(), make([]float32, M*N)
		pb := kernels.PackB(bm, N, K, N)
		out := []*ir.Tensor{ir.NewTensor(ir.Float32, ys)}
		in := []*ir.Tensor{x, w, bias}
		b.Run(c.name, func(b *testing.B) {
			var d [4]time.Duration
			for b.Loop() {
				t0 := time.Now()
				_ = k1(in, out, s1)
				t1 := time.Now()
				_ = k2(in, out, s2)
				t2 := time.Now()
				kernels.SgemmPacked(poolFor(1), M, a, K, pb, cm, N, false)
				t3 := time.Now()
				kernels.SgemmPacked(poolFor(2), M, a, K, pb, cm, N, false)
				t4 := time.Now()
				d[0], d[1], d[2], d[3] = d[0]+t1.Sub(t0), d[1]+t2.Sub(t1), d[2]+t3.Sub(t2), d[3]+t4.Sub(t3)
			}
			b.ReportMetric(float64(d[0])/float64(d[1]), "conv-speedup")
			b.ReportMetric(float64(d[2])/float64(d[3]), "sgemm-speedup")
		})
	}
}
