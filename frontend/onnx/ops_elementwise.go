package onnx

import (
	"math"

	"github.com/weftrt/weft/ir"
)

// Elementwise math, comparison, logic, bitwise and activation operators.
// Nearly all import 1:1; Clip gets its opset < 11 min/max attributes turned
// into inputs, and Cast's target type is checked here.

func init() {
	registerSame(1, "Abs", "Add", "And", "Ceil", "Div", "Elu", "Equal", "Exp", "Floor",
		"Greater", "HardSigmoid", "LeakyRelu", "Less", "Log", "Max", "Mean", "Min", "Mul",
		"Neg", "Not", "Or", "PRelu", "Pow", "Reciprocal", "Relu", "Selu", "Sigmoid",
		"Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tanh", "Xor")
	registerSame(7, "Acos", "Asin", "Atan", "Cos", "Sin", "Tan")
	registerSame(9, "Acosh", "Asinh", "Atanh", "Cosh", "Sinh", "Erf", "Sign", "Shrink",
		"IsNaN", "Where")
	registerSame(10, "IsInf", "Mod", "ThresholdedRelu")
	registerSame(11, "BitShift", "Round")
	registerSame(12, "Celu", "GreaterOrEqual", "LessOrEqual")
	registerSame(14, "HardSwish")
	registerSame(15, "CastLike")
	registerSame(18, "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "Mish")
	registerSame(20, "Gelu")
	register("Clip", 1, importClip)
	register("Cast", 1, importCast)
}

// importClip: before opset 11, min and max were float attributes
// (defaulting to -inf/+inf); now they are optional inputs of the input's type.
func importClip(c *nodeCtx) error {
	if err := c.need(1); err != nil {
		return err
	}
	if c.opset >= 11 {
		return same(c)
	}
	x := c.in(0)
	inputs := []*ir.Value{x, nil, nil}
	for i, name := range []string{"min", "max"} {
		a, err := c.takeAttr(name, ir.AttrFloat)
		if err != nil {
			return err
		}
		if a != nil && !math.IsInf(float64(a.Float), 0) {
			inputs[1+i] = c.constScalarLike(name, float64(a.Float), x)
		}
	}
	c.emit("Clip", inputs, c.attrs)
	return nil
}

// importCast checks that the target type is one weft represents.
func importCast(c *nodeCtx) error {
	if err := checkDTypeAttr(c, "to", true); err != nil {
		return err
	}
	return same(c)
}

// checkDTypeAttr checks an attribute holding an ONNX data type number.
func checkDTypeAttr(c *nodeCtx, name string, required bool) error {
	a := c.attr(name)
	if a == nil {
		if required {
			return errorf("missing attribute %q", name)
		}
		return nil
	}
	if a.Kind != ir.AttrInt {
		return errorf("attribute %q is %s, want int", name, kindName(a.Kind))
	}
	if _, err := DType(a.Int); err != nil {
		return wrapf(err, "attribute %s", name)
	}
	return nil
}
