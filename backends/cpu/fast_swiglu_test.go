package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// siluMulNode builds a Fused node over inputs of shapes as: the body
// SiLU(x0)·x1 (upFirst: x1·SiLU(x0)), or with extra one more Add of x1.
func siluMulNode(t *testing.T, out []int64, upFirst, extra bool, shapes ...[]int64) *ir.Node {
	t.Helper()
	b := ir.NewBuilder("f")
	body := b.G.NewSubgraph("body")
	var outer, inner []*ir.Value
	for _, sh := range shapes {
		outer = append(outer, b.Input("", ir.Float32, ir.ShapeOf(sh)))
		inner = append(inner, body.AddInput("", ir.Float32, ir.ShapeOf(sh)))
	}
	op := func(o string, in ...*ir.Value) *ir.Value {
		v := body.AddNode(o, "", in, 1, nil).Outputs[0]
		v.DType, v.Shape = ir.Float32, ir.ShapeOf(out)
		return v
	}
	s := op("SiLU", inner[0])
	a, c := s, inner[1]
	if upFirst {
		a, c = c, a
	}
	y := op("Mul", a, c)
	if extra {
		y = op("Add", y, inner[1])
	}
	body.Outputs = []*ir.Value{y}
	v := b.OpA("Fused", []ir.AttrOption{ir.GraphAttr("body", body)}, outer...)
	v.DType, v.Shape = ir.Float32, ir.ShapeOf(out)
	return b.G.Nodes[0]
}

// TestFastSiLUMul checks the SwiGLU kernel against the reference (the body
// in float64, rounded per op) on one block, several with a tail, and with
// the output in place of either input; and that it declines other bodies
// and broadcasting inputs, which the chain interpreter then runs.
func TestFastSiLUMul(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, tc := range []struct {
		shape   []int64
		upFirst bool
	}{{[]int64{3, 7}, false}, {[]int64{5, 2051}, true}, {[]int64{2, 3, 4096}, false}} {
		n := siluMulNode(t, tc.shape, tc.upFirst, false, tc.shape, tc.shape)
		for alias := -1; alias < 2; alias++ {
			in := []*ir.Tensor{randF32(r, tc.shape...), randF32(r, tc.shape...)}
			want := refRun(t, n, in)
			out := []*ir.Tensor{ir.NewTensor(ir.Float32, tc.shape)}
			spec := specFor(n, in, out, nil, 2)
			k := buildFastSiLUMul(spec)
			require.NotNil(t, k, "%v: declined", tc.shape)
			scratch := ir.AlignedBytes(spec.scratch)
			if alias >= 0 {
				out[0] = in[alias].Clone()
				in[alias] = out[0]
			}
			require.NoError(t, k(in, out, scratch))
			requireClose(t, want[0], out[0], 1e-6)
		}
	}
	sh := []int64{4, 8}
	for name, n := range map[string]*ir.Node{
		"three ops":  siluMulNode(t, sh, false, true, sh, sh),
		"broadcast":  siluMulNode(t, sh, false, false, sh, []int64{1, 8}),
		"broadcast0": siluMulNode(t, sh, false, false, []int64{4, 1}, sh),
	} {
		in := make([]*ir.Tensor, len(n.Inputs))
		for i, v := range n.Inputs {
			in[i] = randF32(r, v.Shape.Ints()...)
		}
		out := []*ir.Tensor{ir.NewTensor(ir.Float32, sh)}
		require.Nil(t, buildFastSiLUMul(specFor(n, in, out, nil, 2)), name)
		k, err := buildIntoForTest(n, in, out, nil)
		require.NoError(t, err)
		require.NotNil(t, k, "%s: the chain interpreter declined", name)
		require.NoError(t, k(in, out))
		requireClose(t, refRun(t, n, in)[0], out[0], 1e-6)
	}
}
