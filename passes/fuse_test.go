package passes

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// mmCase builds x[2,5,6]·w[6,4] followed by tail.
func mmCase(name string, tail func(b *ir.Builder, y *ir.Value) *ir.Value, want ...string) rewriteCase {
	return rewriteCase{name: name, want: want, build: func(b *ir.Builder) {
		x := b.Input("x", ir.Float32, sh(2, 5, 6))
		y := b.Op("MatMul", x, b.Const("w", ramp([]int64{6, 4}, -1, 0.1)))
		b.Output("y", tail(b, y))
	}}
}

func TestFuseMatMul(t *testing.T) {
	bias := func(b *ir.Builder) *ir.Value { return b.Const("bias", ramp([]int64{4}, -0.5, 0.3)) }
	fmm := []string{"FusedMatMul"}
	runRewriteCases(t, fusePass, []rewriteCase{
		mmCase("bias relu", func(b *ir.Builder, y *ir.Value) *ir.Value { return b.Op("Relu", b.Op("Add", y, bias(b))) }, fmm...),
		mmCase("bias first", func(b *ir.Builder, y *ir.Value) *ir.Value { return b.Op("Add", bias(b), y) }, fmm...),
		mmCase("bias [1,1,4]", func(b *ir.Builder, y *ir.Value) *ir.Value {
			return b.Op("Add", y, b.Const("b", ramp([]int64{1, 1, 4}, 0, 1)))
		}, fmm...),
		mmCase("gelu", func(b *ir.Builder, y *ir.Value) *ir.Value { return b.Op("Gelu", y) }, fmm...),
		mmCase("gelu tanh", func(b *ir.Builder, y *ir.Value) *ir.Value {
			return b.OpA("Gelu", at(ir.Str("approximate", "tanh")), b.Op("Add", y, bias(b)))
		}, fmm...),
		mmCase("leaky", func(b *ir.Builder, y *ir.Value) *ir.Value {
			return b.OpA("LeakyRelu", at(ir.Float("alpha", 0.2)), b.Op("Add", y, bias(b)))
		}, fmm...),
		mmCase("sigmoid", func(b *ir.Builder, y *ir.Value) *ir.Value { return b.Op("Sigmoid", y) }, fmm...),
		mmCase("tanh", func(b *ir.Builder, y *ir.Value) *ir.Value { return b.Op("Tanh", y) }, fmm...),
		mmCase("silu", func(b *ir.Builder, y *ir.Value) *ir.Value { return b.Op("SiLU", b.Op("Add", y, bias(b))) }, fmm...),
		mmCase("relu6", func(b *ir.Builder, y *ir.Value) *ir.Value { return b.Op("Clip", y, f32s(b, 0), f32s(b, 0.5)) }, fmm...),
		mmCase("clip max only", func(b *ir.Builder, y *ir.Value) *ir.Value { return b.Op("Clip", y, nil, f32s(b, 0.5)) }, fmm...),
		mmCase("clip runtime bound", func(b *ir.Builder, y *ir.Value) *ir.Value {
			return b.Op("Clip", b.Op("Add", y, bias(b)), b.Input("lo", ir.Float32, sh()))
		}, "FusedMatMul", "Clip"),
		// an Add that is not a bias over the last dim: the MatMul stays.
		mmCase("matrix add", func(b *ir.Builder, y *ir.Value) *ir.Value {
			return b.Op("Add", y, b.Const("m", ramp([]int64{5, 4}, 0, 1)))
		}),
		mmCase("plain", func(b *ir.Builder, y *ir.Value) *ir.Value { return y }),
		{name: "product read twice", build: func(b *ir.Builder) {
			y := b.Op("MatMul", b.Input("x", ir.Float32, sh(3, 6)), b.Const("w", ramp([]int64{6, 4}, -1, 0.1)))
			b.Output("y", b.Op("Relu", y))
			b.Output("p", y)
		}},
		{name: "bias sum read twice", want: []string{"FusedMatMul", "Relu"}, build: func(b *ir.Builder) {
			y := b.Op("Add", b.Op("MatMul", b.Input("x", ir.Float32, sh(3, 6)), b.Const("w", ramp([]int64{6, 4}, -1, 0.1))), f32(b, 1, 2, 3, 4))
			b.Output("y", b.Op("Relu", y))
			b.Output("p", y)
		}},
		{name: "integer matmul", build: func(b *ir.Builder) {
			b.Output("y", b.Op("Relu", b.Op("MatMul", b.Input("x", ir.Int32, sh(3, 6)), b.Input("w", ir.Int32, sh(6, 4)))))
		}},
	})
	// attributes
	g := typedGraph(t, func(b *ir.Builder) {
		y := b.Op("MatMul", b.Input("x", ir.Float32, sh(3, 6)), b.Input("w", ir.Float32, sh(6, 4)))
		y.Producer.Name = "fc"
		b.Output("y", b.Op("Clip", b.Op("Add", y, f32(b, 1, 2, 3, 4)), f32s(b, -1), f32s(b, 6)))
	})
	out := g.Outputs[0]
	require.Equal(t, Change{Fused: 2}, runPass(t, g, fusePass))
	n := g.Nodes[0]
	require.Equal(t, "fc", n.Name)
	require.Same(t, out, n.Outputs[0])
	require.Len(t, n.Inputs, 3)
	require.Equal(t, "Clip", n.AttrString("activation", ""))
	require.Equal(t, float32(-1), n.AttrFloat("activation_alpha", 0))
	require.Equal(t, float32(6), n.AttrFloat("activation_beta", 0))
}

