package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// runImplicit builds the implicit-GEMM conv for tc on a pool of workers,
// runs it over poisoned output and scratch and compares with the reference
// kernel of tc.op (Conv or FusedConv).
func runImplicit(t *testing.T, workers int, tc intoCase) {
	t.Helper()
	n := nodeN(tc.op, tc.attrs, tc.in, 1)
	want := refRun(t, n, tc.in)
	out := []*ir.Tensor{ir.NewTensor(want[0].DType, want[0].Shape)}
	for j := range out[0].Data {
		out[0].Data[j] = 0xAB
	}
	spec := &nodeSpec{n: n, pool: kernels.NewPool(workers)}
	defer spec.pool.Close()
	for i, x := range tc.in {
		if x == nil {
			spec.in = append(spec.in, arg{})
			continue
		}
		a := arg{dt: x.DType, shape: x.Shape, ok: true}
		if i < len(tc.consts) && tc.consts[i] {
			a.c = x
		}
		spec.in = append(spec.in, a)
	}
	spec.out = []arg{{dt: out[0].DType, shape: out[0].Shape, ok: true}}
	var k intoKernel
	if tc.op == "Conv" {
		k = buildFastConv(spec)
	} else {
		k = buildFastFusedConv(spec)
	}
	require.NotNil(t, k, "the fast kernel declined")
	scratch := ir.AlignedBytes(spec.scratch)
	for i := range scratch {
		scratch[i] = 0xCD
	}
	for range 2 { // a second run over the scratch the first one left
		require.NoError(t, k(tc.in, out, scratch))
		requireClose(t, want[0], out[0], tc.tol)
	}
}

// forEachTransMode runs f at every float ISA level (forEachFloatISA) with the transposed GEMM
// off and (where the level has it) forced on, and the Winograd path off
// (fast_conv_wino_test.go tests that one).
func forEachTransMode(t *testing.T, f func(t *testing.T)) {
	defer func(m int) { convTransMode = m }(convTransMode)
	defer func(m int) { convWinoMode = m }(convWinoMode)
	convWinoMode = 1
	forEachFloatISA(t, func(t *testing.T) {
		for _, mode := range []int{1, 2} {
			if mode == 2 && !kernels.ConvTFast() {
				continue
			}
			convTransMode = mode
			t.Run(fmt.Sprintf("trans%d", mode), f)
		}
	})
}

