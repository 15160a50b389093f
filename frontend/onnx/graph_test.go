package onnx

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// parseOK imports a model and verifies the graph.
func parseOK(t *testing.T, m pb) *ir.Graph {
	t.Helper()
	mod, err := Parse(m, "")
	require.NoError(t, err)
	require.NoError(t, ir.Verify(mod.Graph))
	return mod.Graph
}

func TestGraphBasics(t *testing.T) {
	raw := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}
	m := modelPB(13, graphPB("g",
		gInit(rawTensor("w", dtFloat, []int64{2}, raw)),
		gIn(vi("x", dtFloat, "batch", 2)),
		gIn(vi("w", dtFloat, 2)), // an initializer listed as input: a constant
		gInfo(vi("h", dtFloat, "batch", 2)),
		gNode(nodePB("Add", "", []string{"x", "w"}, []string{"h"})),
		gNode(nodePB("Relu", "", []string{"h"}, []string{"y"})),
		gOut(vi("y", dtFloat, "batch", nil)),
	))
	mod, err := Parse(m, "")
	require.NoError(t, err)
	g := mod.Graph
	require.NoError(t, ir.Verify(g))
	require.Equal(t, "g", g.Name)
	require.Equal(t, map[string]int64{"": 13}, g.Opsets)
	require.Equal(t, "weft-test", g.Meta["producer_name"])
	require.Equal(t, int64(8), mod.IRVersion)
	require.Equal(t, "weft-test", mod.Producer)

	require.Len(t, g.Inputs, 1)
	x := g.Inputs[0]
	require.Equal(t, ir.Float32, x.DType)
	require.Equal(t, ir.Shape{ir.Sym("batch"), {Size: 2}}, x.Shape)
	require.Len(t, g.Consts, 1)
	requireInside(t, g.Consts[0].Const.Data, m)

	require.Len(t, g.Nodes, 2)
	add := g.Nodes[0]
	require.Equal(t, "Add_0", add.Name, "unnamed nodes are named <Op>_<index>")
	require.Equal(t, []*ir.Value{x, g.Consts[0]}, add.Inputs)
	h := add.Outputs[0]
	require.Equal(t, "h", h.Name)
	require.Equal(t, ir.Float32, h.DType, "value_info types are applied")
	require.Equal(t, ir.Shape{ir.Sym("batch"), {Size: 2}}, h.Shape)

	y := g.Outputs[0]
	require.Equal(t, g.Nodes[1], y.Producer)
	require.Equal(t, ir.Shape{ir.Sym("batch"), {Size: -1}}, y.Shape, "missing dim is unknown")
}

func TestShapeForms(t *testing.T) {
	m := modelPB(13, graphPB("g",
		gIn(viNoShape("x", dtFloat)),
		gIn(vi("s", dtInt64)), // scalar: shape with no dims
		gNode(nodePB("Identity", "", []string{"x"}, []string{"y"})),
		gOut(vi("y", dtFloat, 3)),
	))
	g := parseOK(t, m)
	require.Nil(t, g.Inputs[0].Shape, "missing shape means unknown rank")
	require.NotNil(t, g.Inputs[1].Shape)
	require.Len(t, g.Inputs[1].Shape, 0)
	require.Equal(t, ir.S(3), g.Outputs[0].Shape, "outputs take their declared type when unknown")
	require.Equal(t, ir.Float32, g.Outputs[0].DType)
}

func TestOutputsAreProduced(t *testing.T) {
	// Graph outputs that are directly an input or a constant get an Identity.
	m := modelPB(13, graphPB("g",
		gInit(f32Tensor("c", []int64{1}, 3)),
		gIn(vi("x", dtFloat, 1)),
		gNode(nodePB("Constant", "k", nil, []string{"k"}, attrT("value", i64Tensor("", nil, 7)))),
		gOut(vi("x", dtFloat, 1)),
		gOut(vi("c", dtFloat, 1)),
		gOut(vi("k", dtInt64)),
	))
	g := parseOK(t, m)
	require.Len(t, g.Outputs, 3)
	for i, o := range g.Outputs {
		require.NotNil(t, o.Producer, "output %d", i)
		require.Equal(t, "Identity", o.Producer.Op)
	}
	require.Equal(t, g.Inputs[0], g.Outputs[0].Producer.Inputs[0])
	require.Equal(t, "x", g.Outputs[0].Name)
	k := g.Outputs[2].Producer.Inputs[0]
	require.True(t, k.IsConst())
	require.Equal(t, []int64{7}, k.Const.Int64s())
}

