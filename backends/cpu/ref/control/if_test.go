package control

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// ifGraph builds: If(cond) then x + [10, 20, 30] else alias(y), where x and y
// are outer-scope inputs of the main graph.
func ifGraph(nThenOut int) (*ir.Graph, *ir.Node) {
	g := ir.NewGraph("main")
	cond := g.AddInput("cond", ir.Bool, ir.Scalar())
	x := g.AddInput("x", ir.Float32, ir.S(3))
	y := g.AddInput("y", ir.Float32, ir.S(2))

	then := g.NewSubgraph("then")
	k := then.AddConst("k", f32([]int64{3}, 10, 20, 30))
	sum := then.AddNode("test.Add", "", []*ir.Value{x, k}, 1, nil).Outputs[0]
	for i := 0; i < nThenOut; i++ {
		then.Outputs = append(then.Outputs, sum)
	}

	els := g.NewSubgraph("else")
	els.Outputs = []*ir.Value{els.AddNode("test.Alias", "", []*ir.Value{y}, 1, nil).Outputs[0]}

	n := g.AddNode("If", "if", []*ir.Value{cond}, 1, ir.Attrs{
		"then_branch": {Kind: ir.AttrGraph, Graph: then},
		"else_branch": {Kind: ir.AttrGraph, Graph: els},
	})
	return g, n
}

func TestIf(t *testing.T) {
	g, n := ifGraph(1)
	x := f32([]int64{3}, 1, 2, 3)
	y := f32([]int64{2}, -1, -2)

	out, err := run(t, g, n, boolT(true), x, y)
	require.NoError(t, err)
	require.Equal(t, []int64{3}, out[0].Shape)
	require.Equal(t, []float64{11, 22, 33}, floats(out[0]))

	out, err = run(t, g, n, boolT(false), x, y)
	require.NoError(t, err)
	require.Equal(t, []float64{-1, -2}, floats(out[0]))
	// The else branch aliases y; the node's output must be a copy of it.
	require.NotSame(t, y, out[0])
	out[0].SetFloat64(0, 99)
	require.Equal(t, -1.0, y.Float64(0))

	// A one-element cond of rank 1 is accepted too.
	c1 := ir.NewTensor(ir.Bool, []int64{1})
	c1.SetInt64(0, 1)
	out, err = run(t, g, n, c1, x, y)
	require.NoError(t, err)
	require.Equal(t, []float64{11, 22, 33}, floats(out[0]))
}

func TestIfErrors(t *testing.T) {
	x := f32([]int64{3}, 1, 2, 3)
	y := f32([]int64{2}, -1, -2)
	g, n := ifGraph(1)
	tests := []struct {
		name string
		cond *ir.Tensor
	}{
		{"float cond", f32(nil, 1)},
		{"int cond", i64(nil, 1)},
		{"two-element cond", ir.NewTensor(ir.Bool, []int64{2})},
	}
	for _, tc := range tests {
		_, err := run(t, g, n, tc.cond, x, y)
		require.Error(t, err, tc.name)
	}

	g2, n2 := ifGraph(2) // then branch has two outputs, the node one
	_, err := run(t, g2, n2, boolT(true), x, y)
	require.ErrorContains(t, err, "outputs")

	g3, n3 := ifGraph(1)
	delete(n3.Attrs, "then_branch")
	_, err = run(t, g3, n3, boolT(true), x, y)
	require.ErrorContains(t, err, "then_branch")
}
