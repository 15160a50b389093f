package passes

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// lowered infers g, lowers it and checks that the result is fully typed.
func lowered(t *testing.T, g *ir.Graph) Change {
	t.Helper()
	require.NoError(t, InferShapes(g))
	ch := runPass(t, g, lowerPass)
	require.NoError(t, ir.VerifyTyped(g))
	return ch
}

func floats(tn *ir.Tensor) []float64 {
	out := make([]float64, tn.Len())
	for i := range out {
		out[i] = tn.Float64(i)
	}
	return out
}

func TestLowerGemm(t *testing.T) {
	b := ir.NewBuilder("t")
	a := b.Input("a", ir.Float32, sh(4, "m")) // transA: a is [K, M]
	w := b.Const("w", ir.FromFloat32([]int64{3, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
	c := b.Const("c", ir.FromFloat32([]int64{3}, []float32{1, -2, 0.5}))
	y := b.OpA("Gemm", at(ir.Int("transA", 1), ir.Int("transB", 1), ir.Float("alpha", 0.5), ir.Float("beta", 2)), a, w, c)
	y.Producer.Name = "fc"
	b.Output("y", y)
	g, err := b.Build()
	require.NoError(t, err)
	ch := lowered(t, g)
	require.Equal(t, Change{Removed: 1, Added: 4, Consts: -3, BytesSaved: -(48 + 4 + 12)}, ch)
	require.Equal(t, []string{"Transpose", "MatMul", "Mul", "Add"}, ops(g))
	require.Equal(t, []int64{1, 0}, g.Nodes[0].AttrInts("perm", nil))
	require.Equal(t, "f32[m,4]", typeOf(g.Nodes[0].Outputs[0]))
	require.Same(t, y, g.Nodes[3].Outputs[0], "the last node keeps the Gemm's output value")
	require.Same(t, y, g.Outputs[0])
	require.Equal(t, "f32[m,3]", typeOf(y))

	// B was transposed at compile time; beta*C folded; alpha a scalar.
	wt := g.Nodes[1].Inputs[1]
	require.Equal(t, []int64{4, 3}, wt.Const.Shape)
	require.Equal(t, []float64{1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12}, floats(wt.Const))
	require.Equal(t, []float64{0.5}, floats(g.Nodes[2].Inputs[1].Const))
	require.Equal(t, []float64{2, -4, 1}, floats(g.Nodes[3].Inputs[1].Const))
}

func TestLowerGemmVariants(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *ir.Builder) *ir.Value
		ops   []string
	}{
		{"plain", func(b *ir.Builder) *ir.Value {
			return b.Op("Gemm", b.Input("a", ir.Float16, sh(2, 3)), b.Input("w", ir.Float16, sh(3, 5)))
		}, []string{"MatMul"}},
		{"beta 0 ignores C", func(b *ir.Builder) *ir.Value {
			return b.OpA("Gemm", at(ir.Float("beta", 0)), zeros(b, 2, 3), zeros(b, 3, 5), b.Input("c", ir.Float32, sh(5)))
		}, []string{"MatMul"}},
		{"runtime C with beta", func(b *ir.Builder) *ir.Value {
			return b.OpA("Gemm", at(ir.Float("beta", 3)), zeros(b, 2, 3), zeros(b, 3, 5), b.Input("c", ir.Float32, sh(2, 1)))
		}, []string{"MatMul", "Mul", "Add"}},
		{"integer", func(b *ir.Builder) *ir.Value {
			return b.Op("Gemm", b.Input("a", ir.Int32, sh(2, 3)), b.Input("w", ir.Int32, sh(3, 5)), b.Input("c", ir.Int32, sh(5)))
		}, []string{"MatMul", "Add"}},
		{"integer with fractional alpha stays", func(b *ir.Builder) *ir.Value {
			return b.OpA("Gemm", at(ir.Float("alpha", 0.5)), b.Input("a", ir.Int32, sh(2, 3)), b.Input("w", ir.Int32, sh(3, 5)))
		}, []string{"Gemm"}},
		{"unknown dtype stays", func(b *ir.Builder) *ir.Value {
			return b.Op("Gemm", b.Op("FooBar", zeros(b, 2, 3)), zeros(b, 3, 5))
		}, []string{"FooBar", "Gemm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ir.NewBuilder("t")
			y := tc.build(b)
			b.Output("y", y)
			require.NoError(t, InferShapes(b.G))
			want := typeOf(y)
			runPass(t, b.G, lowerPass)
			require.Equal(t, tc.ops, ops(b.G))
			require.Equal(t, want, typeOf(y))
			require.Same(t, y, b.G.Outputs[0])
		})
	}
}

func TestLowerBatchNorm(t *testing.T) {
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh("n", 2, 5, 5))
	stat := func(v ...float32) *ir.Value { return f32(b, v...) }
	// epsilon 1 keeps the square roots exact: sqrt(3+1) = 2, sqrt(8+1) = 3.
	y := b.OpA("BatchNormalization", at(ir.Float("epsilon", 1)), x, stat(1, 2), stat(0.5, -1), stat(1, 3), stat(3, 8))
	b.Output("y", y)
	g, err := b.Build()
	require.NoError(t, err)
	ch := lowered(t, g)
	require.Equal(t, Change{Removed: 1, Added: 2, Consts: -2, BytesSaved: -16}, ch)
	require.Equal(t, []string{"Mul", "Add"}, ops(g))
	scale, bias := g.Nodes[0].Inputs[1].Const, g.Nodes[1].Inputs[1].Const
	require.Equal(t, []int64{2, 1, 1}, scale.Shape)
	// scale' = gamma/sqrt(var+eps); bias' = beta - mean*scale'.
	require.InDeltaSlice(t, []float64{0.5, 2.0 / 3}, floats(scale), 1e-7)
	require.InDeltaSlice(t, []float64{0, -3}, floats(bias), 1e-7)
	require.Same(t, y, g.Nodes[1].Outputs[0])
	require.Equal(t, "f32[n,2,5,5]", typeOf(y))

	// f16 input of rank 2: constants in f16, shaped [C].
	b = ir.NewBuilder("t")
	y = b.Op("BatchNormalization", b.Input("x", ir.Float16, sh(3, 2)), stat(1, 2), stat(0, 0), stat(0, 0), stat(1, 1))
	b.Output("y", y)
	lowered(t, b.G)
	require.Equal(t, ir.Float16, b.G.Nodes[0].Inputs[1].Const.DType)
	require.Equal(t, []int64{2}, b.G.Nodes[0].Inputs[1].Const.Shape)
}

