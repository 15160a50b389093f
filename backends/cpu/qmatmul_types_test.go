package cpu_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// TestQMatMulEveryBlockType runs QMatMul through a CPU session for every
// block type ir/quant decodes: Q8_0, Q4_0, Q4_K and Q6_K on the fast
// integer kernels, the others (Q4_1, Q5_0, Q5_1, Q5_K), which the fast
// builder declines, on the reference kernel. The oracle is the reference graph run; the fast
// kernels quantize the activations to 8 bits, hence the tolerance (1e-2
// of the output's largest magnitude).
func TestQMatMulEveryBlockType(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	dev := cpuDevice(t)
	for _, tc := range []struct {
		dt   ir.DType
		k    int64
		fast bool
	}{
		{ir.Q8_0, 96, true}, {ir.Q4_0, 64, true}, {ir.Q4_1, 64, false}, {ir.Q5_0, 96, false}, {ir.Q5_1, 32, false},
		{ir.Q4_K, 512, true}, {ir.Q5_K, 256, false}, {ir.Q6_K, 256, true},
	} {
		t.Run(fmt.Sprint(tc.dt), func(t *testing.T) {
			const n, rows = 24, 3
			w := ir.NewTensor(tc.dt, []int64{n, tc.k})
			for i := range w.Data {
				w.Data[i] = byte(r.Uint32())
			}
			// Finite, small scales: d (and dmin/m) at the block's start,
			// Q6_K's d at its end.
			bb := tc.dt.BlockBytes()
			at := []int{0}
			switch tc.dt {
			case ir.Q4_1, ir.Q5_1, ir.Q4_K, ir.Q5_K:
				at = []int{0, 2}
			case ir.Q6_K:
				at = []int{208}
			}
			for b := 0; b < len(w.Data)/bb; b++ {
				for _, o := range at {
					binary.LittleEndian.PutUint16(w.Data[b*bb+o:], ir.F32ToF16(float32(r.Float64()*0.02-0.005)))
				}
			}
			b := ir.NewBuilder("qmm")
			x := b.Input("x", ir.Float32, ir.S(rows, tc.k))
			b.Output("y", b.Op("QMatMul", x, b.Const("w", w)))
			g, err := b.Build()
			require.NoError(t, err)
			in := []*ir.Tensor{randTensor(r, rows, tc.k)}
			annotate(t, g, in)
			want, err := ref.RunGraph(context.Background(), g, nil, in)
			require.NoError(t, err)
			s := session(t, g, dev)
			out := []*ir.Tensor{ir.NewTensor(ir.Float32, want[0].Shape)}
			require.NoError(t, s.RunInto(context.Background(), in, out))
			wv, gv := want[0].Float32s(), out[0].Float32s()
			scale := 0.0
			for _, v := range wv {
				scale = math.Max(scale, math.Abs(float64(v)))
			}
			require.Positive(t, scale)
			worst := 0.0
			for i := range wv {
				worst = math.Max(worst, math.Abs(float64(gv[i]-wv[i]))/scale)
			}
			if tc.fast {
				require.LessOrEqual(t, worst, 1e-2, "fast kernel")
			} else {
				require.LessOrEqual(t, worst, 1e-6, "reference fallback")
			}
		})
	}
}
