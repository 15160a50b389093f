package passes

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// proj adds FusedMatMul(x, w[K, n], bias[n]?){act} (MatMul when there is
// neither bias nor act) with distinct constants per seed.
func proj(b *ir.Builder, x *ir.Value, seed float32, K, n int64, bias bool, act string) *ir.Value {
	w := b.Const("", ramp([]int64{K, n}, -1+seed/10, 0.07+seed/100))
	if !bias && act == "" {
		return b.Op("MatMul", x, w)
	}
	var opts []ir.AttrOption
	if act != "" {
		opts = append(opts, ir.Str("activation", act))
	}
	in := []*ir.Value{x, w}
	if bias {
		in = append(in, b.Const("", ramp([]int64{n}, seed/4-0.5, 0.3)))
	}
	return b.OpA("FusedMatMul", opts, in...)
}

func TestHFuse(t *testing.T) {
	x := func(b *ir.Builder) *ir.Value { return b.Input("x", ir.Float32, sh(2, 5, 6)) }
	runRewriteCases(t, hfusePass, []rewriteCase{
		{name: "qkv with bias", want: []string{"FusedMatMul", "Split", "Relu"}, build: func(b *ir.Builder) {
			x := x(b)
			b.Output("q", proj(b, x, 1, 6, 4, true, ""))
			b.Output("k", b.Op("Relu", proj(b, x, 2, 6, 3, true, "")))
			b.Output("v", proj(b, x, 3, 6, 5, true, ""))
		}},
		{name: "plain matmuls", want: []string{"MatMul", "Split"}, build: func(b *ir.Builder) {
			x := x(b)
			b.Output("a", proj(b, x, 1, 6, 4, false, ""))
			b.Output("c", proj(b, x, 2, 6, 7, false, ""))
		}},
		{name: "same activation", want: []string{"FusedMatMul", "Split"}, build: func(b *ir.Builder) {
			x := x(b)
			b.Output("a", proj(b, x, 1, 6, 4, true, "Gelu"))
			b.Output("c", proj(b, x, 2, 6, 4, true, "Gelu"))
		}},
		{name: "symbolic batch", want: []string{"FusedMatMul", "Split"}, build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh("n", 6))
			b.Output("a", proj(b, x, 1, 6, 4, true, ""))
			b.Output("c", proj(b, x, 2, 6, 2, true, ""))
		}},
		{name: "two groups and a loner", want: []string{"FusedMatMul", "Split", "MatMul", "Split", "FusedMatMul"}, build: func(b *ir.Builder) {
			x := x(b)
			b.Output("a", proj(b, x, 1, 6, 4, true, ""))
			b.Output("c", proj(b, x, 2, 6, 4, false, ""))
			b.Output("d", proj(b, x, 3, 6, 3, true, ""))
			b.Output("e", proj(b, x, 4, 6, 3, false, ""))
			b.Output("f", proj(b, x, 5, 6, 3, true, "Sigmoid"))
		}},
		{name: "inputs differ", build: func(b *ir.Builder) {
			b.Output("a", proj(b, x(b), 1, 6, 4, true, ""))
			b.Output("c", proj(b, b.Input("x2", ir.Float32, sh(2, 5, 6)), 2, 6, 4, true, ""))
		}},
		{name: "runtime weight", build: func(b *ir.Builder) {
			x := x(b)
			b.Output("a", proj(b, x, 1, 6, 4, true, ""))
			b.Output("c", b.Op("FusedMatMul", x, b.Input("w", ir.Float32, sh(6, 4)), b.Const("", ramp([]int64{4}, 0, 1))))
		}},
		{name: "runtime bias", build: func(b *ir.Builder) {
			x := x(b)
			b.Output("a", proj(b, x, 1, 6, 4, true, ""))
			b.Output("c", b.Op("FusedMatMul", x, b.Const("", ramp([]int64{6, 4}, 0, 1)), b.Input("bias", ir.Float32, sh(4))))
		}},
		{name: "scalar bias", build: func(b *ir.Builder) {
			x := x(b)
			b.Output("a", proj(b, x, 1, 6, 4, true, ""))
			b.Output("c", b.Op("FusedMatMul", x, b.Const("", ramp([]int64{6, 4}, 0, 1)), f32(b, 0.5)))
		}},
		{name: "batched weight", build: func(b *ir.Builder) {
			x := x(b)
			b.Output("a", proj(b, x, 1, 6, 4, false, ""))
			b.Output("c", b.Op("MatMul", x, b.Const("", ramp([]int64{2, 6, 4}, 0, 1))))
		}},
		{name: "different activations", build: func(b *ir.Builder) {
			x := x(b)
			b.Output("a", proj(b, x, 1, 6, 4, true, "Gelu"))
			b.Output("c", proj(b, x, 2, 6, 4, true, "Relu"))
		}},
		{name: "different alphas", build: func(b *ir.Builder) {
			x := x(b)
			for i, alpha := range []float32{0.1, 0.2} {
				w := b.Const("", ramp([]int64{6, 4}, float32(i), 0.1))
				b.Output([]string{"a", "c"}[i], b.OpA("FusedMatMul", at(ir.Str("activation", "LeakyRelu"), ir.Float("activation_alpha", alpha)), x, w))
			}
		}},
		{name: "bias and no bias", build: func(b *ir.Builder) {
			x := x(b)
			b.Output("a", proj(b, x, 1, 6, 4, true, ""))
			b.Output("c", proj(b, x, 2, 6, 4, false, ""))
		}},
		{name: "shared weight", build: func(b *ir.Builder) {
			x := x(b)
			w := b.Const("w", ramp([]int64{6, 4}, 0, 1))
			b.Output("a", b.Op("MatMul", x, w))
			b.Output("c", proj(b, x, 2, 6, 4, false, ""))
			b.Output("d", b.Op("MatMul", b.Input("x2", ir.Float32, sh(6)), w))
		}},
		{name: "integer", build: func(b *ir.Builder) {
			x := b.Input("x", ir.Int32, sh(3, 6))
			b.Output("a", b.Op("MatMul", x, b.Const("", ir.NewTensor(ir.Int32, []int64{6, 2}))))
			b.Output("c", b.Op("MatMul", x, b.Const("", ir.NewTensor(ir.Int32, []int64{6, 2}))))
		}},
	})
}

