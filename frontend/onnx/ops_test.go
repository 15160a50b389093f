package onnx

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// importNodeModel imports a one-node model: graph inputs x (f32[2,3,4,4])
// and r (f32[4]), initializers as given, and the node's outputs as graph
// outputs. It returns the graph and the node.
func importNodeModel(t *testing.T, opset int64, n pb, outs []string, inits ...pb) (*ir.Graph, *ir.Node) {
	t.Helper()
	parts := []graphPart{gIn(vi("x", dtFloat, 2, 3, 4, 4)), gIn(vi("r", dtFloat, 4))}
	for _, in := range inits {
		parts = append(parts, gInit(in))
	}
	parts = append(parts, gNode(n))
	for _, o := range outs {
		parts = append(parts, gOut(viNoShape(o, 0)))
	}
	g := parseOK(t, modelPB(opset, graphPB("g", parts...)))
	for _, nd := range g.Nodes {
		if nd.Name == "n" {
			return g, nd
		}
	}
	t.Fatal("node n not found")
	return nil, nil
}

// constInts returns the int64 values of a constant input.
func constInts(t *testing.T, v *ir.Value) []int64 {
	t.Helper()
	require.NotNil(t, v)
	require.True(t, v.IsConst(), "input %v is not a constant", v)
	return v.Const.Int64s()
}

func constFloats(t *testing.T, v *ir.Value) []float64 {
	t.Helper()
	require.NotNil(t, v)
	require.True(t, v.IsConst(), "input %v is not a constant", v)
	out := make([]float64, v.Const.Len())
	for i := range out {
		out[i] = v.Const.Float64(i)
	}
	return out
}

func TestAxesToInputs(t *testing.T) {
	cases := []struct {
		op    string
		opset int64
		moved bool // attribute becomes an input
	}{
		{"ReduceSum", 11, true}, {"ReduceSum", 13, false},
		{"ReduceMean", 13, true}, {"ReduceMean", 18, false},
		{"ReduceMax", 17, true}, {"ReduceL2", 11, true}, {"ReduceLogSumExp", 18, false},
		{"Squeeze", 11, true}, {"Squeeze", 13, false},
		{"Unsqueeze", 12, true}, {"Unsqueeze", 13, false},
	}
	for _, tc := range cases {
		t.Run(tc.op, func(t *testing.T) {
			if tc.moved {
				_, n := importNodeModel(t, tc.opset, nodePB(tc.op, "n", []string{"x"}, []string{"y"}, attrIs("axes", 1, -1), attrI("keepdims", 0)), []string{"y"})
				require.Equal(t, tc.op, n.Op)
				require.Len(t, n.Inputs, 2)
				require.Equal(t, []int64{1, -1}, constInts(t, n.Inputs[1]))
				require.False(t, n.Has("axes"))
				if tc.op[0] == 'R' {
					require.Equal(t, int64(0), n.AttrInt("keepdims", 1), "other attributes stay")
				}
				return
			}
			_, n := importNodeModel(t, tc.opset, nodePB(tc.op, "n", []string{"x", "axes"}, []string{"y"}), []string{"y"}, i64Tensor("axes", []int64{1}, 0))
			require.Len(t, n.Inputs, 2)
			require.Equal(t, []int64{0}, constInts(t, n.Inputs[1]))
		})
	}
	// Without axes, the old Reduce forms reduce everything: no axes input.
	_, n := importNodeModel(t, 11, nodePB("ReduceMax", "n", []string{"x"}, []string{"y"}), []string{"y"})
	require.Len(t, n.Inputs, 1)
	_, n = importNodeModel(t, 11, nodePB("Squeeze", "n", []string{"x"}, []string{"y"}), []string{"y"})
	require.Len(t, n.Inputs, 1)
	_, err := Parse(modelPB(11, graphPB("g", gIn(vi("x", dtFloat, 2)),
		gNode(nodePB("Unsqueeze", "n", []string{"x"}, []string{"y"})), gOut(viNoShape("y", 0)))), "")
	require.ErrorContains(t, err, `missing attribute "axes"`)
}