// convCase builds Conv(x[1,2,5,5], w[3,2,3,3], b[3]; pads 1) followed by tail.
func convCase(name string, tail func(b *ir.Builder, x, y *ir.Value) *ir.Value, want ...string) rewriteCase {
	return rewriteCase{name: name, want: want, build: func(b *ir.Builder) {
		x := b.Input("x", ir.Float32, sh(1, 2, 5, 5))
		y := b.OpA("Conv", at(ir.Ints("pads", 1, 1, 1, 1), ir.Ints("kernel_shape", 3, 3)), x,
			b.Const("w", ramp([]int64{3, 2, 3, 3}, -1, 0.04)), b.Const("b", ramp([]int64{3}, 0.1, 0.1)))
		b.Output("y", tail(b, b.Input("z", ir.Float32, sh(1, 3, 5, 5)), y))
	}}
}

func TestFuseConv(t *testing.T) {
	fc := []string{"FusedConv"}
	runRewriteCases(t, fusePass, []rewriteCase{
		convCase("residual relu", func(b *ir.Builder, z, y *ir.Value) *ir.Value { return b.Op("Relu", b.Op("Add", y, z)) }, fc...),
		convCase("residual first", func(b *ir.Builder, z, y *ir.Value) *ir.Value { return b.Op("Add", z, y) }, fc...),
		convCase("relu", func(b *ir.Builder, z, y *ir.Value) *ir.Value { return b.Op("Relu", y) }, fc...),
		convCase("silu", func(b *ir.Builder, z, y *ir.Value) *ir.Value { return b.Op("SiLU", y) }, fc...),
		// a per-channel Add is no residual: Conv stays, the Add and Relu chain.
		convCase("channel add", func(b *ir.Builder, z, y *ir.Value) *ir.Value {
			return b.Op("Relu", b.Op("Add", y, b.Const("c", ramp([]int64{3, 1, 1}, 0, 1))))
		}, "Conv", "Fused"),
		convCase("plain", func(b *ir.Builder, z, y *ir.Value) *ir.Value { return y }),
	})
	g := typedGraph(t, convCase("", func(b *ir.Builder, z, y *ir.Value) *ir.Value { return b.Op("Relu", b.Op("Add", y, z)) }).build)
	runPass(t, g, fusePass)
	n := g.Nodes[0]
	require.Equal(t, []string{"x", "w", "b", "z"}, []string{n.Inputs[0].Name, n.Inputs[1].Name, n.Inputs[2].Name, n.Inputs[3].Name})
	require.Equal(t, []int64{1, 1, 1, 1}, n.AttrInts("pads", nil))
	require.Equal(t, "Relu", n.AttrString("activation", ""))
}