// TestImplicitConvRandom checks the implicit-GEMM conv against the
// reference on random geometries: odd channel counts and sizes, strides
// 1-3, dilations, asymmetric pads, 1-D and 2-D, one or two images, with
// and without bias, residual and activation, constant or runtime weights,
// on 1, 2 and 3 workers, at every float ISA level.
func TestImplicitConvRandom(t *testing.T) {
	forEachTransMode(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(21, 22))
		ran := 0
		for i := 0; i < 150; i++ {
			oneD := r.IntN(5) == 0
			N, C, M := 1+r.IntN(2), 1+r.IntN(19), 1+r.IntN(37)
			G := 1
			switch r.IntN(5) {
			case 0: // depthwise, channel multiplier 1 or 2
				G = 8 + r.IntN(40)
				C, M = G, G*(1+r.IntN(2))
			case 1: // a few groups
				G = 2 + r.IntN(3)
				C, M = G*(1+r.IntN(6)), G*(1+r.IntN(12))
			}
			H, W := 1+r.IntN(19), 1+r.IntN(23)
			kh, kw := 1+r.IntN(4), 1+r.IntN(5)
			sh, sw := 1+r.IntN(3), 1+r.IntN(3)
			dh, dw := 1+r.IntN(2), 1+r.IntN(2)
			pads := []int64{int64(r.IntN(3)), int64(r.IntN(3)), int64(r.IntN(3)), int64(r.IntN(3))}
			if r.IntN(3) == 0 { // pointwise
				kh, kw, sh, sw, dh, dw = 1, 1, 1+r.IntN(2)*r.IntN(2), 1, 1, 1
				pads = []int64{0, 0, 0, 0}
			}
			if oneD {
				H, kh, sh, dh = 1, 1, 1, 1
				pads[0], pads[2] = 0, 0
			}
			if H+int(pads[0]+pads[2]) < (kh-1)*dh+1 || W+int(pads[1]+pads[3]) < (kw-1)*dw+1 {
				continue
			}
			oh := (H+int(pads[0]+pads[2])-(kh-1)*dh-1)/sh + 1
			ow := (W+int(pads[1]+pads[3])-(kw-1)*dw-1)/sw + 1
			if oh < 1 || ow < 1 || M*oh*ow*C/G*kh*kw < minFastFlops {
				continue
			}
			xs, ws := []int64{int64(N), int64(C), int64(H), int64(W)}, []int64{int64(M), int64(C / G), int64(kh), int64(kw)}
			attrs := []ir.AttrOption{ir.Ints("strides", int64(sh), int64(sw)), ir.Ints("dilations", int64(dh), int64(dw)), ir.Ints("pads", pads...), ir.Int("group", int64(G))}
			ys := []int64{int64(N), int64(M), int64(oh), int64(ow)}
			if oneD {
				xs, ws, ys = []int64{int64(N), int64(C), int64(W)}, []int64{int64(M), int64(C / G), int64(kw)}, []int64{int64(N), int64(M), int64(ow)}
				attrs = []ir.AttrOption{ir.Ints("strides", int64(sw)), ir.Ints("dilations", int64(dw)), ir.Ints("pads", pads[1], pads[3]), ir.Int("group", int64(G))}
			}
			x, w, b, z := randF32(r, xs...), randF32(r, ws...), randF32(r, int64(M)), randF32(r, ys...)
			constW := r.IntN(4) != 0 || G > 1 // grouped convs need constant weights
			workers := 1 + r.IntN(3)
			act := allActs[r.IntN(len(allActs))]
			name := fmt.Sprintf("x%v_w%v_g%d_s%d,%d_d%d,%d_p%v_%s_w%d", xs, ws, G, sh, sw, dh, dw, pads, act, workers)
			t.Run(name, func(t *testing.T) {
				ran++
				runImplicit(t, workers, intoCase{op: "Conv", attrs: attrs, in: []*ir.Tensor{x, w, b}, consts: []bool{false, constW, true}, tol: 1e-3})
				runImplicit(t, workers, intoCase{op: "Conv", attrs: attrs, in: []*ir.Tensor{x, w}, consts: []bool{false, constW}, tol: 1e-3})
				fa := append(append([]ir.AttrOption{}, attrs...), actAttrs(act)...)
				runImplicit(t, workers, intoCase{op: "FusedConv", attrs: fa, in: []*ir.Tensor{x, w, b, z}, consts: []bool{false, constW, true}, tol: 1e-3})
				runImplicit(t, workers, intoCase{op: "FusedConv", attrs: fa, in: []*ir.Tensor{x, w, nil, z}, consts: []bool{false, constW}, tol: 1e-3})
			})
		}
		require.Greater(t, ran, 20, "too few random cases were big enough for the fast path")
	})
}

// TestImplicitConvResNetShapes runs the layer shapes of ResNet-18/50 (one
// of each kind, channels cut so the test stays quick) with bias, residual
// and ReLU on 1 and 2 workers.
func TestImplicitConvResNetShapes(t *testing.T) {
	forEachTransMode(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, c := range []struct {
			x, w  []int64
			attrs []ir.AttrOption
		}{
			{[]int64{1, 3, 224, 224}, []int64{16, 3, 7, 7}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 3, 3, 3, 3)}},
			{[]int64{1, 32, 56, 56}, []int64{32, 32, 3, 3}, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}},
			{[]int64{1, 64, 56, 56}, []int64{40, 64, 1, 1}, nil},
			{[]int64{1, 64, 56, 56}, []int64{48, 64, 1, 1}, []ir.AttrOption{ir.Ints("strides", 2, 2)}},
			{[]int64{1, 32, 56, 56}, []int64{32, 32, 3, 3}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1)}},
			{[]int64{1, 96, 7, 7}, []int64{100, 96, 3, 3}, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}},
			{[]int64{1, 200, 7, 7}, []int64{70, 200, 1, 1}, nil},
		} {
			for _, workers := range []int{1, 2} {
				t.Run(fmt.Sprint(c.x, c.w, workers), func(t *testing.T) {
					x, w, b := randF32(r, c.x...), randF32(r, c.w...), randF32(r, c.w[0])
					y := refRun(t, nodeN("Conv", c.attrs, []*ir.Tensor{x, w}, 1), []*ir.Tensor{x, w})[0]
					attrs := append(append([]ir.AttrOption{}, c.attrs...), actAttrs("Relu")...)
					runImplicit(t, workers, intoCase{op: "FusedConv", attrs: attrs, in: []*ir.Tensor{x, w, b, randF32(r, y.Shape...)}, consts: []bool{false, true, true}, tol: 1e-3})
				})
			}
		}
	})
}