func TestAttributesToInputs(t *testing.T) {
	t.Run("Split", func(t *testing.T) {
		_, n := importNodeModel(t, 11, nodePB("Split", "n", []string{"x"}, []string{"a", "b"}, attrI("axis", 1), attrIs("split", 1, 2)), []string{"a", "b"})
		require.Equal(t, []int64{1, 2}, constInts(t, n.Inputs[1]))
		require.Equal(t, int64(1), n.AttrInt("axis", 0))
		require.Len(t, n.Outputs, 2)
		_, n = importNodeModel(t, 11, nodePB("Split", "n", []string{"x"}, []string{"a", "b", ""}), []string{"a", "b"})
		require.Len(t, n.Inputs, 1)
		require.Len(t, n.Outputs, 3, "Split keeps unnamed trailing outputs: their count sets the split")
	})
	t.Run("Slice", func(t *testing.T) {
		_, n := importNodeModel(t, 9, nodePB("Slice", "n", []string{"x"}, []string{"y"}, attrIs("starts", 0, 1), attrIs("ends", 2, -1), attrIs("axes", 0, 3)), []string{"y"})
		require.Len(t, n.Inputs, 4)
		require.Equal(t, []int64{0, 1}, constInts(t, n.Inputs[1]))
		require.Equal(t, []int64{2, -1}, constInts(t, n.Inputs[2]))
		require.Equal(t, []int64{0, 3}, constInts(t, n.Inputs[3]))
		require.Empty(t, n.Attrs)
	})
	t.Run("Pad", func(t *testing.T) {
		_, n := importNodeModel(t, 10, nodePB("Pad", "n", []string{"x"}, []string{"y"}, attrIs("pads", 0, 0, 1, 1, 0, 0, 1, 1), attrF("value", 1.5)), []string{"y"})
		require.Equal(t, []int64{0, 0, 1, 1, 0, 0, 1, 1}, constInts(t, n.Inputs[1]))
		require.Equal(t, []float64{1.5}, constFloats(t, n.Inputs[2]))
		require.Equal(t, ir.Float32, n.Inputs[2].DType, "the pad value takes the input's dtype")
		require.Len(t, n.Inputs[2].Shape, 0)
		_, n = importNodeModel(t, 10, nodePB("Pad", "n", []string{"x"}, []string{"y"}, attrIs("pads", 0, 0, 1, 1, 0, 0, 1, 1), attrS("mode", "reflect")), []string{"y"})
		require.Len(t, n.Inputs, 2)
		require.Equal(t, "reflect", n.AttrString("mode", ""))
	})
	t.Run("Clip", func(t *testing.T) {
		_, n := importNodeModel(t, 10, nodePB("Clip", "n", []string{"x"}, []string{"y"}, attrF("min", -1), attrF("max", 2)), []string{"y"})
		require.Equal(t, []float64{-1}, constFloats(t, n.Inputs[1]))
		require.Equal(t, []float64{2}, constFloats(t, n.Inputs[2]))
		require.Empty(t, n.Attrs)
		_, n = importNodeModel(t, 10, nodePB("Clip", "n", []string{"x"}, []string{"y"}, attrF("max", 2)), []string{"y"})
		require.Nil(t, n.Inputs[1])
		_, n = importNodeModel(t, 10, nodePB("Clip", "n", []string{"x"}, []string{"y"}), []string{"y"})
		require.Len(t, n.Inputs, 1)
	})
	t.Run("TopK", func(t *testing.T) {
		_, n := importNodeModel(t, 9, nodePB("TopK", "n", []string{"x"}, []string{"v", "i"}, attrI("k", 3)), []string{"v", "i"})
		require.Equal(t, []int64{3}, constInts(t, n.Inputs[1]))
		require.Equal(t, []int64{1}, n.Inputs[1].Const.Shape)
	})
	t.Run("Dropout", func(t *testing.T) {
		_, n := importNodeModel(t, 10, nodePB("Dropout", "n", []string{"x"}, []string{"y"}, attrF("ratio", 0.25)), []string{"y"})
		require.Equal(t, []float64{0.25}, constFloats(t, n.Inputs[1]))
		_, n = importNodeModel(t, 13, nodePB("Dropout", "n", []string{"x"}, []string{"y", "m"}), []string{"y", "m"})
		require.Len(t, n.Inputs, 1)
		require.Len(t, n.Outputs, 2)
	})
	t.Run("DFT", func(t *testing.T) {
		_, n := importNodeModel(t, 17, nodePB("DFT", "n", []string{"x"}, []string{"y"}, attrI("axis", 2)), []string{"y"})
		require.Len(t, n.Inputs, 3)
		require.Nil(t, n.Inputs[1])
		require.Equal(t, []int64{2}, constInts(t, n.Inputs[2]))
		require.Len(t, n.Inputs[2].Shape, 0, "axis is a scalar")
		_, n = importNodeModel(t, 17, nodePB("DFT", "n", []string{"x"}, []string{"y"}), []string{"y"})
		require.Equal(t, []int64{1}, constInts(t, n.Inputs[2]), "DFT-17 axis defaults to 1")
	})
}

