package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// node adds op to g with typed inputs and one f32 output of shape out.
func node(g *ir.Graph, op string, out []int64, attrs ir.Attrs, in ...*ir.Value) *ir.Node {
	n := g.AddNode(op, "", in, 1, attrs)
	n.Outputs[0].DType, n.Outputs[0].Shape = ir.Float32, ir.S(out...)
	return n
}

func f32(g *ir.Graph, name string, d ...int64) *ir.Value {
	return g.AddInput(name, ir.Float32, ir.S(d...))
}

func TestNodeCost(t *testing.T) {
	g := ir.NewGraph("g")
	act := ir.Attrs{"activation": {Kind: ir.AttrString, Str: "Relu"}}
	// Every expectation below is worked out by hand from the formulas in
	// NodeCost's documentation; bytes are 4 per f32 element.
	tests := []struct {
		name         string
		n            *ir.Node
		flops, bytes int64
	}{
		// 2·M·N·K = 2·2·4·3; (6 + 12 + 8)·4 bytes.
		{"matmul", node(g, "MatMul", []int64{2, 4}, nil, f32(g, "a", 2, 3), f32(g, "b", 3, 4)), 48, 104},
		// batched: 2·(5·2·4)·3 = 240; (30 + 12 + 40)·4.
		{"batched matmul", node(g, "MatMul", []int64{5, 2, 4}, nil, f32(g, "a", 5, 2, 3), f32(g, "b", 3, 4)), 240, 328},
		// 48 + bias 8 + relu 8; (6 + 12 + 4 + 8)·4.
		{"fused matmul", node(g, "FusedMatMul", []int64{2, 4}, act, f32(g, "a", 2, 3), f32(g, "b", 3, 4), f32(g, "c", 4)), 64, 120},
		// Gemm transA: A is [K=3, M=2]; 2·2·4·3 + C 8 = 56; (6+12+4+8)·4.
		{"gemm", node(g, "Gemm", []int64{2, 4}, ir.Attrs{"transA": {Kind: ir.AttrInt, Int: 1}},
			f32(g, "a", 3, 2), f32(g, "b", 3, 4), f32(g, "c", 4)), 56, 120},
		// Q8_0 weight [4, 64]: 2·(2·4)·64 = 1024 FLOPs; X 2·64·4 = 512 B,
		// W 4 rows · 2 blocks · 34 B = 272 B, Y 32 B.
		{"qmatmul", node(g, "QMatMul", []int64{2, 4}, nil, f32(g, "x", 2, 64),
			g.AddConst("w", ir.NewTensor(ir.Q8_0, []int64{4, 64}))), 1024, 816},
		// out [1,4,6,6] = 144 elems, 3·3·3 = 27 per output: 2·144·27 + bias 144 = 7920;
		// (192 + 108 + 4 + 144)·4 = 1792.
		{"conv", node(g, "Conv", []int64{1, 4, 6, 6}, nil, f32(g, "x", 1, 3, 8, 8), f32(g, "w", 4, 3, 3, 3), f32(g, "b", 4)), 7920, 1792},
		// 7776 + bias 144 + residual 144 + activation 144.
		{"fused conv", node(g, "FusedConv", []int64{1, 4, 6, 6}, act, f32(g, "x", 1, 3, 8, 8), f32(g, "w", 4, 3, 3, 3),
			f32(g, "b", 4), f32(g, "z", 1, 4, 6, 6)), 8208, 2368},
		// depthwise conv (group 4): W [4, 1, 3, 3]: 2·144·9.
		{"grouped conv", node(g, "Conv", []int64{1, 4, 6, 6}, nil, f32(g, "x", 1, 4, 8, 8), f32(g, "w", 4, 1, 3, 3)), 2592, 4 * (256 + 36 + 144)},
		// X [1,2,3,3] = 18 elems, W [2,5,2,2]: 2·18·5·4 = 720; out [1,5,4,4] = 80.
		{"conv transpose", node(g, "ConvTranspose", []int64{1, 5, 4, 4}, nil, f32(g, "x", 1, 2, 3, 3), f32(g, "w", 2, 5, 2, 2)), 720, 4 * (18 + 40 + 80)},
		// out [1,3,4,4] = 48 elems, kernel 2·2.
		{"maxpool", node(g, "MaxPool", []int64{1, 3, 4, 4}, ir.Attrs{"kernel_shape": {Kind: ir.AttrInts, Ints: []int64{2, 2}}},
			f32(g, "x", 1, 3, 8, 8)), 192, 4 * (192 + 48)},
		{"global average pool", node(g, "GlobalAveragePool", []int64{1, 3, 1, 1}, nil, f32(g, "x", 1, 3, 8, 8)), 192, 4 * (192 + 3)},
		// 8 per element over 2·10.
		{"layernorm", node(g, "LayerNormalization", []int64{2, 10}, nil, f32(g, "x", 2, 10), f32(g, "s", 10), f32(g, "b", 10)), 160, 4 * 60},
		{"rmsnorm", node(g, "RMSNormalization", []int64{2, 10}, nil, f32(g, "x", 2, 10), f32(g, "s", 10)), 80, 4 * 50},
		{"softmax", node(g, "Softmax", []int64{2, 10}, nil, f32(g, "x", 2, 10)), 100, 4 * 40},
		{"reduce", node(g, "ReduceSum", []int64{2, 1}, nil, f32(g, "x", 2, 10), nil), 20, 4 * 22},
		// B=1, H=2, Sq=3, Skv=5, D=4, Dv=6: 30 scores · (2·4 + 2·6 + 1 + 5) = 780, + mask 30.
		{"attention", node(g, "Attention", []int64{1, 2, 3, 6}, nil, f32(g, "q", 1, 2, 3, 4), f32(g, "k", 1, 1, 5, 4),
			f32(g, "v", 1, 1, 5, 6), f32(g, "m", 3, 5)), 810, 4 * (24 + 20 + 30 + 15 + 36)},
		{"add", node(g, "Add", []int64{2, 3}, nil, f32(g, "a", 2, 3), f32(g, "b", 3)), 6, 4 * 15},
		{"sum of 3", node(g, "Sum", []int64{4}, nil, f32(g, "a", 4), f32(g, "b", 4), f32(g, "c", 4)), 8, 4 * 16},
		{"transpose", node(g, "Transpose", []int64{3, 2}, nil, f32(g, "a", 2, 3)), 0, 4 * 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NodeCost(tc.n)
			require.Equal(t, Cost{FLOPs: tc.flops, Bytes: tc.bytes}, c)
		})
	}
}