// TestHFuseNodes checks the merged constants, the Split and the positions.
func TestHFuseNodes(t *testing.T) {
	g := typedGraph(t, func(b *ir.Builder) {
		x := b.Input("x", ir.Float32, sh(3, 2))
		pre := b.Op("Relu", x)
		q := b.Op("FusedMatMul", pre, b.Const("wq", ir.FromFloat32([]int64{2, 2}, []float32{1, 2, 3, 4})), b.Const("bq", ir.FromFloat32([]int64{1, 2}, []float32{10, 20})))
		q.Producer.Name = "q"
		b.Output("q", q)
		b.Output("mid", b.Op("Neg", x))
		b.Output("k", b.Op("FusedMatMul", pre, b.Const("wk", ir.FromFloat32([]int64{2, 1}, []float32{5, 6})), b.Const("bk", ir.FromFloat32([]int64{1}, []float32{30}))))
	})
	outs := append([]*ir.Value(nil), g.Outputs...)
	ch := runPass(t, g, hfusePass)
	require.Equal(t, Change{Fused: 1, Added: 1, Consts: -3, BytesSaved: -(6*4 + 3*4 + 2*8)}, ch)
	require.Equal(t, []string{"Relu", "FusedMatMul", "Split", "Neg"}, ops(g))
	mm, split := g.Nodes[1], g.Nodes[2]
	require.Equal(t, "q/hfuse", mm.Name)
	require.Equal(t, []int64{2, 3}, mm.Inputs[1].Const.Shape)
	require.Equal(t, []float32{1, 2, 5, 3, 4, 6}, mm.Inputs[1].Const.Float32s())
	require.Equal(t, []float32{10, 20, 30}, mm.Inputs[2].Const.Float32s())
	require.Equal(t, []int64{2, 1}, split.Inputs[1].Const.Int64s())
	require.Equal(t, int64(1), split.AttrInt("axis", 0))
	require.Same(t, outs[0], split.Outputs[0])
	require.Same(t, outs[2], split.Outputs[1])
	require.Same(t, split, outs[2].Producer)
	require.NoError(t, ir.VerifyTyped(g))
	// A second run finds nothing to merge.
	require.Equal(t, Change{}, runPass(t, g, hfusePass))
}