func TestLowerBatchNormStays(t *testing.T) {
	for name, build := range map[string]func(b *ir.Builder) *ir.Value{
		"runtime mean": func(b *ir.Builder) *ir.Value {
			c := f32(b, 1, 2)
			return b.Op("BatchNormalization", b.Input("x", ir.Float32, sh(1, 2, 3)), c, c, b.Input("m", ir.Float32, sh(2)), c)
		},
		"training": func(b *ir.Builder) *ir.Value {
			c := f32(b, 1, 2)
			return b.OpN("BatchNormalization", 3, at(ir.Int("training_mode", 1)), b.Input("x", ir.Float32, sh(1, 2, 3)), c, c, c, c)[0]
		},
		"unknown rank": func(b *ir.Builder) *ir.Value {
			c := f32(b, 1, 2)
			return b.Op("BatchNormalization", b.Input("x", ir.Float32, nil), c, c, c, c)
		},
	} {
		t.Run(name, func(t *testing.T) {
			b := ir.NewBuilder("t")
			b.Output("y", build(b))
			require.NoError(t, InferShapes(b.G))
			require.Equal(t, Change{}, runPass(t, b.G, lowerPass))
			require.Equal(t, []string{"BatchNormalization"}, ops(b.G))
		})
	}
}

// Lowering inside an If branch keeps the new nodes and constants there.
func TestLowerInSubgraph(t *testing.T) {
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh(2, 3))
	w := zeros(b, 3, 3)
	then, els := sub(b, "then"), sub(b, "else")
	then.Output("t", then.OpA("Gemm", at(ir.Float("alpha", 2)), x, w))
	els.Output("e", els.Op("Neg", x))
	b.Output("y", b.OpA("If", at(ir.GraphAttr("then_branch", then.G), ir.GraphAttr("else_branch", els.G)), b.Input("c", ir.Bool, sh())))
	lowered(t, b.G)
	require.Equal(t, []string{"MatMul", "Mul"}, ops(then.G))
	require.Len(t, then.G.Consts, 1)
	require.Same(t, then.G, then.G.Nodes[0].Outputs[0].Graph)
}
