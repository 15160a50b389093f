package passes

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestInferWeftOps(t *testing.T) {
	relu := at(ir.Str("activation", "Relu"))
	runInferCases(t, []inferCase{
		{"fused matmul", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("batch", "seq", 64))
			return []*ir.Value{
				b.OpA("FusedMatMul", relu, x, zeros(b, 64, 128), zeros(b, 128)),
				b.Op("FusedMatMul", x, zeros(b, 64, 128)),
				b.Op("FusedMatMul", zeros(b, 3), zeros(b, 3, 4), zeros(b, 2, 1)),
				b.Op("FusedMatMul", b.Input("a", ir.Float16, sh("m", "k")), b.Input("c", ir.Float16, sh("k", "n")), b.Input("d", ir.Float16, sh("n"))),
			}
		}, []string{"f32[batch,seq,128]", "f32[batch,seq,128]", "f32[2,4]", "f16[m,n]"}},
		{"fused conv", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("n", 3, 7, 7))
			w := zeros(b, 8, 3, 3, 3)
			pad := ir.Ints("pads", 1, 1, 1, 1)
			return []*ir.Value{
				b.OpA("FusedConv", at(pad, ir.Str("activation", "Relu")), x, w, zeros(b, 8)),
				// The residual has the output's shape: it pins n to 1.
				b.OpA("FusedConv", at(pad), x, w, nil, zeros(b, 1, 8, 7, 7)),
				b.OpA("FusedConv", at(ir.Ints("strides", 2, 2)), x, w, nil, b.Input("z", ir.Float32, sh("n", 8, "h", "w"))),
			}
		}, []string{"f32[n,8,7,7]", "f32[1,8,7,7]", "f32[n,8,3,3]"}},
		{"norm and silu", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.BFloat16, sh("b", "s", 768))
			return []*ir.Value{
				b.Op("RMSNormalization", x, b.Input("g", ir.BFloat16, sh(768))),
				b.OpA("RMSNormalization", at(ir.Int("axis", 1)), x, b.Input("g2", ir.BFloat16, sh(1, 768))),
				b.Op("SiLU", x),
			}
		}, []string{"bf16[b,s,768]", "bf16[b,s,768]", "bf16[b,s,768]"}},
		{"attention", func(b *ir.Builder) []*ir.Value {
			q := b.Input("q", ir.Float32, sh("b", 12, "s", 64))
			k := b.Input("k", ir.Float32, sh("b", 4, "t", 64))
			v := b.Input("v", ir.Float32, sh("b", 4, "t", 32))
			mask := b.Input("mask", ir.Bool, sh("s", "t"))
			return []*ir.Value{
				b.OpA("Attention", at(ir.Int("is_causal", 1)), q, k, v, mask),
				b.Op("Attention", q, k, v, b.Input("am", ir.Float32, sh("b", 1, 1, "t"))),
				// Unknown batch on Q is learnt from K.
				b.Op("Attention", b.Input("q2", ir.Float16, sh("?", 2, 1, 8)), b.Input("k2", ir.Float16, sh(3, 1, 5, 8)), b.Input("v2", ir.Float16, sh("?", 1, 5, 8))),
			}
		}, []string{"f32[b,12,s,32]", "f32[b,12,s,32]", "f16[3,2,1,8]"}},
		{"qmatmul", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("b", "s", 64))
			return []*ir.Value{
				b.Op("QMatMul", x, b.Const("w", ir.NewTensor(ir.Q8_0, []int64{128, 64}))),
				b.Op("QMatMul", b.Input("h", ir.Float16, sh(64)), b.Const("w8", ir.NewTensor(ir.Int8, []int64{10, 64})), zeros(b, 10)),
				b.Op("QMatMul", x, b.Const("wh", ir.NewTensor(ir.Float16, []int64{96, 64}))),
				b.Op("QMatMul", x, b.Const("wb", ir.NewTensor(ir.BFloat16, []int64{3, 64}))),
			}
		}, []string{"f32[b,s,128]", "f16[10]", "f32[b,s,96]", "f32[b,s,3]"}},
		{"qmatmul group with biases", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("b", 1, 64))
			wq, wk := b.Const("wq", ir.NewTensor(ir.Q8_0, []int64{96, 64})), b.Const("wk", ir.NewTensor(ir.Q8_0, []int64{32, 64}))
			return b.OpN("QMatMulGroup", 2, []ir.AttrOption{ir.Int("bias", 1)}, x, wq, wk, zeros(b, 96), zeros(b, 32))
		}, []string{"f32[b,1,96]", "f32[b,1,32]"}},
	})
}

