package elementwise

import (
	"math"

	"github.com/weftrt/weft/ir"
)

// floatMath lists the unary ops defined on float dtypes only, as math
// functions. (ONNX admits bf16 for some of them only from opset 22; the
// computation is the same, so all four float dtypes are accepted.)
var floatMath = map[string]func(float64) float64{
	"Acos":       math.Acos,
	"Acosh":      math.Acosh,
	"Asin":       math.Asin,
	"Asinh":      math.Asinh,
	"Atan":       math.Atan,
	"Atanh":      math.Atanh,
	"Ceil":       math.Ceil,
	"Cos":        math.Cos,
	"Cosh":       math.Cosh,
	"Exp":        math.Exp,
	"Floor":      math.Floor,
	"Log":        math.Log,
	"Reciprocal": func(x float64) float64 { return 1 / x },
	"Round":      math.RoundToEven, // halves to even: Round(2.5) = 2
	"Sin":        math.Sin,
	"Sinh":       math.Sinh,
	"Sqrt":       math.Sqrt,
	"Tan":        math.Tan,
	"Tanh":       math.Tanh,
	"Sigmoid":    sigmoid,
	"Softplus":   softplus,
	"Softsign":   func(x float64) float64 { return x / (1 + math.Abs(x)) },
	"Mish":       func(x float64) float64 { return x * math.Tanh(softplus(x)) },
}

// intUnary lists the unary ops that also accept integer (and bool) dtypes.
var intUnary = map[string]unary{
	"Abs": {types: numeric, f: math.Abs, i: absInt, u: ident[uint64]},
	"Neg": {types: floats | signed, f: func(x float64) float64 { return -x }, i: func(x int64) int64 { return -x }},
	"Sign": {types: numeric, f: signFloat, i: func(x int64) int64 { return int64(cmpInt(x, 0)) },
		u: func(x uint64) uint64 { return uint64(cmpInt(x, 0)) }},
	"Relu": {types: floats | signed, f: relu[float64], i: relu[int64]},
	// Erf admits integers: erf in float64, truncated back to the integer dtype.
	"Erf": {types: numeric, f: math.Erf, i: func(x int64) int64 { return int64(math.Erf(float64(x))) },
		u: func(x uint64) uint64 { return uint64(math.Erf(float64(x))) }},
	"Not":        {types: bools, b: func(x bool) bool { return !x }},
	"BitwiseNot": {types: ints, i: func(x int64) int64 { return ^x }, u: func(x uint64) uint64 { return ^x }},
}

func init() {
	for op, f := range floatMath {
		registerUnary(op, 1, fixed(unary{types: floats, f: f}))
	}
	for op, u := range intUnary {
		registerUnary(op, 1, fixed(u))
	}
	registerPredicate("IsNaN", func(*ir.Node) func(float64) bool { return math.IsNaN })
	registerPredicate("IsInf", func(n *ir.Node) func(float64) bool {
		neg, pos := n.AttrInt("detect_negative", 1) != 0, n.AttrInt("detect_positive", 1) != 0
		return func(x float64) bool { return (neg && math.IsInf(x, -1)) || (pos && math.IsInf(x, 1)) }
	})
}

func ident[T any](x T) T { return x }

// absInt is |x|, wrapping for the most negative value like two's complement.
func absInt(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// cmpInt is -1, 0 or 1 as x is below, equal to or above y.
func cmpInt[T int64 | uint64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// signFloat is -1, 0 or 1 by the sign of x; NaN stays NaN.
func signFloat(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // ±0 or NaN
}

// relu is max(x, 0); NaN stays NaN.
func relu[T int64 | float64](x T) T {
	if x < 0 {
		return 0
	}
	return x
}

// sigmoid is 1/(1+e^-x), evaluated without overflowing e^-x.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// softplus is ln(1+e^x), evaluated without overflowing e^x.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}