func TestEmptyNames(t *testing.T) {
	m := modelPB(13, graphPB("g",
		gIn(vi("x", dtFloat, 4)),
		gIn(vi("k", dtInt64, 1)),
		// TopK with an empty first output and an empty optional input list entry.
		gNode(nodePB("TopK", "t", []string{"x", "k"}, []string{"", "idx"})),
		// Clip with an empty min: nil input.
		gNode(nodePB("Clip", "c", []string{"x", "", "x"}, []string{"y"})),
		// Trailing empty outputs are dropped.
		gNode(nodePB("Dropout", "d", []string{"x"}, []string{"w", ""})),
		gNode(nodePB("Clip", "e", []string{"x", "", ""}, []string{"z"})),
		// A node whose outputs are all unnamed is dropped.
		gNode(nodePB("LSTM", "dead", []string{"x", "x", "x"}, []string{"", ""})),
		gOut(vi("idx", dtInt64, 1)),
		gOut(vi("y", dtFloat, 4)),
		gOut(vi("z", dtFloat, 4)),
	))
	g := parseOK(t, m)
	topk := g.Nodes[0]
	require.Len(t, topk.Outputs, 2)
	require.NotNil(t, topk.Outputs[0], "a fresh value stands in for an empty output")
	require.Equal(t, "", topk.Outputs[0].Name)
	clip := g.Nodes[1]
	require.Len(t, clip.Inputs, 3)
	require.Nil(t, clip.Inputs[1])
	require.Len(t, g.Nodes[2].Outputs, 1)
	require.Len(t, g.Nodes[3].Inputs, 1, "trailing absent inputs are trimmed")
	require.Len(t, g.Nodes, 4)
}

func TestSubgraphOuterScope(t *testing.T) {
	then := graphPB("then",
		gNode(nodePB("Add", "inner_add", []string{"a", "b"}, []string{"t"})),
		gOut(vi("t", dtFloat, 2)),
	)
	els := graphPB("else",
		gOut(vi("b", dtFloat, 2)), // directly an outer value
	)
	m := modelPB(13, graphPB("g",
		gIn(vi("cond", dtBool)),
		gIn(vi("a", dtFloat, 2)),
		gInit(f32Tensor("b", []int64{2}, 1, 2)),
		gNode(nodePB("If", "if", []string{"cond"}, []string{"r"}, attrG("then_branch", then), attrG("else_branch", els))),
		gOut(vi("r", dtFloat, 2)),
	))
	g := parseOK(t, m)
	n := g.Nodes[0]
	tg, eg := n.AttrGraph("then_branch"), n.AttrGraph("else_branch")
	require.NotNil(t, tg)
	require.Equal(t, g, tg.Parent)
	require.Equal(t, []*ir.Value{g.Inputs[1], g.Consts[0]}, tg.Nodes[0].Inputs)
	require.Equal(t, []*ir.Value{g.Inputs[1], g.Consts[0]}, tg.OuterRefs())
	require.Len(t, eg.Nodes, 1)
	require.Equal(t, "Identity", eg.Outputs[0].Producer.Op)
	require.Equal(t, eg, eg.Outputs[0].Graph)

	// An unknown name inside a subgraph is an error naming it and both nodes.
	bad := graphPB("then", gNode(nodePB("Neg", "neg", []string{"nowhere"}, []string{"t"})), gOut(vi("t", dtFloat, 2)))
	m = modelPB(13, graphPB("g",
		gIn(vi("cond", dtBool)),
		gNode(nodePB("If", "if", []string{"cond"}, []string{"r"}, attrG("then_branch", bad), attrG("else_branch", bad))),
		gOut(vi("r", dtFloat, 2)),
	))
	_, err := Parse(m, "")
	require.Error(t, err)
	require.Contains(t, err.Error(), `"nowhere"`)
	require.Contains(t, err.Error(), `node "if" (If, opset 13)`)
	require.Contains(t, err.Error(), `node "neg" (Neg, opset 13)`)
	require.NotErrorIs(t, err, ir.ErrUnsupported)
}