// TestInferFused binds the body inputs (declared without types) to the
// node's inputs and takes the node's outputs from the body's.
func TestInferFused(t *testing.T) {
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh("n", 4))
	y := b.Input("y", ir.Float32, sh(4))
	body := b.G.NewSubgraph("body")
	bx, by := body.AddInput("bx", ir.Invalid, nil), body.AddInput("by", ir.Invalid, nil)
	sum := body.AddNode("Add", "", []*ir.Value{bx, by}, 1, nil).Outputs[0]
	gt := body.AddNode("Greater", "", []*ir.Value{sum, by}, 1, nil).Outputs[0]
	body.Outputs = []*ir.Value{body.AddNode("Relu", "", []*ir.Value{sum}, 1, nil).Outputs[0], gt}
	outs := b.OpN("Fused", 2, at(ir.GraphAttr("body", body)), x, y)
	b.Output("r", outs[0])
	b.Output("g", outs[1])
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, InferShapes(g))
	require.Equal(t, []string{"f32[n,4]", "bool[n,4]"}, []string{typeOf(outs[0]), typeOf(outs[1])})
	require.Equal(t, "f32[n,4]", typeOf(bx), "body input bound")

	// A body that cannot compute on the bound inputs is an error naming it.
	inferErr(t, func(b *ir.Builder) {
		body := b.G.NewSubgraph("bad_body")
		p, q := body.AddInput("p", ir.Invalid, nil), body.AddInput("q", ir.Invalid, nil)
		body.Outputs = body.AddNode("Add", "", []*ir.Value{p, q}, 1, nil).Outputs
		named(b.OpA("Fused", at(ir.GraphAttr("body", body)), zeros(b, 2, 3), zeros(b, 4)), "f")
	}, `"f" (Fused)`, "bad_body", "broadcast")
	inferErr(t, func(b *ir.Builder) {
		body := b.G.NewSubgraph("one_in")
		p := body.AddInput("p", ir.Invalid, nil)
		body.Outputs = body.AddNode("Relu", "", []*ir.Value{p}, 1, nil).Outputs
		b.OpA("Fused", at(ir.GraphAttr("body", body)), zeros(b, 2), zeros(b, 2))
	}, "has 1 inputs, want 2")
	inferErr(t, func(b *ir.Builder) { b.Op("Fused", zeros(b, 2)) }, "without a body")
}