func TestResizeForms(t *testing.T) {
	scales := f32Tensor("scales", []int64{4}, 1, 1, 2, 3)
	check := func(t *testing.T, n *ir.Node, mode string) {
		t.Helper()
		require.Equal(t, "Resize", n.Op)
		require.Len(t, n.Inputs, 3)
		require.Nil(t, n.Inputs[1], "roi")
		require.Equal(t, []float64{1, 1, 2, 3}, constFloats(t, n.Inputs[2]))
		require.Equal(t, mode, n.AttrString("mode", ""))
		require.Equal(t, "asymmetric", n.AttrString("coordinate_transformation_mode", ""))
		require.Equal(t, "floor", n.AttrString("nearest_mode", ""))
	}
	_, n := importNodeModel(t, 7, nodePB("Upsample", "n", []string{"x"}, []string{"y"}, attrFs("scales", 1, 1, 2, 3)), []string{"y"})
	check(t, n, "nearest")
	_, n = importNodeModel(t, 9, nodePB("Upsample", "n", []string{"x", "scales"}, []string{"y"}, attrS("mode", "linear")), []string{"y"}, scales)
	check(t, n, "linear")
	_, n = importNodeModel(t, 10, nodePB("Resize", "n", []string{"x", "scales"}, []string{"y"}), []string{"y"}, scales)
	check(t, n, "nearest")

	// Opset 11: an empty roi/scales constant means "absent".
	_, n = importNodeModel(t, 11, nodePB("Resize", "n", []string{"x", "roi", "none", "sizes"}, []string{"y"}, attrS("mode", "linear")), []string{"y"},
		f32Tensor("roi", []int64{0}), f32Tensor("none", []int64{0}), i64Tensor("sizes", []int64{4}, 2, 3, 8, 8))
	require.Len(t, n.Inputs, 4)
	require.Nil(t, n.Inputs[1])
	require.Nil(t, n.Inputs[2])
	require.Equal(t, []int64{2, 3, 8, 8}, constInts(t, n.Inputs[3]))
	require.False(t, n.Has("coordinate_transformation_mode"), "opset 11 keeps the node's own attributes")
}