func TestPreOpset7(t *testing.T) {
	// Relu-6 and Softmax-1 are the versions opset 7 uses: an opset 6 model
	// holding only such ops imports as it would at opset 7.
	g := parseOK(t, modelPB(6, graphPB("g",
		gIn(vi("x", dtFloat, 2, 3)),
		gNode(nodePB("Relu", "r", []string{"x"}, []string{"h"})),
		gNode(nodePB("Softmax", "s", []string{"h"}, []string{"y"})),
		gOut(vi("y", dtFloat, 2, 3)))))
	require.Equal(t, "Relu", g.Nodes[0].Op)
	require.Equal(t, int64(1), g.Nodes[1].AttrInt("legacy_axis", 0))
	require.Equal(t, int64(6), g.Opsets[""])
}

func TestLegacyFixes(t *testing.T) {
	parse := func(n ...pb) (*ir.Graph, error) {
		parts := []graphPart{gIn(vi("a", dtFloat, 2, 3, 4)), gIn(vi("b", dtFloat, 2)), gIn(vi("c", dtFloat, 3, 4))}
		for _, x := range n {
			parts = append(parts, gNode(x))
		}
		parts = append(parts, gOut(viNoShape("y", 0)))
		m, err := Parse(modelPB(6, graphPB("g", parts...)), "")
		if err != nil {
			return nil, err
		}
		return m.Graph, ir.Verify(m.Graph)
	}
	// B aligned at axis 0 of A: unsqueezed to [2,1,1] for numpy broadcasting.
	g, err := parse(nodePB("Add", "n", []string{"a", "b"}, []string{"y"}, attrI("broadcast", 1), attrI("axis", 0)))
	require.NoError(t, err)
	require.Len(t, g.Nodes, 2)
	u, add := g.Nodes[0], g.Nodes[1]
	require.Equal(t, "Unsqueeze", u.Op)
	require.Equal(t, []int64{1, 2}, constInts(t, u.Inputs[1]))
	require.Equal(t, u.Outputs[0], add.Inputs[1])
	require.Empty(t, add.Attrs)

	// Already trailing-aligned: only the attributes go.
	g, err = parse(nodePB("Mul", "n", []string{"a", "c"}, []string{"y"}, attrI("broadcast", 1), attrI("axis", 1)))
	require.NoError(t, err)
	require.Len(t, g.Nodes, 1)
	require.Empty(t, g.Nodes[0].Attrs)

	// An operand of unknown rank cannot be aligned at import time.
	_, err = parse(nodePB("Relu", "r", []string{"a"}, []string{"h"}),
		nodePB("Relu", "r2", []string{"h"}, []string{"h2"}, pb{}.str(1, "consumed_inputs").varint(20, atInts).packedVarints(8, 0)),
		nodePB("Add", "n", []string{"b", "h2"}, []string{"y"}, attrI("broadcast", 1), attrI("axis", 0)))
	require.ErrorIs(t, err, ir.ErrUnsupported)

	// PRelu-6: a per-channel slope gets trailing unit dims.
	g, err = parse(nodePB("PRelu", "n", []string{"a", "b"}, []string{"y"}))
	require.NoError(t, err)
	require.Equal(t, []int64{1}, constInts(t, g.Nodes[0].Inputs[1]))

	// BatchNormalization-6 in test mode drops is_test; training mode is refused.
	g, err = parse(nodePB("BatchNormalization", "n", []string{"a", "b", "b", "b", "b"}, []string{"y"}, attrI("is_test", 1)))
	require.NoError(t, err)
	require.False(t, g.Nodes[0].Has("is_test"))
	_, err = parse(nodePB("BatchNormalization", "n", []string{"a", "b", "b", "b", "b"}, []string{"y", "m", "v"}))
	require.ErrorIs(t, err, ir.ErrUnsupported)

	g, err = parse(nodePB("Gemm", "n", []string{"c", "c", "b"}, []string{"y"}, attrI("broadcast", 1), attrI("transB", 1)))
	require.NoError(t, err)
	require.False(t, g.Nodes[0].Has("broadcast"))
	require.True(t, g.Nodes[0].Has("transB"))
}