func TestCostUnknownShapes(t *testing.T) {
	g := ir.NewGraph("g")
	x := g.AddInput("x", ir.Float32, ir.Shape{ir.Sym("batch"), {Size: 3}})
	w := g.AddConst("w", ir.NewTensor(ir.Float32, []int64{3, 4}))
	n := g.AddNode("MatMul", "", []*ir.Value{x, w}, 1, nil)
	n.Outputs[0].DType, n.Outputs[0].Shape = ir.Float32, ir.Shape{ir.Sym("batch"), {Size: 4}}
	// The weight's 48 bytes are known; the rest is not.
	require.Equal(t, Cost{Bytes: 48, Unknown: 1}, NodeCost(n))
}

func TestGraphCost(t *testing.T) {
	g := ir.NewGraph("g")
	x := f32(g, "x", 4)
	cond := g.AddInput("c", ir.Bool, ir.Scalar())
	relu := node(g, "Relu", []int64{4}, nil, x) // 4 FLOPs, 32 bytes
	then := g.NewSubgraph("then")
	neg := node(then, "Neg", []int64{4}, nil, relu.Outputs[0]) // 4, 32
	then.Outputs = neg.Outputs
	els := g.NewSubgraph("else")
	id := node(els, "Identity", []int64{4}, nil, relu.Outputs[0]) // 0, 32
	els.Outputs = id.Outputs
	// If: 0 FLOPs; reads the 1-byte condition, writes 16 bytes.
	node(g, "If", []int64{4}, ir.Attrs{"then_branch": {Kind: ir.AttrGraph, Graph: then}, "else_branch": {Kind: ir.AttrGraph, Graph: els}}, cond)
	// Fused: the body's elementwise ops counted at the output size (its
	// values are untyped here): Mul + Add = 2 per element over 4.
	body := g.NewSubgraph("body")
	bx := body.AddInput("bx", ir.Float32, nil)
	m := body.AddNode("Mul", "", []*ir.Value{bx, bx}, 1, nil)
	a := body.AddNode("Add", "", []*ir.Value{m.Outputs[0], bx}, 1, nil)
	body.Outputs = a.Outputs
	node(g, "Fused", []int64{4}, ir.Attrs{"body": {Kind: ir.AttrGraph, Graph: body}}, x) // 8, 32
	require.Equal(t, Cost{FLOPs: 4 + 4 + 8, Bytes: 32 + 32 + 32 + 17 + 32}, GraphCost(g))
}
