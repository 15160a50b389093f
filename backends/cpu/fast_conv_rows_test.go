package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// TestImplicitConvRowMode checks row mode (fast_conv_rows.go) against the
// reference: the ResNet stem and strided convs whose output rows end in a
// half panel, a full masked panel or both, two K blocks, groups,
// dilation, 1-D, two images, with bias, residual and activations, on 1
// and 2 workers, at every float ISA level (forEachFloatISA); where the level has half panels the
// plan must be in row mode.
func TestImplicitConvRowMode(t *testing.T) {
	defer func(m int) { convTransMode = m }(convTransMode)
	convTransMode = 1 // the GEMM path
	cases := []struct {
		x, w  []int64
		attrs []ir.AttrOption
	}{
		{[]int64{1, 3, 224, 224}, []int64{64, 3, 7, 7}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 3, 3, 3, 3)}},
		{[]int64{2, 5, 40, 62}, []int64{30, 5, 3, 3}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1)}},
		{[]int64{1, 6, 30, 30}, []int64{17, 6, 5, 5}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 2, 2, 2, 2)}},
		{[]int64{1, 24, 20, 62}, []int64{29, 24, 3, 3}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1)}},
		{[]int64{1, 8, 30, 62}, []int64{20, 4, 3, 3}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1), ir.Int("group", 2)}},
		{[]int64{1, 7, 24, 60}, []int64{15, 7, 3, 3}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 2, 2, 2, 2), ir.Ints("dilations", 2, 2)}},
		{[]int64{1, 40, 95}, []int64{33, 40, 3}, []ir.AttrOption{ir.Ints("strides", 3), ir.Ints("pads", 1, 1)}},
	}
	forEachFloatISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(31, 32))
		for _, c := range cases {
			for _, workers := range []int{1, 2} {
				t.Run(fmt.Sprint(c.x, c.w, workers), func(t *testing.T) {
					x, w, b := randF32(r, c.x...), randF32(r, c.w...), randF32(r, c.w[0])
					y := refRun(t, nodeN("Conv", c.attrs, []*ir.Tensor{x, w}, 1), []*ir.Tensor{x, w})[0]
					z := randF32(r, y.Shape...)
					if kernels.ConvHalfPanels() {
						spec := &nodeSpec{n: nodeN("Conv", c.attrs, []*ir.Tensor{x, w, b}, 1), pool: kernels.NewPool(workers)}
						defer spec.pool.Close()
						spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: b.Shape, ok: true, c: b}}
						spec.out = []arg{{dt: ir.Float32, shape: y.Shape, ok: true}}
						p := planImplicitConv(spec, arg{}, nil, false)
						require.NotNil(t, p)
						require.Positive(t, p.rowsPer, "not in row mode")
					}
					for _, act := range []string{"Relu", "Sigmoid", ""} {
						fa := append(append([]ir.AttrOption{}, c.attrs...), actAttrs(act)...)
						runImplicit(t, workers, intoCase{op: "FusedConv", attrs: fa, in: []*ir.Tensor{x, w, b, z}, consts: []bool{false, true, true}, tol: 1e-3})
					}
					// runtime weights (packed per run) where ungrouped
					runImplicit(t, workers, intoCase{op: "Conv", attrs: c.attrs, in: []*ir.Tensor{x, w}, consts: []bool{false, c.x[1] != c.w[1]}, tol: 1e-3})
				})
			}
		}
	})
}

// TestImplicitConvRowModeNoAllocs checks that a warm row-mode run (fused
// tail with residual, 2 workers) allocates nothing.
func TestImplicitConvRowModeNoAllocs(t *testing.T) {
	if !kernels.ConvHalfPanels() {
		t.Skip("no half panels at this ISA level: no row mode")
	}
	defer func(m int) { convTransMode = m }(convTransMode)
	convTransMode = 1
	r := rand.New(rand.NewPCG(33, 34))
	x, w, b := randF32(r, 1, 3, 64, 64), randF32(r, 16, 3, 7, 7), randF32(r, 16)
	attrs := []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 3, 3, 3, 3), ir.Str("activation", "Relu")}
	y := refRun(t, nodeN("Conv", attrs[:2], []*ir.Tensor{x, w}, 1), []*ir.Tensor{x, w})[0]
	z := randF32(r, y.Shape...)
	spec := &nodeSpec{n: nodeN("FusedConv", attrs, []*ir.Tensor{x, w, b, z}, 1), pool: kernels.NewPool(2)}
	defer spec.pool.Close()
	spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: b.Shape, ok: true, c: b}, {dt: ir.Float32, shape: z.Shape, ok: true}}
	spec.out = []arg{{dt: ir.Float32, shape: y.Shape, ok: true}}
	p := planImplicitConv(spec, spec.input(3), nil, true)
	require.NotNil(t, p)
	require.Positive(t, p.rowsPer, "not in row mode")
	k := buildFastFusedConv(spec)
	require.NotNil(t, k)
	scratch := ir.AlignedBytes(spec.scratch)
	in, out := []*ir.Tensor{x, w, b, z}, []*ir.Tensor{ir.NewTensor(ir.Float32, y.Shape)}
	require.NoError(t, k(in, out, scratch))
	require.Less(t, testing.AllocsPerRun(50, func() { _ = k(in, out, scratch) }), 0.5)
}
