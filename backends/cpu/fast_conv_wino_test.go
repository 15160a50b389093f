package cpu

import (
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// forceWino runs f with the Winograd path taken wherever the geometry
// allows, with each output tile, at every float ISA level (forEachFloatISA).
func forceWino(t *testing.T, f func(t *testing.T)) {
	defer func(m, tile int) { convWinoMode, convWinoTile = m, tile }(convWinoMode, convWinoTile)
	convWinoMode = 2
	for _, tile := range []int{2, 4} {
		convWinoTile = tile
		t.Run(fmt.Sprint("F", tile), func(t *testing.T) { forEachFloatISA(t, f) })
	}
}

// winoPlanned reports whether the conv in tc plans as a Winograd conv
// (on workers workers), and how it runs: 0 tasks of row blocks after an
// input transform phase, 1 fused, 2 by point.
func winoPlanned(tc intoCase, workers int) (planned bool, mode int) {
	n := nodeN(tc.op, tc.attrs, tc.in, 1)
	spec := &nodeSpec{n: n, pool: poolFor(workers)}
	for i, x := range tc.in {
		a := arg{}
		if x != nil {
			a = arg{dt: x.DType, shape: x.Shape, ok: true}
			if i < len(tc.consts) && tc.consts[i] {
				a.c = x
			}
		}
		spec.in = append(spec.in, a)
	}
	y := refShape(tc)
	spec.out = []arg{{dt: ir.Float32, shape: y, ok: true}}
	z := arg{}
	if len(spec.in) > 3 {
		z = spec.in[3]
	}
	p := planWinoConv(spec, z, nil, false)
	switch {
	case p == nil:
		return false, 0
	case p.fused:
		return true, 1
	case p.byPoint:
		return true, 2
	}
	return true, 0
}

// refShape is the output shape of a 3×3, stride-1, pad-1 conv case.
func refShape(tc intoCase) []int64 {
	x, w := tc.in[0].Shape, tc.in[1].Shape
	return []int64{x[0], w[0], x[2], x[3]}
}

// TestWinoConvRandom checks the Winograd conv against the reference on
// random sizes (odd and even planes, one or two images, channel counts
// across the K-block and micro-tile edges), with and without bias,
// residual and activation, on 1 to 3 workers, at every float ISA level.
func TestWinoConvRandom(t *testing.T) {
	forceWino(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(31, 32))
		var modes [3]int
		cases := 40
		if testing.Short() || goruntime.GOARCH != "amd64" {
			cases = 16 // an emulator (arm64 in qemu) runs the reference convs slowly
		}
		for i := 0; i < cases; i++ {
			N, C, M := 1+r.IntN(2), 1+r.IntN(40), 1+r.IntN(40)
			H, W := 1+r.IntN(20), 1+r.IntN(40)
			workers := 1 + r.IntN(3)
			switch i % 8 {
			case 0:
				C = 190 + r.IntN(80) // two K blocks
			case 3: // many rows, few tiles: by point on several workers
				M, H, W, workers = 100+r.IntN(60), 2+r.IntN(8), 2+r.IntN(8), 2
			case 5: // more rows than a tile buffer holds: row blocks
				N, C, M, H, W = 1, 1+r.IntN(8), 250+r.IntN(60), 30+r.IntN(10), 30+r.IntN(10)
			}
			act := allActs[r.IntN(len(allActs))]
			attrs := []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}
			x, w, b := randF32(r, int64(N), int64(C), int64(H), int64(W)), randF32(r, int64(M), int64(C), 3, 3), randF32(r, int64(M))
			z := randF32(r, int64(N), int64(M), int64(H), int64(W))
			t.Run(fmt.Sprintf("x%v_w%v_%s_w%d", x.Shape, w.Shape, act, workers), func(t *testing.T) {
				cases := []intoCase{
					{op: "Conv", attrs: attrs, in: []*ir.Tensor{x, w, b}, consts: []bool{false, true, true}, tol: 1e-3},
					{op: "Conv", attrs: attrs, in: []*ir.Tensor{x, w}, consts: []bool{false, true}, tol: 1e-3},
					{op: "FusedConv", attrs: append(append([]ir.AttrOption{}, attrs...), actAttrs(act)...), in: []*ir.Tensor{x, w, b, z}, consts: []bool{false, true, true}, tol: 1e-3},
					{op: "FusedConv", attrs: append(append([]ir.AttrOption{}, attrs...), actAttrs(act)...), in: []*ir.Tensor{x, w, nil, z}, consts: []bool{false, true}, tol: 1e-3},
				}
				for _, tc := range cases {
					planned, mode := winoPlanned(tc, workers)
					require.True(t, planned, "the Winograd path declined")
					modes[mode]++
					runImplicit(t, workers, tc)
				}
			})
		}
		require.Positive(t, modes[0], "no case ran row blocks after an input transform phase")
		require.Positive(t, modes[1], "no case ran the fused input transform")
		require.Positive(t, modes[2], "no case ran the GEMMs by point")
	})
}

