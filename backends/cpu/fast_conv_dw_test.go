package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// TestDepthwiseConv checks 3×3 depthwise convs (the kernel of
// fast_conv_dw.go where the level has it) against the reference on random
// planes: strides 1 and 2, dilations, asymmetric pads, bias, residual and
// activations, 1-3 workers, at every ISA level.
func TestDepthwiseConv(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(31, 32))
		took := 0
		for i := 0; i < 40; i++ {
			C, H, W := 8+r.IntN(40), 3+r.IntN(30), 3+r.IntN(40)
			s, d := 1+r.IntN(2), 1+r.IntN(2)
			pads := []int64{int64(r.IntN(2) * d), int64(r.IntN(3)), int64(r.IntN(2)), int64(r.IntN(3))}
			oh := (H+int(pads[0]+pads[2])-2*d-1)/s + 1
			ow := (W+int(pads[1]+pads[3])-2*d-1)/s + 1
			if oh < 1 || ow < 1 || C*oh*ow*9 < minFastFlops {
				continue
			}
			x, w, b := randF32(r, 1, int64(C), int64(H), int64(W)), randF32(r, int64(C), 1, 3, 3), randF32(r, int64(C))
			z := randF32(r, 1, int64(C), int64(oh), int64(ow))
			attrs := []ir.AttrOption{ir.Ints("strides", int64(s), int64(s)), ir.Ints("dilations", int64(d), int64(d)), ir.Ints("pads", pads...), ir.Int("group", int64(C))}
			workers := 1 + r.IntN(3)
			act := allActs[r.IntN(len(allActs))]
			t.Run(fmt.Sprintf("c%d_%dx%d_s%d_d%d_p%v_%s_w%d", C, H, W, s, d, pads, act, workers), func(t *testing.T) {
				if kernels.DepthwiseFast(9) {
					n := nodeN("Conv", attrs, []*ir.Tensor{x, w, b}, 1)
					spec := &nodeSpec{n: n, pool: poolFor(workers)}
					spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: b.Shape, ok: true, c: b}}
					spec.out = []arg{{dt: ir.Float32, shape: z.Shape, ok: true}}
					p := planImplicitConv(spec, arg{}, nil, false)
					require.NotNil(t, p)
					require.NotNil(t, p.dw, "the depthwise kernel was not chosen")
					took++
				}
				runImplicit(t, workers, intoCase{op: "Conv", attrs: attrs, in: []*ir.Tensor{x, w, b}, consts: []bool{false, true, true}, tol: 1e-4})
				fa := append(append([]ir.AttrOption{}, attrs...), actAttrs(act)...)
				runImplicit(t, workers, intoCase{op: "FusedConv", attrs: fa, in: []*ir.Tensor{x, w, b, z}, consts: []bool{false, true, true}, tol: 1e-4})
				runImplicit(t, workers, intoCase{op: "FusedConv", attrs: fa, in: []*ir.Tensor{x, w, nil, z}, consts: []bool{false, true}, tol: 1e-4})
			})
		}
		if kernels.DepthwiseFast(9) {
			require.Greater(t, took, 10, "too few cases ran the depthwise kernel")
		}
	})
}
