package passes

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// Elementwise and same-shape ops.

func init() {
	// Output = input 0's dtype and shape.
	register(same,
		"Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh",
		"Erf", "Exp", "Floor", "Log", "Neg", "Reciprocal", "Round", "Sigmoid", "Sign",
		"Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "Relu", "Elu",
		"Selu", "LeakyRelu", "ThresholdedRelu", "HardSigmoid", "HardSwish", "Mish",
		"Gelu", "Celu", "Not", "BitwiseNot", "Shrink", "Identity", "Clip",
		"Softmax", "LogSoftmax", "Hardmax", "CumSum", "Trilu", "LRN",
		"LpNormalization", "MeanVarianceNormalization", "InstanceNormalization",
		"GroupNormalization", "ReverseSequence", "PRelu",
		"ScatterElements", "ScatterND", "Scatter")
	register(boolSame, "IsNaN", "IsInf")
	register(broadcastOp,
		"Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "BitwiseAnd",
		"BitwiseOr", "BitwiseXor", "And", "Or", "Xor", "Sum", "Mean", "Max", "Min")
	register(compareOp, "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual")
	register(whereOp, "Where")
	register(castOp, "Cast")
	register(castLikeOp, "CastLike")
	register(dropoutOp, "Dropout")
	register(likeOp, "EyeLike", "Bernoulli", "RandomNormalLike", "RandomUniformLike")
	register(randomOp, "RandomNormal", "RandomUniform")
	register(layerNormOp, "LayerNormalization")
	register(batchNormOp, "BatchNormalization")
	register(constantOp, "Constant")
}

func boolSame(_ *state, n *ir.Node) ([]typ, error) {
	return []typ{{ir.Bool, in(n, 0).sh}}, nil
}

// broadcastShapesOf broadcasts the shapes of all (present) inputs.
func broadcastShapesOf(n *ir.Node, from int) (ir.Shape, error) {
	var shapes []ir.Shape
	for i := from; i < len(n.Inputs); i++ {
		if v := n.Inputs[i]; v != nil {
			shapes = append(shapes, v.Shape)
		}
	}
	if len(shapes) == 0 {
		return nil, nil
	}
	return broadcastShapes(shapes...)
}

// broadcastOp: dtype of the first input whose dtype is known (they agree
// except for Pow and BitShift, whose output takes input 0's), shape broadcast.
func broadcastOp(_ *state, n *ir.Node) ([]typ, error) {
	sh, err := broadcastShapesOf(n, 0)
	if err != nil {
		return nil, err
	}
	dt := in(n, 0).dt
	if !dt.Valid() && n.Op != "Pow" && n.Op != "BitShift" {
		for _, v := range n.Inputs {
			if v != nil && v.DType.Valid() {
				dt = v.DType
				break
			}
		}
	}
	return []typ{{dt, sh}}, nil
}

func compareOp(_ *state, n *ir.Node) ([]typ, error) {
	sh, err := broadcastShapesOf(n, 0)
	return []typ{{ir.Bool, sh}}, err
}

func whereOp(_ *state, n *ir.Node) ([]typ, error) {
	sh, err := broadcastShapesOf(n, 0)
	dt := in(n, 1).dt
	if !dt.Valid() {
		dt = in(n, 2).dt
	}
	return []typ{{dt, sh}}, err
}

func castOp(_ *state, n *ir.Node) ([]typ, error) {
	return []typ{{attrDType(n, "to", ir.Invalid), in(n, 0).sh}}, nil
}

func castLikeOp(_ *state, n *ir.Node) ([]typ, error) {
	return []typ{{in(n, 1).dt, in(n, 0).sh}}, nil
}

func dropoutOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	return []typ{x, {ir.Bool, x.sh}}, nil
}

// likeOp: the input's shape; the dtype attribute, or the input's dtype.
func likeOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if n.Op == "EyeLike" && x.rank() >= 0 && x.rank() != 2 {
		return nil, fmt.Errorf("EyeLike input has rank %d, want 2", x.rank())
	}
	return []typ{{attrDType(n, "dtype", x.dt), x.sh}}, nil
}

func randomOp(_ *state, n *ir.Node) ([]typ, error) {
	if !n.Has("shape") {
		return nil, nil
	}
	if err := nonNeg(n.Op+" shape", n.AttrInts("shape", nil)...); err != nil {
		return nil, err
	}
	return []typ{{attrDType(n, "dtype", ir.Float32), ir.S(n.AttrInts("shape", nil)...)}}, nil
}

// layerNormOp: Y like X; Mean and InvStdDev in the stash type, with the
// normalized axes kept as 1.
func layerNormOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	out := []typ{x, {}, {}}
	stash := attrDType(n, "stash_type", ir.Float32)
	var sh ir.Shape
	if x.sh != nil {
		ax, err := normAxis(n.AttrInt("axis", -1), len(x.sh))
		if err != nil {
			return nil, err
		}
		sh = x.sh.Clone()
		for i := ax; i < len(sh); i++ {
			sh[i] = dim(1)
		}
	}
	out[1], out[2] = typ{stash, sh}, typ{stash, sh}
	return out, nil
}

// batchNormOp: Y like X; in training mode also running mean and variance,
// shaped like the input statistics.
func batchNormOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.rank() >= 0 && x.rank() < 2 {
		return nil, fmt.Errorf("BatchNormalization input has rank %d, want >= 2", x.rank())
	}
	return []typ{x, in(n, 3), in(n, 4)}, nil
}

// constantOp types a Constant node that the importer left in place.
func constantOp(_ *state, n *ir.Node) ([]typ, error) {
	if t := n.AttrTensor("value"); t != nil {
		return []typ{{t.DType, ir.ShapeOf(t.Shape)}}, nil
	}
	switch {
	case n.Has("value_float"):
		return []typ{{ir.Float32, ir.Scalar()}}, nil
	case n.Has("value_int"):
		return []typ{{ir.Int64, ir.Scalar()}}, nil
	case n.Has("value_floats"):
		return []typ{{ir.Float32, ir.S(int64(len(n.AttrFloats("value_floats", nil))))}}, nil
	case n.Has("value_ints"):
		return []typ{{ir.Int64, ir.S(int64(len(n.AttrInts("value_ints", nil))))}}, nil
	}
	return nil, nil
}