func TestRewrites(t *testing.T) {
	t.Run("Softmax legacy", func(t *testing.T) {
		for _, op := range []string{"Softmax", "LogSoftmax", "Hardmax"} {
			_, n := importNodeModel(t, 11, nodePB(op, "n", []string{"x"}, []string{"y"}), []string{"y"})
			require.Equal(t, int64(1), n.AttrInt("legacy_axis", 0))
			require.Equal(t, int64(1), n.AttrInt("axis", -1), "old default axis made explicit")
			_, n = importNodeModel(t, 11, nodePB(op, "n", []string{"x"}, []string{"y"}, attrI("axis", 2)), []string{"y"})
			require.Equal(t, int64(2), n.AttrInt("axis", -1))
			_, n = importNodeModel(t, 13, nodePB(op, "n", []string{"x"}, []string{"y"}), []string{"y"})
			require.False(t, n.Has("legacy_axis"))
			require.False(t, n.Has("axis"))
		}
	})
	t.Run("Scatter", func(t *testing.T) {
		_, n := importNodeModel(t, 9, nodePB("Scatter", "n", []string{"x", "idx", "x"}, []string{"y"}, attrI("axis", 1)), []string{"y"}, i64Tensor("idx", []int64{1}, 0))
		require.Equal(t, "ScatterElements", n.Op)
		require.Equal(t, int64(1), n.AttrInt("axis", 0))
	})
	t.Run("GridSample", func(t *testing.T) {
		_, n := importNodeModel(t, 16, nodePB("GridSample", "n", []string{"x", "x"}, []string{"y"}), []string{"y"})
		require.Equal(t, "linear", n.AttrString("mode", ""))
		_, n = importNodeModel(t, 16, nodePB("GridSample", "n", []string{"x", "x"}, []string{"y"}, attrS("mode", "bicubic")), []string{"y"})
		require.Equal(t, "cubic", n.AttrString("mode", ""))
		_, n = importNodeModel(t, 20, nodePB("GridSample", "n", []string{"x", "x"}, []string{"y"}), []string{"y"})
		require.False(t, n.Has("mode"))
	})
	t.Run("RoiAlign", func(t *testing.T) {
		_, n := importNodeModel(t, 10, nodePB("RoiAlign", "n", []string{"x", "x", "x"}, []string{"y"}), []string{"y"})
		require.Equal(t, "output_half_pixel", n.AttrString("coordinate_transformation_mode", ""))
		_, n = importNodeModel(t, 16, nodePB("RoiAlign", "n", []string{"x", "x", "x"}, []string{"y"}), []string{"y"})
		require.False(t, n.Has("coordinate_transformation_mode"))
	})
	t.Run("BatchNormalization", func(t *testing.T) {
		_, n := importNodeModel(t, 7, nodePB("BatchNormalization", "n", []string{"x", "r", "r", "r", "r"}, []string{"y"}, attrI("spatial", 1)), []string{"y"})
		require.False(t, n.Has("spatial"))
		_, err := Parse(modelPB(7, graphPB("g", gIn(vi("x", dtFloat, 2, 3)),
			gNode(nodePB("BatchNormalization", "n", []string{"x", "x", "x", "x", "x"}, []string{"y"}, attrI("spatial", 0))),
			gOut(viNoShape("y", 0)))), "")
		require.ErrorIs(t, err, ir.ErrUnsupported)
	})
	t.Run("GroupNormalization", func(t *testing.T) {
		// 4 channels in 2 groups: per-group scale/bias become per-channel.
		m := modelPB(18, graphPB("g",
			gIn(vi("x", dtFloat, 1, 4, 2)),
			gInit(f32Tensor("s", []int64{2}, 1, 2)),
			gInit(f32Tensor("b", []int64{2}, 3, 4)),
			gNode(nodePB("GroupNormalization", "n", []string{"x", "s", "b"}, []string{"y"}, attrI("num_groups", 2))),
			gOut(viNoShape("y", 0))))
		g := parseOK(t, m)
		n := g.Nodes[0]
		require.Equal(t, []float64{1, 1, 2, 2}, constFloats(t, n.Inputs[1]))
		require.Equal(t, []float64{3, 3, 4, 4}, constFloats(t, n.Inputs[2]))
	})
	t.Run("Cast", func(t *testing.T) {
		_, n := importNodeModel(t, 13, nodePB("Cast", "n", []string{"x"}, []string{"y"}, attrI("to", dtFloat16)), []string{"y"})
		require.Equal(t, int64(dtFloat16), n.AttrInt("to", 0), "Cast keeps ONNX's data type number")
	})
}

func TestConstantForms(t *testing.T) {
	cases := []struct {
		attr pb
		dt   ir.DType
		dims []int64
		vals []float64
	}{
		{attrT("value", f32Tensor("", []int64{2}, 1, 2)), ir.Float32, []int64{2}, []float64{1, 2}},
		{attrF("value_float", 2.5), ir.Float32, []int64{}, []float64{2.5}},
		{attrFs("value_floats", 1, 2, 3), ir.Float32, []int64{3}, []float64{1, 2, 3}},
		{attrI("value_int", -4), ir.Int64, []int64{}, []float64{-4}},
		{attrIs("value_ints", 5, 6), ir.Int64, []int64{2}, []float64{5, 6}},
	}
	for _, tc := range cases {
		m := modelPB(13, graphPB("g",
			gNode(nodePB("Constant", "k", nil, []string{"c"}, tc.attr)),
			gNode(nodePB("Neg", "n", []string{"c"}, []string{"y"})),
			gOut(viNoShape("y", 0))))
		g := parseOK(t, m)
		require.Len(t, g.Nodes, 1, "Constant does not reach the IR")
		c := g.Nodes[0].Inputs[0]
		require.Equal(t, tc.dt, c.DType)
		require.Equal(t, tc.dims, c.Const.Shape)
		require.Equal(t, tc.vals, constFloats(t, c))
		require.Equal(t, "c", c.Name)
	}
}

