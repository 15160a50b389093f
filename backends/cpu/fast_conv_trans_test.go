package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// TestConvTransChunks checks the transposed GEMM's tasks over chunks of
// the tiles (too few 32-channel panels for 4 tasks per worker) against
// the reference on 1, 2 and 3 workers, with a residual and an activation
// that is wrong if applied twice or not at all to some pixel, on planes
// tiled in plain runs, in row runs (Wq > OW) and two rows a tile (OW <=
// 7), and checks the plan: whole panels on 1 worker, chunks on more,
// whose pixel ranges partition the plane.
func TestConvTransChunks(t *testing.T) {
	defer func(m int) { convTransMode = m }(convTransMode)
	convTransMode = 2
	forEachISA(t, func(t *testing.T) {
		if !kernels.ConvTFast() {
			t.Skip("no transposed kernel at this level")
		}
		r := rand.New(rand.NewPCG(31, 32))
		for _, c := range []struct {
			x, w  []int64
			attrs []ir.AttrOption
		}{
			{[]int64{1, 16, 12, 12}, []int64{40, 16, 1, 1}, nil},                                                                    // plain runs
			{[]int64{1, 8, 23, 19}, []int64{64, 8, 3, 3}, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}},                             // row runs
			{[]int64{1, 12, 13, 13}, []int64{33, 12, 3, 3}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1)}}, // two rows a tile
		} {
			for _, workers := range []int{1, 2, 3} {
				t.Run(fmt.Sprint(c.x, c.w, workers), func(t *testing.T) {
					x, w, b := randF32(r, c.x...), randF32(r, c.w...), randF32(r, c.w[0])
					y := refRun(t, nodeN("Conv", c.attrs, []*ir.Tensor{x, w}, 1), []*ir.Tensor{x, w})[0]
					attrs := append(append([]ir.AttrOption{}, c.attrs...), actAttrs("Sigmoid")...)
					runImplicit(t, workers, intoCase{op: "FusedConv", attrs: attrs, in: []*ir.Tensor{x, w, b, randF32(r, y.Shape...)}, consts: []bool{false, true, true}, tol: 1e-3})

					spec := &nodeSpec{n: nodeN("FusedConv", attrs, []*ir.Tensor{x, w, b}, 1), pool: kernels.NewPool(workers)}
					defer spec.pool.Close()
					spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float32, shape: w.Shape, ok: true, c: w}, {dt: ir.Float32, shape: b.Shape, ok: true, c: b}}
					spec.out = []arg{{dt: ir.Float32, shape: y.Shape, ok: true}}
					p := planImplicitConv(spec, arg{}, nil, false)
					require.NotNil(t, p)
					require.NotNil(t, p.tr)
					panels := int(c.w[0]+31) / 32
					if workers == 1 {
						require.Len(t, p.tr.layouts, 1)
						require.Equal(t, 1, p.tr.tasks)
					} else {
						require.Greater(t, len(p.tr.layouts), 1)
						tiles := 0
						for _, l := range p.tr.layouts {
							require.Positive(t, l.Tiles())
							tiles += l.Tiles()
						}
						require.GreaterOrEqual(t, p.tr.tasks, min(4*workers, panels*tiles))
						require.Equal(t, panels*len(p.tr.layouts), p.tr.tasks)
					}
					next := 0
					for _, px := range p.tr.pix {
						require.Equal(t, next, px[0], "chunk pixel ranges %v", p.tr.pix)
						next = px[1]
					}
					require.Equal(t, int(y.Shape[2]*y.Shape[3]), next, "chunk pixel ranges %v", p.tr.pix)
				})
			}
		}
	})
}
