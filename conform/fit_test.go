package conform

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestFitInputShapes(t *testing.T) {
	g := ir.NewGraph("g")
	c := g.AddConst("w", ir.NewTensor(ir.Float32, []int64{2}))
	g.Inputs = append(g.Inputs, c) // an initializer listed as input is skipped
	a := g.AddInput("a", ir.Float32, ir.Shape{ir.Sym("n"), {Size: 4}})
	like := g.AddInput("like", ir.Float32, ir.S(3, 4))
	FitInputShapes(g, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{7, 4}), ir.NewTensor(ir.Float32, []int64{1})})
	require.Equal(t, ir.Shape{ir.Sym("n"), {Size: 4}}, a.Shape, "compatible declarations stay as they are")
	require.Equal(t, ir.S(1), like.Shape, "a contradicted declaration takes the data's shape")
	require.Equal(t, ir.S(2), c.Shape)
}

func TestKnownDivergencesAreNarrow(t *testing.T) {
	for name, why := range KnownDivergences {
		require.Contains(t, name, "BFLOAT16", "only the bf16 rounding divergence is excused")
		require.NotEmpty(t, why)
	}
}
