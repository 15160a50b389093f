package passes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	_ "github.com/weftrt/weft/backends/cpu" // the reference kernels
	"github.com/weftrt/weft/backends/cpu/ref"
	_ "github.com/weftrt/weft/backends/cpu/ref/fused"
	"github.com/weftrt/weft/ir"
)

// rewriteCase is a graph, built twice, and what a pass must make of it.
type rewriteCase struct {
	name  string
	build func(b *ir.Builder)
	want  []string // ops after the pass; nil: the graph must not change
}

// runRewriteCases runs pass on each case and checks the ops that remain,
// that the result is fully typed, keeps its outputs, and computes the same
// as the original on random inputs (reference kernels, 1e-4 relative).
func runRewriteCases(t *testing.T, pass func(*ir.Graph, *Context) (Change, error), cases []rewriteCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, after := typedGraph(t, c.build), typedGraph(t, c.build)
			ch := runPass(t, after, pass)
			require.NoError(t, ir.VerifyTyped(after))
			if c.want == nil {
				require.Equal(t, Change{}, ch)
				require.Equal(t, ops(before), ops(after))
			} else {
				require.Equal(t, c.want, ops(after))
				require.Equal(t, len(before.Nodes)-len(after.Nodes), ch.Fused+ch.Removed-ch.Added, "change %v", ch)
			}
			sameOutputs(t, before, after)
		})
	}
}

// typedGraph builds a graph and infers its types.
func typedGraph(t *testing.T, build func(b *ir.Builder)) *ir.Graph {
	t.Helper()
	b := ir.NewBuilder("t")
	build(b)
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, InferShapes(g))
	require.NoError(t, ir.VerifyTyped(g))
	return g
}

// sameOutputs runs both graphs with the reference kernels on the same
// random inputs (symbolic dims set to 3) and compares the outputs (names,
// types and values).
func sameOutputs(t *testing.T, before, after *ir.Graph) {
	t.Helper()
	require.Equal(t, len(before.Outputs), len(after.Outputs))
	for i := range before.Outputs {
		require.Equal(t, before.Outputs[i].Name, after.Outputs[i].Name)
		require.Equal(t, typeOf(before.Outputs[i]), typeOf(after.Outputs[i]))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]*ir.Tensor, len(before.Inputs))
	for i, v := range before.Inputs {
		dims := v.Shape.Ints()
		for j, d := range dims {
			if d < 0 {
				dims[j] = 3 // every symbolic dim: 3
			}
		}
		tn := ir.NewTensor(v.DType, dims)
		for j := 0; j < tn.Len(); j++ {
			switch {
			case v.DType == ir.Bool:
				tn.SetFloat64(j, float64(rng.IntN(2)))
			case v.DType.IsFloat():
				tn.SetFloat64(j, rng.Float64()*4-2)
			default:
				tn.SetFloat64(j, float64(rng.IntN(7)-3))
			}
		}
		in[i] = tn
	}
	want, err := ref.RunGraph(context.Background(), before, nil, in)
	require.NoError(t, err)
	got, err := ref.RunGraph(context.Background(), after, nil, in)
	require.NoError(t, err)
	for i := range want {
		require.Equal(t, want[i].Shape, got[i].Shape)
		for j := 0; j < want[i].Len(); j++ {
			a, b := want[i].Float64(j), got[i].Float64(j)
			if math.IsNaN(a) && math.IsNaN(b) {
				continue
			}
			require.InDelta(t, a, b, 1e-4*math.Max(1, math.Abs(a)), fmt.Sprintf("output %d element %d", i, j))
		}
	}
}