// TestWinoConvDeclines checks the shapes the Winograd path must leave to
// the other kernels: strides, dilations, other pads, groups, other kernel
// sizes and runtime weights.
func TestWinoConvDeclines(t *testing.T) {
	defer func(m int) { convWinoMode = m }(convWinoMode)
	convWinoMode = 2
	r := rand.New(rand.NewPCG(33, 34))
	x := randF32(r, 1, 8, 12, 12)
	w3, w5, wg := randF32(r, 8, 8, 3, 3), randF32(r, 8, 8, 5, 5), randF32(r, 8, 4, 3, 3)
	for _, c := range []struct {
		name   string
		w      *ir.Tensor
		attrs  []ir.AttrOption
		constW bool
	}{
		{"stride2", w3, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1), ir.Ints("strides", 2, 2)}, true},
		{"dilation2", w3, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1), ir.Ints("dilations", 2, 2)}, true},
		{"pad0", w3, []ir.AttrOption{ir.Ints("pads", 0, 0, 0, 0)}, true},
		{"padAsym", w3, []ir.AttrOption{ir.Ints("pads", 1, 1, 0, 1)}, true},
		{"5x5", w5, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}, true},
		{"group2", wg, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1), ir.Int("group", 2)}, true},
		{"runtimeW", w3, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}, false},
	} {
		n := nodeN("Conv", c.attrs, []*ir.Tensor{x, c.w}, 1)
		y := refRun(t, n, []*ir.Tensor{x, c.w})[0]
		spec := &nodeSpec{n: n, pool: poolFor(1)}
		wa := arg{dt: ir.Float32, shape: c.w.Shape, ok: true}
		if c.constW {
			wa.c = c.w
		}
		spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, wa}
		spec.out = []arg{{dt: ir.Float32, shape: y.Shape, ok: true}}
		require.Nil(t, planWinoConv(spec, arg{}, nil, false), c.name)
	}
}

// TestWinoConvResNetShapes runs the 3×3 stride-1 layer shapes of
// ResNet-18/50 in the automatic mode and with each tile forced (channels
// cut where the test would be slow) with bias, residual and ReLU on 1 and
// 2 workers.
func TestWinoConvResNetShapes(t *testing.T) {
	defer func(tile int) { convWinoTile = tile }(convWinoTile)
	r := rand.New(rand.NewPCG(35, 36))
	for _, c := range [][2]int64{{64, 56}, {128, 28}, {256, 14}, {96, 7}} {
		for _, cfg := range [][2]int{{1, 0}, {2, 0}, {1, 2}, {2, 4}} {
			workers := cfg[0]
			convWinoTile = cfg[1]
			t.Run(fmt.Sprint(c, cfg), func(t *testing.T) {
				x, w, b := randF32(r, 1, c[0], c[1], c[1]), randF32(r, c[0], c[0], 3, 3), randF32(r, c[0])
				z := randF32(r, 1, c[0], c[1], c[1])
				attrs := []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1), ir.Str("activation", "Relu")}
				tc := intoCase{op: "FusedConv", attrs: attrs, in: []*ir.Tensor{x, w, b, z}, consts: []bool{false, true, true}, tol: 1e-3}
				planned, _ := winoPlanned(tc, workers)
				require.Equal(t, kernels.WinoFast() && c[1]*c[1] >= winoMinPixels, planned)
				runImplicit(t, workers, tc)
			})
		}
	}
}

