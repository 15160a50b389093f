package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weftrt/weft/ir"
)

// BenchmarkConvTrans times the ResNet-50 convs (FusedConv, bias and ReLU)
// with the transposed implicit GEMM forced on and off, alternating the two
// in each iteration; it reports the min of each (ms, weighted by how often
// the layer occurs) and their ratio
// (go test -run XXX -bench ConvTrans ./backends/cpu).
func BenchmarkConvTrans(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, threads := range []int{1, 2} {
		for _, c := range resnet50Convs {
			oh := (c.h+2*(c.k/2)-c.k)/c.s + 1
			if oh > 28 {
				continue
			}
			xs, ws, ys := []int64{1, int64(c.c), int64(c.h), int64(c.h)}, []int64{int64(c.m), int64(c.c), int64(c.k), int64(c.k)}, []int64{1, int64(c.m), int64(oh), int64(oh)}
			x, w, bias := randF32(r, xs...), randF32(r, ws...), randF32(r, int64(c.m))
			p := int64(c.k / 2)
			attrs := []ir.AttrOption{ir.Ints("strides", int64(c.s), int64(c.s)), ir.Ints("pads", p, p, p, p), ir.Str("activation", "Relu")}
			n := nodeN("FusedConv", attrs, []*ir.Tensor{x, w, bias}, 1)
			build := func(mode int) (intoKernel, []byte) {
				prev := convTransMode
				convTransMode = mode
				defer func() { convTransMode = prev }()
				spec := &nodeSpec{n: n, pool: poolFor(threads)}
				spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: bias.Shape, ok: true, c: bias}}
				spec.out = []arg{{dt: ir.Float32, shape: ys, ok: true}}
				k := buildFastFusedConv(spec)
				if k == nil {
					b.Fatal("the fast kernel declined")
				}
				return k, ir.AlignedBytes(spec.scratch)
			}
			kT, sT := build(2)
			kN, sN := build(1)
			out := []*ir.Tensor{ir.NewTensor(ir.Float32, ys)}
			in := []*ir.Tensor{x, w, bias}
			b.Run(fmt.Sprintf("threads=%d/%s", threads, c.name), func(b *testing.B) {
				minT, minN := time.Hour, time.Hour
				for b.Loop() {
					t0 := time.Now()
					_ = kT(in, out, sT)
					t1 := time.Now()
					_ = kN(in, out, sN)
					t2 := time.Now()
					minT, minN = min(minT, t1.Sub(t0)), min(minN, t2.Sub(t1))
				}
				b.ReportMetric(float64(minT.Microseconds())/1000*float64(c.count), "trans-ms")
				b.ReportMetric(float64(minN.Microseconds())/1000*float64(c.count), "lanes-ms")
				b.ReportMetric(float64(minT)/float64(minN), "trans/lanes")
			})
		}
	}
}

// BenchmarkConvTransChunks times the ResNet-50 convs that take the
// transposed GEMM with too few 32-channel panels for 4 tasks per worker,
// on 2 workers, with tasks split over chunks of the tiles and with one
// whole panel a task, alternating the two in each iteration; it reports
// the min of each (ms, weighted by how often the layer occurs)
// (go test -run XXX -bench ConvTransChunks ./backends/cpu).
func BenchmarkConvTransChunks(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range resnet50Convs {
		if c.k != 3 || c.m > 128 {
			continue
		}
		oh := (c.h+2*(c.k/2)-c.k)/c.s + 1
		xs, ws, ys := []int64{1, int64(c.c), int64(c.h), int64(c.h)}, []int64{int64(c.m), int64(c.c), int64(c.k), int64(c.k)}, []int64{1, int64(c.m), int64(oh), int64(oh)}
		x, w, bias := randF32(r, xs...), randF32(r, ws...), randF32(r, int64(c.m))
		p := int64(c.k / 2)
		attrs := []ir.AttrOption{ir.Ints("strides", int64(c.s), int64(c.s)), ir.Ints("pads", p, p, p, p), ir.Str("activation", "Relu")}
		n := nodeN("FusedConv", attrs, []*ir.Tensor{x, w, bias}, 1)
		build := func(chunks bool) (intoKernel, []byte) {
			prev := convTransChunks
			convTransChunks = chunks
			defer func() { convTransChunks = prev }()
			spec := &nodeSpec{n: n, pool: poolFor(2)}
			spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: bias.Shape, ok: true, c: bias}}
			spec.out = []arg{{dt: ir.Float32, shape: ys, ok: true}}
			k := buildFastFusedConv(spec)
			if k == nil {
				b.Fatal("the fast kernel declined")
			}
			return k, ir.AlignedBytes(spec.scratch)
		}
		kC, sC := build(true)
		kP, sP := build(false)
		out := []*ir.Tensor{ir.NewTensor(ir.Float32, ys)}
		in := []*ir.Tensor{x, w, bias}
		b.Run(c.name, func(b *testing.B) {
			minC, minP := time.Hour, time.Hour
			for b.Loop() {
				t0 := time.Now()
				_ = kC(in, out, sC)
				t1 := time.Now()
				_ = kP(in, out, sP)
				t2 := time.Now()
				minC, minP = min(minC, t1.Sub(t0)), min(minP, t2.Sub(t1))
			}
			b.ReportMetric(float64(minC.Microseconds())/1000*float64(c.count), "chunks-ms")
			b.ReportMetric(float64(minP.Microseconds())/1000*float64(c.count), "panels-ms")
			b.ReportMetric(float64(minC)/float64(minP), "chunks/panels")
		})
	}
}