// TestImplicitConvNoAllocs checks that a run of the implicit-GEMM conv
// allocates nothing once warm (fused tail, temp tiles and 2 workers), on
// both GEMMs.
func TestImplicitConvNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	defer func(m int) { convTransMode = m }(convTransMode)
	defer func(m int) { convWinoMode = m }(convWinoMode)
	convWinoMode = 1
	for i, pads := range []int64{0, 1, 0, 1} {
		convTransMode = 1 + i/2 // the transposed GEMM forced on in the second half
		x, w, b := randF32(r, 1, 16, 20, 20), randF32(r, 32, 16, 3, 3), randF32(r, 32)
		attrs := []ir.AttrOption{ir.Ints("pads", pads, pads, pads, pads), ir.Str("activation", "Relu")}
		y := refRun(t, nodeN("Conv", attrs[:1], []*ir.Tensor{x, w}, 1), []*ir.Tensor{x, w})[0]
		z := randF32(r, y.Shape...)
		n := nodeN("FusedConv", attrs, []*ir.Tensor{x, w, b, z}, 1)
		spec := &nodeSpec{n: n, pool: kernels.NewPool(2)}
		spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: b.Shape, ok: true, c: b}, {dt: ir.Float32, shape: z.Shape, ok: true}}
		spec.out = []arg{{dt: ir.Float32, shape: y.Shape, ok: true}}
		k := buildFastFusedConv(spec)
		require.NotNil(t, k)
		scratch := ir.AlignedBytes(spec.scratch)
		in, out := []*ir.Tensor{x, w, b, z}, []*ir.Tensor{ir.NewTensor(ir.Float32, y.Shape)}
		require.NoError(t, k(in, out, scratch))
		allocs := testing.AllocsPerRun(50, func() { _ = k(in, out, scratch) })
		spec.pool.Close()
		require.Less(t, allocs, 0.5, "allocations per run (pads %d, mode %d)", pads, convTransMode)
	}
}

// TestImplicitConvSharesWeights checks that two kernels built over the
// same constant weights share one packing, and that another tensor with
// equal contents gets its own.
func TestImplicitConvSharesWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	x := randF32(r, 1, 8, 12, 12)
	mk := func(w *ir.Tensor) *implicitConv {
		n := nodeN("Conv", []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}, []*ir.Tensor{x, w}, 1)
		spec := &nodeSpec{n: n, pool: poolFor(1)}
		spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}}
		spec.out = []arg{{dt: ir.Float32, shape: []int64{1, 16, 12, 12}, ok: true}}
		p := planImplicitConv(spec, arg{}, nil, false)
		require.NotNil(t, p)
		return p
	}
	defer func(m int) { convTransMode = m }(convTransMode)
	for _, mode := range []int{1, 2} { // fresh weights per mode: each packing is new
		convTransMode = mode
		w := randF32(r, 16, 8, 3, 3)
		w2 := ir.NewTensor(ir.Float32, w.Shape)
		copy(w2.Float32s(), w.Float32s())
		before := convPackCount.Load()
		a, b, c := mk(w), mk(w), mk(w2)
		var pa, pb, pc any
		if a.tr != nil { // the transposed path (AVX-512)
			pa, pb, pc = a.tr.cw, b.tr.cw, c.tr.cw
		} else {
			pa, pb, pc = a.cws[0], b.cws[0], c.cws[0]
		}
		require.Same(t, pa, pb, "the same weights were packed twice (mode %d)", mode)
		require.NotSame(t, pa, pc, "distinct tensors shared a packing (mode %d)", mode)
		require.Equal(t, before+2, convPackCount.Load())
	}
}
