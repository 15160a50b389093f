package passes

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// attention builds the head-splitting part of a transformer layer as ONNX
// exporters write it: the target shapes are computed from Shape at run time.
func attention(t *testing.T) *ir.Graph {
	b := ir.NewBuilder("attention")
	x := b.Input("x", ir.Float32, sh("batch", "seq", 64))
	w := b.Const("wqkv", ir.NewTensor(ir.Float32, []int64{64, 192}))
	qkv := b.Op("MatMul", x, w)
	parts := b.OpN("Split", 3, at(ir.Int("axis", 2), ir.Int("num_outputs", 3)), qkv)
	s := b.Op("Shape", x)
	dims := b.OpA("Concat", at(ir.Int("axis", 0)),
		b.Op("Slice", s, b.Const("zero", ir.FromInt64([]int64{1}, []int64{0})), b.Const("two", ir.FromInt64([]int64{1}, []int64{2})), nil, nil),
		b.Const("heads", ir.FromInt64([]int64{2}, []int64{4, -1})))
	heads := func(v *ir.Value, perm ...int64) *ir.Value {
		return b.OpA("Transpose", at(ir.Ints("perm", perm...)), b.Op("Reshape", v, dims))
	}
	q, k, v := heads(parts[0], 0, 2, 1, 3), heads(parts[1], 0, 2, 3, 1), heads(parts[2], 0, 2, 1, 3)
	scale := b.Op("Sqrt", b.OpA("Cast", at(ir.Int("to", 1)), b.Op("Gather", b.Op("Shape", q), b.Const("last", ir.FromInt64(nil, []int64{3})))))
	att := b.OpA("Softmax", at(ir.Int("axis", -1)), b.Op("Div", b.Op("MatMul", q, k), scale))
	o := b.OpA("Transpose", at(ir.Ints("perm", 0, 2, 1, 3)), b.Op("MatMul", att, v))
	y := b.Op("Reshape", o, b.OpA("Concat", at(ir.Int("axis", 0)),
		b.Op("Slice", b.Op("Shape", o), b.Const("z2", ir.FromInt64([]int64{1}, []int64{0})), b.Const("t2", ir.FromInt64([]int64{1}, []int64{2})), nil, nil),
		b.Const("flat", ir.FromInt64([]int64{1}, []int64{-1}))))
	b.Output("y", b.Op("Identity", y))
	g, err := b.Build()
	require.NoError(t, err)
	return g
}

func TestGoldenAttention(t *testing.T) {
	g := attention(t)
	_, err := Run(g, Options{Level: 1, Verify: true, Eval: refEval})
	require.NoError(t, err)
	require.NoError(t, ir.VerifyTyped(g))
	require.Equal(t, "f32[batch,seq,64]", typeOf(g.Outputs[0]))
	golden(t, "attention_O1", ir.Text(g))

	// The optimized graph computes what the original does.
	in := randomInputs(g, 1)
	requireClose(t, runRef(t, attention(t), in), runRef(t, g, in), 1e-5)
}