func TestFuseChains(t *testing.T) {
	x := func(b *ir.Builder) *ir.Value { return b.Input("x", ir.Float32, sh(3, 4)) }
	runRewriteCases(t, fusePass, []rewriteCase{
		{name: "unary chain", want: []string{"Fused"}, build: func(b *ir.Builder) {
			b.Output("y", b.Op("Exp", b.Op("Neg", b.Op("Abs", x(b)))))
		}},
		{name: "tree with broadcast and consts", want: []string{"Fused"}, build: func(b *ir.Builder) {
			v, w := x(b), b.Input("w", ir.Float32, sh(4))
			s := b.Op("Mul", b.Op("Sub", v, w), f32s(b, 0.5))
			b.Output("y", b.Op("Add", b.Op("Tanh", s), b.Op("Sigmoid", w)))
		}},
		{name: "where and comparison", want: []string{"Fused"}, build: func(b *ir.Builder) {
			v := x(b)
			b.Output("y", b.Op("Where", b.Op("Greater", v, f32s(b, 0)), v, b.Op("Mul", v, f32s(b, 0.1))))
		}},
		{name: "cast", want: []string{"Fused"}, build: func(b *ir.Builder) {
			b.Output("y", b.OpA("Cast", at(ir.Int("to", int64(ir.Float64))), b.Op("Floor", b.Op("Mul", x(b), f32s(b, 3)))))
		}},
		{name: "multi-use splits the chain", want: []string{"Fused", "Fused"}, build: func(b *ir.Builder) {
			e := b.Op("Exp", b.Op("Neg", x(b)))
			b.Output("y", b.Op("Mul", b.Op("Sqrt", b.Op("Abs", e)), b.Op("Sin", b.Op("Cos", e))))
		}},
		{name: "graph output inside", want: []string{"Neg", "Fused"}, build: func(b *ir.Builder) {
			n := b.Op("Neg", x(b))
			b.Output("n", n)
			b.Output("y", b.Op("Exp", b.Op("Abs", n)))
		}},
		{name: "shape arithmetic stays", build: func(b *ir.Builder) {
			v := b.Input("x", ir.Float32, sh(3, 4))
			n := b.Op("Gather", b.Op("Shape", v), i64(b, 1))
			half := b.Op("Div", b.Op("Mul", n, i64(b, 2)), i64(b, 4))
			scale := b.Op("Sqrt", b.OpA("Cast", at(ir.Int("to", int64(ir.Float32))), b.Op("Gather", b.Op("Shape", v), i64s(b, 0))))
			b.Output("y", b.Op("Reshape", b.Op("Div", v, scale), b.OpA("Concat", at(ir.Int("axis", 0)), half, i64(b, -1))))
		}},
		{name: "single op", build: func(b *ir.Builder) { b.Output("y", b.Op("Exp", x(b))) }},
		{name: "non-elementwise in between", build: func(b *ir.Builder) {
			b.Output("y", b.Op("Exp", b.OpA("Softmax", at(ir.Int("axis", -1)), b.Op("Neg", x(b)))))
		}},
	})
	// the body: typed, fresh inputs in first-use order, small consts inlined.
	g := typedGraph(t, func(b *ir.Builder) {
		v, w := b.Input("x", ir.Float32, sh(5, 4)), b.Input("w", ir.Float32, sh(4))
		big := b.Const("big", ramp([]int64{5, 4}, 0, 1)) // 80 bytes: an input
		b.Output("y", b.Op("Add", b.Op("Mul", b.Op("Sub", w, v), f32s(b, 2)), big))
	})
	require.Equal(t, Change{Fused: 2}, runPass(t, g, fusePass))
	n := g.Nodes[0]
	require.Equal(t, "Fused", n.Op)
	require.Equal(t, []string{"w", "x", "big"}, []string{n.Inputs[0].Name, n.Inputs[1].Name, n.Inputs[2].Name})
	body := n.AttrGraph("body")
	require.NoError(t, ir.VerifyTyped(body))
	require.Len(t, body.Inputs, 3)
	require.Len(t, body.Consts, 1)
	require.Equal(t, []string{"Sub", "Mul", "Add"}, ops(body))
	require.Equal(t, "f32[5,4]", typeOf(body.Outputs[0]))
	require.Same(t, g, body.Parent)
}

// Fusing twice changes nothing the second time (Fused bodies are kernels,
// not fused again), and chains inside a Loop body fuse there.
func TestFuseIdempotentAndSubgraphs(t *testing.T) {
	build := func(b *ir.Builder) {
		x := b.Input("x", ir.Float32, sh(3))
		body := sub(b, "body")
		body.Input("i", ir.Int64, sh())
		body.Input("cond", ir.Bool, sh())
		acc := body.Input("acc", ir.Float32, sh(3))
		body.Output("cond_out", body.Op("Identity", body.G.Inputs[1]))
		body.Output("acc_out", body.Op("Add", body.Op("Tanh", body.Op("Mul", acc, x)), x))
		y := b.OpA("Loop", at(ir.GraphAttr("body", body.G)), i64s(b, 3), nil, b.Op("Exp", b.Op("Neg", x)))
		b.Output("y", y)
	}
	g := typedGraph(t, build)
	ch := runPass(t, g, fusePass)
	require.Equal(t, Change{Fused: 3}, ch) // Neg+Exp outside; Mul+Tanh+Add in the body
	require.NoError(t, ir.VerifyTyped(g))
	require.Equal(t, []string{"Fused", "Loop"}, ops(g))
	require.Equal(t, []string{"Identity", "Fused"}, ops(g.Nodes[1].AttrGraph("body")))
	require.Equal(t, Change{}, runPass(t, g, fusePass))
	sameOutputs(t, typedGraph(t, build), g)
}