func TestLoopBody(t *testing.T) {
	body := graphPB("body",
		gIn(vi("i", dtInt64)),
		gIn(vi("cond_in", dtBool)),
		gIn(vi("acc_in", dtFloat, 1)),
		gNode(nodePB("Add", "", []string{"acc_in", "step"}, []string{"acc_out"})),
		gNode(nodePB("Identity", "", []string{"cond_in"}, []string{"cond_out"})),
		gOut(vi("cond_out", dtBool)),
		gOut(vi("acc_out", dtFloat, 1)),
	)
	m := modelPB(16, graphPB("g",
		gIn(vi("n", dtInt64)),
		gIn(vi("acc", dtFloat, 1)),
		gInit(f32Tensor("step", []int64{1}, 0.5)),
		gNode(nodePB("Loop", "loop", []string{"n", "", "acc"}, []string{"out"}, attrG("body", body))),
		gOut(vi("out", dtFloat, 1)),
	))
	g := parseOK(t, m)
	loop := g.Nodes[0]
	require.Equal(t, []*ir.Value{g.Inputs[0], nil, g.Inputs[1]}, loop.Inputs)
	b := loop.AttrGraph("body")
	require.Len(t, b.Inputs, 3)
	require.Equal(t, g.Consts[0], b.Nodes[0].Inputs[1])
}

