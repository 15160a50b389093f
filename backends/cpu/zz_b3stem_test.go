package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weftrt/weft/ir"
)

func BenchmarkB3Stem(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x, w, bias := randF32(r, 1, 3, 224, 224), randF32(r, 64, 3, 7, 7), randF32(r, 64)
	attrs := []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 3, 3, 3, 3), ir.Str("activation", "Relu")}
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprint(th), func(b *testing.B) {
			mk := func(rm bool) (intoKernel, []byte) {
				convRowMode = rm
				defer func() { convRowMode = true }()
				n := nodeN("FusedConv", attrs, []*ir.Tensor{x, w, bias}, 1)
				spec := &nodeSpec{n: n, pool: poolFor(th)}
				spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: bias.Shape, ok: true, c: bias}}
				spec.out = []arg{{dt: ir.Float32, shape: []int64{1, 64, 112, 112}, ok: true}}
				return buildFastFusedConv(spec), ir.AlignedBytes(spec.scratch)
			}
			kn, sn := mk(true)
			ko, so := mk(false)
			out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{1, 64, 112, 112})}
			in := []*ir.Tensor{x, w, bias}
			var dn, do []time.Duration
			for b.Loop() {
				t0 := time.Now()
				_ = kn(in, out, sn)
				t1 := time.Now()
				_ = ko(in, out, so)
				dn = append(dn, t1.Sub(t0))
				do = append(do, time.Since(t1))
			}
			mn := func(d []time.Duration) float64 {
				m := d[0]
				for _, v := range d {
					m = min(m, v)
				}
				return float64(m.Microseconds())
			}
			b.ReportMetric(mn(dn), "rows-min-µs")
			b.ReportMetric(mn(do), "chunks-min-µs")
		})
	}
}