// TestOpTable checks the registry against the list of operators weft
// promises to import.
func TestOpTable(t *testing.T) {
	want := []string{"Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh", "AveragePool", "BatchNormalization", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "BlackmanWindow", "Cast", "CastLike", "Ceil", "Celu", "CenterCropPad", "Clip", "Compress", "Concat", "ConstantOfShape", "Conv", "ConvInteger", "ConvTranspose", "Cos", "Cosh", "CumSum", "DFT", "DepthToSpace", "DequantizeLinear", "Det", "Div", "Dropout", "DynamicQuantizeLinear", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "EyeLike", "Flatten", "Floor", "GRU", "Gather", "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "Greater", "GreaterOrEqual", "GridSample", "GroupNormalization", "HammingWindow", "HannWindow", "HardSigmoid", "HardSwish", "Hardmax", "Identity", "If", "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LSTM", "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "Loop", "LpNormalization", "LpPool", "MatMul", "MatMulInteger", "Max", "MaxPool", "MaxRoiPool", "MaxUnpool", "Mean", "MeanVarianceNormalization", "MelWeightMatrix", "Min", "Mish", "Mod", "Mul", "Neg", "NegativeLogLikelihoodLoss", "NonMaxSuppression", "NonZero", "Not", "OneHot", "Or", "PRelu", "Pad", "Pow", "QLinearConv", "QLinearMatMul", "QuantizeLinear", "RNN", "Range", "Reciprocal", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Resize", "ReverseSequence", "RoiAlign", "Round", "STFT", "Scan", "ScatterElements", "ScatterND", "Selu", "Shape", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice", "Softmax", "SoftmaxCrossEntropyLoss", "Softplus", "Softsign", "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Tile", "TopK", "Transpose", "Trilu", "Unique", "Unsqueeze", "Where", "Xor",
		// imported by rewriting
		"Constant", "Upsample", "Scatter"}
	ops := Ops()
	for _, op := range want {
		_, ok := ops[op]
		require.True(t, ok, "op %s is not registered", op)
	}
	require.Len(t, ops, len(want), "registered ops beyond the promised list")
	for op := range unsupportedOps {
		_, ok := ops[op]
		require.False(t, ok, "%s is both supported and refused", op)
	}
}

func TestArity(t *testing.T) {
	require.ErrorContains(t, checkArity("Add", 1, 1), "1 inputs, want 2")
	require.ErrorContains(t, checkArity("Clip", 4, 1), "4 inputs, want 1 to 3")
	require.ErrorContains(t, checkArity("TopK", 2, 1), "1 outputs, want 2")
	require.ErrorContains(t, checkArity("Concat", 0, 1), "want at least 1")
	require.NoError(t, checkArity("Sum", 9, 1))
	require.NoError(t, checkArity("ReduceMean", 2, 1), "opset 18 axes input")
	for op := range opTable {
		_, ok := arity[op]
		require.True(t, ok, "no arity for %s", op)
	}
}

func TestAttrKindChecks(t *testing.T) {
	err := checkAttrKinds("Conv", ir.Attrs{"strides": {Kind: ir.AttrInt, Int: 1}})
	require.ErrorContains(t, err, `attribute "strides" is int, want ints`)
	require.NoError(t, checkAttrKinds("Shrink", ir.Attrs{"bias": {Kind: ir.AttrFloat}}))
	require.NoError(t, checkAttrKinds("Custom", ir.Attrs{"whatever": {Kind: ir.AttrTensor}}))
	require.False(t, errors.Is(err, ir.ErrUnsupported))
}