func TestNodeErrors(t *testing.T) {
	one := func(opset int64, n pb) pb {
		return modelPB(opset, graphPB("g",
			gIn(vi("x", dtFloat, 2)),
			gNode(n),
			gOut(vi("y", dtFloat, 2)),
		))
	}
	cases := []struct {
		name        string
		m           pb
		want        []string
		unsupported bool
	}{
		{"unknown op", one(13, nodePB("FrobnicateV2", "frob_1", []string{"x"}, []string{"y"})),
			[]string{`node "frob_1" (FrobnicateV2, opset 13)`, "unsupported"}, true},
		{"unnamed unknown op", one(13, nodePB("Frob", "", []string{"x"}, []string{"y"})),
			[]string{`node "Frob_0" (Frob, opset 13)`, "unsupported"}, true},
		{"random op", one(13, nodePB("RandomNormalLike", "r", []string{"x"}, []string{"y"})),
			[]string{"nondeterministic", "unsupported"}, true},
		{"domain", one(13, nodePB("LabelEncoder", "l", []string{"x"}, []string{"y"}).str(7, "ai.onnx.ml")),
			[]string{`"ai.onnx.ml"`, "unsupported"}, true},
		{"too new for opset", one(13, nodePB("Gelu", "g", []string{"x"}, []string{"y"})),
			[]string{"opset >= 20", "unsupported"}, true},
		{"removed op", one(11, nodePB("Upsample", "u", []string{"x", "x"}, []string{"y"})),
			[]string{"removed in opset 10", "unsupported"}, true},
		{"legacy op", one(5, nodePB("Cast", "c", []string{"x"}, []string{"y"}, attrS("to", "FLOAT"))),
			[]string{`node "c" (Cast, opset 5)`, "Cast changed in opset 6", "unsupported"}, true},
		{"opset 0", one(0, nodePB("Relu", "r", []string{"x"}, []string{"y"})),
			[]string{"opset 0", "unsupported"}, true},
		{"new opset", one(22, nodePB("Relu", "r", []string{"x"}, []string{"y"})),
			[]string{"opset 22", "unsupported"}, true},
		{"undefined input", one(13, nodePB("Relu", "r", []string{"q"}, []string{"y"})),
			[]string{`node "r" (Relu, opset 13)`, `input "q" is not defined`}, false},
		{"bad attr kind", one(13, nodePB("Softmax", "s", []string{"x"}, []string{"y"}, attrF("axis", 1))),
			[]string{`node "s" (Softmax, opset 13)`, `attribute "axis" is float, want int`}, false},
		{"cast to string", one(13, nodePB("Cast", "c", []string{"x"}, []string{"y"}, attrI("to", dtString))),
			[]string{"string", "unsupported"}, true},
		{"cast to junk", one(13, nodePB("Cast", "c", []string{"x"}, []string{"y"}, attrI("to", 1234))),
			[]string{"invalid data type 1234"}, false},
		{"ref attr", one(13, nodePB("Relu", "r", []string{"x"}, []string{"y"}, pb{}.str(1, "alpha").str(21, "a").varint(20, atFloat))),
			[]string{"unsupported"}, true},
		{"string constant", one(13, nodePB("Constant", "k", nil, []string{"y"}, pb{}.str(1, "value_string").varint(20, atString).str(4, "hi"))),
			[]string{"string constants", "unsupported"}, true},
		{"output defined twice", one(13, nodePB("Split", "s", []string{"x"}, []string{"y", "y"})),
			[]string{`"y" is defined twice`}, false},
		{"missing output", modelPB(13, graphPB("g", gIn(vi("x", dtFloat, 2)), gOut(vi("nope", dtFloat, 2)))),
			[]string{`output "nope"`}, false},
		{"sequence input", modelPB(13, graphPB("g",
			gIn(pb{}.str(1, "s").msg(2, pb{}.msg(4, pb{}))),
			gNode(nodePB("Identity", "", []string{"s"}, []string{"y"})), gOut(vi("y", dtFloat)))),
			[]string{"sequence", "unsupported"}, true},
		{"string input", modelPB(13, graphPB("g", gIn(vi("s", dtString, 1)),
			gNode(nodePB("Identity", "", []string{"s"}, []string{"y"})), gOut(vi("y", dtString)))),
			[]string{"string", "unsupported"}, true},
		{"no graph", pb{}.msg(8, pb{}.varint(2, 13)), []string{"no graph"}, false},
		{"no opset", pb{}.msg(7, graphPB("g")), []string{"no default-domain"}, false},
		{"training domain only", pb{}.msg(8, pb{}.str(1, "ai.onnx.preview.training").varint(2, 1)).msg(7, graphPB("g")),
			[]string{"unsupported"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.m, "")
			require.Error(t, err)
			require.Contains(t, err.Error(), "onnx: <memory>: ")
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.Equal(t, tc.unsupported, errors.Is(err, ir.ErrUnsupported), "%v", err)
		})
	}
}

func TestGarbage(t *testing.T) {
	valid := modelPB(13, graphPB("g",
		gIn(vi("x", dtFloat, 2)),
		gInit(f32Tensor("w", []int64{2}, 1, 2)),
		gNode(nodePB("Add", "a", []string{"x", "w"}, []string{"y"}, attrI("unused", 1))),
		gOut(vi("y", dtFloat, 2)),
	))
	parseOK(t, valid)
	// Every truncation fails cleanly (or, where it cuts at a field boundary
	// that leaves a consistent model, imports); none panics.
	for n := 0; n < len(valid); n++ {
		mod, err := Parse(valid[:n], "")
		if err == nil {
			require.NoError(t, ir.Verify(mod.Graph))
		}
	}
	for _, junk := range [][]byte{{0xff}, {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, {0x07}, []byte("hello world, not a model")} {
		_, err := Parse(junk, "")
		require.Error(t, err)
	}
	// Deeply nested subgraphs are refused, not a stack overflow.
	g := graphPB("g", gOut(vi("c", dtBool)))
	for i := 0; i < 100; i++ {
		g = graphPB("g", gNode(nodePB("If", "", []string{"c"}, []string{"c2"}, attrG("then_branch", g))))
	}
	_, err := Parse(modelPB(13, g), "")
	require.ErrorContains(t, err, "nested deeper")
}