// TestWinoConvNoAllocs checks that a warm run of the Winograd conv
// allocates nothing where it runs by default (AVX-512; below it ConvGemm's
// column-edge tile allocates, as TestImplicitConvNoAllocs shows there).
func TestWinoConvNoAllocs(t *testing.T) {
	if !kernels.WinoFast() {
		t.Skip("the Winograd path runs by default only with its AVX-512 transforms")
	}
	defer func(m int) { convWinoMode = m }(convWinoMode)
	convWinoMode = 2
	r := rand.New(rand.NewPCG(37, 38))
	x, w, b := randF32(r, 1, 16, 20, 20), randF32(r, 32, 16, 3, 3), randF32(r, 32)
	attrs := []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1), ir.Str("activation", "Relu")}
	z := randF32(r, 1, 32, 20, 20)
	n := nodeN("FusedConv", attrs, []*ir.Tensor{x, w, b, z}, 1)
	spec := &nodeSpec{n: n, pool: kernels.NewPool(2)}
	defer spec.pool.Close()
	spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: b.Shape, ok: true, c: b}, {dt: ir.Float32, shape: z.Shape, ok: true}}
	spec.out = []arg{{dt: ir.Float32, shape: z.Shape, ok: true}}
	p := planWinoConv(spec, spec.in[3], nil, true)
	require.NotNil(t, p)
	scratch := ir.AlignedBytes(spec.scratch)
	in, out := []*ir.Tensor{x, w, b, z}, []*ir.Tensor{ir.NewTensor(ir.Float32, z.Shape)}
	require.NoError(t, p.run(in, out, scratch))
	allocs := testing.AllocsPerRun(50, func() { _ = p.run(in, out, scratch) })
	require.Less(t, allocs, 0.5)
}

// BenchmarkWinoConv compares the Winograd conv (wino2, with 2×2 and 4×4
// tiles) with the implicit GEMM (wino1) on the ResNet 3×3 stride-1 layers
// (fused bias, residual and ReLU) on 1 and 2 workers.
func BenchmarkWinoConv(b *testing.B) {
	r := rand.New(rand.NewPCG(39, 40))
	for _, c := range [][2]int64{{64, 56}, {128, 28}, {256, 14}, {512, 7}} {
		x, w, bias := randF32(r, 1, c[0], c[1], c[1]), randF32(r, c[0], c[0], 3, 3), randF32(r, c[0])
		z := randF32(r, 1, c[0], c[1], c[1])
		attrs := []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1), ir.Str("activation", "Relu")}
		n := nodeN("FusedConv", attrs, []*ir.Tensor{x, w, bias, z}, 1)
		for _, cfg := range [][3]int{{1, 1, 0}, {1, 2, 2}, {1, 2, 4}, {2, 1, 0}, {2, 2, 2}, {2, 2, 4}} {
			workers, mode, tile := cfg[0], cfg[1], cfg[2]
			b.Run(fmt.Sprintf("c%d_hw%d/w%d/wino%d_F%d", c[0], c[1], workers, mode, tile), func(b *testing.B) {
				defer func(m, t int) { convWinoMode, convWinoTile = m, t }(convWinoMode, convWinoTile)
				convWinoMode, convWinoTile = mode, tile
				spec := &nodeSpec{n: n, pool: poolFor(workers)}
				spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: bias.Shape, ok: true, c: bias}, {dt: ir.Float32, shape: z.Shape, ok: true}}
				spec.out = []arg{{dt: ir.Float32, shape: z.Shape, ok: true}}
				k := buildFastFusedConv(spec)
				scratch := ir.AlignedBytes(spec.scratch)
				in, out := []*ir.Tensor{x, w, bias, z}, []*ir.Tensor{ir.NewTensor(ir.Float32, z.Shape)}
				b.ResetTimer()
				for range b.N {
					_ = k(in, out, scratch)
				}
				b.ReportMetric(float64(2*c[0]*c[0]*9*c[1]*c[1])*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
