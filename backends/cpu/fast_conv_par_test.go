package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// TestFastConvParallel covers the column-split GEMM (convGemmJob): convs
// big enough to run on runFast's 3-worker pool, with output pixel counts
// that do not divide into whole chunks, against the reference kernel.
func TestFastConvParallel(t *testing.T) {
	forEachFloatISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		f := func(s ...int64) *ir.Tensor { return randF32(r, s...) }
		cases := []struct {
			x, w  []int64
			attrs []ir.AttrOption
		}{
			{[]int64{1, 32, 27, 29}, []int64{40, 32, 3, 3}, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}},
			{[]int64{2, 64, 23, 23}, []int64{48, 64, 1, 1}, nil}, // pointwise, two images
			{[]int64{1, 3, 61, 59}, []int64{24, 3, 7, 7}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 3, 3, 3, 3)}},
			{[]int64{1, 16, 500}, []int64{40, 16, 5}, []ir.AttrOption{ir.Ints("pads", 2, 2)}}, // 1-D
			// Fewer output rows than chunks: im2col first, then column chunks.
			{[]int64{1, 64, 4, 200}, []int64{32, 64, 3, 3}, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}},
			{[]int64{1, 16, 41, 40}, []int64{40, 16, 3, 3}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("dilations", 2, 2), ir.Ints("pads", 2, 1, 2, 1)}},
		}
		for _, c := range cases {
			t.Run(fmt.Sprint(c.x, c.w), func(t *testing.T) {
				x, w := f(c.x...), f(c.w...)
				if macs := ir.NumElements(c.x) / c.x[1] * ir.NumElements(c.w); macs < serialMACs {
					t.Fatalf("case too small for the pool: %d MACs", macs)
				}
				b := f(c.w[0])
				runFast(t, buildFastConv, intoCase{op: "Conv", attrs: c.attrs, in: []*ir.Tensor{x, w, b}, consts: []bool{false, true, true}, tol: 1e-3})
				runFast(t, buildFastConv, intoCase{op: "Conv", attrs: c.attrs, in: []*ir.Tensor{x, w}, consts: []bool{false, true}, tol: 1e-3})
				y := refRun(t, nodeN("Conv", c.attrs, []*ir.Tensor{x, w}, 1), []*ir.Tensor{x, w})[0]
				for _, act := range allActs {
					attrs := append(append([]ir.AttrOption{}, c.attrs...), actAttrs(act)...)
					z := f(y.Shape...)
					runFast(t, buildFastFusedConv, intoCase{op: "FusedConv", attrs: attrs, in: []*ir.Tensor{x, w, b, z}, consts: []bool{false, true, true}, tol: 1e-3})
					runFast(t, buildFastFusedConv, intoCase{op: "FusedConv", attrs: attrs, in: []*ir.Tensor{x, w, nil, z}, consts: []bool{false, true}, tol: 1e-3})
				}
			})
		}
	})
}

// BenchmarkFastConvThreads times ResNet-50 convolutions (batch 1, bias and
// ReLU fused) on 1 and 2 workers, with the column-split GEMM and without
// (go test -bench FastConvThreads -count 10 ./backends/cpu; compare mins,
// the machine may be shared).
func BenchmarkFastConvThreads(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name    string
		x, w, y []int64
		attrs   []ir.AttrOption
	}{
		{"stem7x7", []int64{1, 3, 224, 224}, []int64{64, 3, 7, 7}, []int64{1, 64, 112, 112}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 3, 3, 3, 3)}},
		{"l1_3x3", []int64{1, 64, 56, 56}, []int64{64, 64, 3, 3}, []int64{1, 64, 56, 56}, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}},
		{"l1_1x1", []int64{1, 64, 56, 56}, []int64{256, 64, 1, 1}, []int64{1, 256, 56, 56}, nil},
		{"l2_1x1", []int64{1, 128, 28, 28}, []int64{512, 128, 1, 1}, []int64{1, 512, 28, 28}, nil},
	} {
		x, w, bias := randF32(r, c.x...), randF32(r, c.w...), randF32(r, c.w[0])
		attrs := append(append([]ir.AttrOption{}, c.attrs...), ir.Str("activation", "Relu"))
		n := nodeN("FusedConv", attrs, []*ir.Tensor{x, w, bias}, 1)
		for _, threads := range []int{1, 2} {
			for _, split := range []bool{false, true} {
				if threads == 1 && split {
					continue
				}
				b.Run(fmt.Sprintf("%s/threads=%d/split=%v", c.name, threads, split), func(b *testing.B) {
					prev := convColumnSplit
					convColumnSplit = split
					defer func() { convColumnSplit = prev }()
					spec := &nodeSpec{n: n, pool: poolFor(threads)}
					spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: bias.Shape, ok: true, c: bias}}
					spec.out = []arg{{dt: ir.Float32, shape: c.y, ok: true}}
					k := buildFastFusedConv(spec)
					if k == nil {
						b.Fatal("the fast kernel declined")
					}
					out := []*ir.Tensor{ir.NewTensor(ir.Float32, c.y)}
					scratch := ir.AlignedBytes(spec.scratch)
					in := []*ir.Tensor{x, w, bias}
					for b.Loop() {
						if err := k(in, out, scratch); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