func TestInferWeftErrors(t *testing.T) {
	cases := []struct {
		name      string
		build     func(b *ir.Builder)
		fragments []string
	}{
		{"matmul inner", func(b *ir.Builder) {
			named(b.Op("FusedMatMul", zeros(b, 2, 3), zeros(b, 4, 5)), "fm")
		}, []string{`"fm" (FusedMatMul)`, "dims 3 and 4 differ"}},
		{"matmul bias", func(b *ir.Builder) {
			b.Op("FusedMatMul", zeros(b, 2, 3), zeros(b, 3, 5), zeros(b, 4))
		}, []string{"Bias", "broadcast"}},
		{"matmul dtype", func(b *ir.Builder) {
			b.Op("FusedMatMul", zeros(b, 2, 3), b.Input("w", ir.Float16, sh(3, 5)))
		}, []string{"B is f16, A is f32"}},
		{"conv residual", func(b *ir.Builder) {
			b.Op("FusedConv", zeros(b, 1, 3, 5, 5), zeros(b, 2, 3, 3, 3), nil, zeros(b, 1, 2, 5, 5))
		}, []string{"residual Z", "dims 3 and 5 differ"}},
		{"conv residual rank", func(b *ir.Builder) {
			b.Op("FusedConv", zeros(b, 1, 3, 5, 5), zeros(b, 2, 3, 3, 3), nil, zeros(b, 2, 3, 3))
		}, []string{"residual Z has rank 3"}},
		{"norm axis", func(b *ir.Builder) {
			b.OpA("RMSNormalization", at(ir.Int("axis", 3)), zeros(b, 2, 3), zeros(b, 3))
		}, []string{"RMSNormalization", "axis 3"}},
		{"norm scale", func(b *ir.Builder) {
			b.Op("RMSNormalization", zeros(b, 2, 3), zeros(b, 4))
		}, []string{"Scale", "does not broadcast"}},
		{"attention rank", func(b *ir.Builder) {
			b.Op("Attention", zeros(b, 2, 3, 4), zeros(b, 1, 2, 3, 4), zeros(b, 1, 2, 3, 4))
		}, []string{"Q has rank 3, want 4"}},
		{"attention heads", func(b *ir.Builder) {
			b.Op("Attention", zeros(b, 1, 3, 2, 4), zeros(b, 1, 2, 5, 4), zeros(b, 1, 2, 5, 4))
		}, []string{"3 heads", "2 kv heads"}},
		{"attention head size", func(b *ir.Builder) {
			b.Op("Attention", zeros(b, 1, 2, 2, 4), zeros(b, 1, 2, 5, 8), zeros(b, 1, 2, 5, 4))
		}, []string{"head size", "dims 4 and 8 differ"}},
		{"attention kv length", func(b *ir.Builder) {
			b.Op("Attention", zeros(b, 1, 2, 2, 4), zeros(b, 1, 2, 5, 4), zeros(b, 1, 2, 6, 4))
		}, []string{"kv length", "dims 5 and 6 differ"}},
		{"attention mask", func(b *ir.Builder) {
			b.Op("Attention", zeros(b, 1, 2, 2, 4), zeros(b, 1, 2, 5, 4), zeros(b, 1, 2, 5, 4), zeros(b, 2, 4))
		}, []string{"Mask", "does not broadcast"}},
		{"attention mask dtype", func(b *ir.Builder) {
			b.Op("Attention", zeros(b, 1, 2, 2, 4), zeros(b, 1, 2, 5, 4), zeros(b, 1, 2, 5, 4), b.Input("m", ir.Int64, sh(5)))
		}, []string{"Mask is i64"}},
		{"qmatmul inner", func(b *ir.Builder) {
			b.Op("QMatMul", zeros(b, 2, 32), b.Const("w", ir.NewTensor(ir.Q8_0, []int64{8, 64})))
		}, []string{"QMatMul", "dims 32 and 64 differ"}},
		{"qmatmul weight rank", func(b *ir.Builder) {
			b.Op("QMatMul", zeros(b, 2, 32), zeros(b, 32))
		}, []string{"QMatMul weight has shape [32]"}},
		{"qmatmul f16 scales", func(b *ir.Builder) {
			b.Op("QMatMul", zeros(b, 2, 4), b.Const("w", ir.NewTensor(ir.Float16, []int64{3, 4})), zeros(b, 3))
		}, []string{"QMatMul has Scales with a f16 weight"}},
		{"qmatmul group bias length", func(b *ir.Builder) {
			b.OpN("QMatMulGroup", 1, []ir.AttrOption{ir.Int("bias", 1)}, zeros(b, 1, 32), b.Const("w", ir.NewTensor(ir.Q8_0, []int64{8, 32})), zeros(b, 7))
		}, []string{"QMatMulGroup bias 0 has shape [7], want [8]"}},
		{"qmatmul group bias count", func(b *ir.Builder) {
			b.OpN("QMatMulGroup", 1, []ir.AttrOption{ir.Int("bias", 1)}, zeros(b, 1, 32), b.Const("w", ir.NewTensor(ir.Q8_0, []int64{8, 32})), zeros(b, 8), zeros(b, 8))
		}, []string{"as many biases as weights"}},
		{"qmatmul group bias with silu_mul", func(b *ir.Builder) {
			w := b.Const("w", ir.NewTensor(ir.Q8_0, []int64{8, 32}))
			b.OpN("QMatMulGroup", 1, []ir.AttrOption{ir.Int("bias", 1), ir.Str("act", "silu_mul")}, zeros(b, 1, 32), w, w, zeros(b, 8), zeros(b, 8))
		}, []string{"unsupported"}},
		{"qmatmul scales", func(b *ir.Builder) {
			b.Op("QMatMul", zeros(b, 2, 4), b.Const("w", ir.NewTensor(ir.Int8, []int64{3, 4})), zeros(b, 5))
		}, []string{"Scales", "dims 3 and 5 differ"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { inferErr(t, c.build, c.fragments...) })
	}
}
