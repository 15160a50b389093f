package elementwise

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// number is what the generic scalar functions below work on: the types in
// which floats, signed and unsigned integers are computed.
type number interface{ int64 | uint64 | float64 }

func add[T number](a, b T) T { return a + b }
func sub[T number](a, b T) T { return a - b }
func mul[T number](a, b T) T { return a * b }

// div is IEEE division for floats and truncation toward zero for integers
// (as C and the ONNX reference do); fold rejects integer division by zero.
func div[T number](a, b T) T { return a / b }

// maxOf and minOf propagate NaN (numpy's maximum/minimum, which the ONNX
// reference uses); Go's built-in max and min do exactly that.
func maxOf[T number](a, b T) T { return max(a, b) }
func minOf[T number](a, b T) T { return min(a, b) }

func and[T int64 | uint64](a, b T) T { return a & b }
func or[T int64 | uint64](a, b T) T  { return a | b }
func xor[T int64 | uint64](a, b T) T { return a ^ b }

// binaries lists the ops without attributes that fold a binary over
// exactly two inputs (nIn 2) or over one or more (nIn -1).
var binaries = map[string]struct {
	nIn int
	op  binary
}{
	"Add": {2, binary{types: numeric, f: add[float64], i: add[int64], u: add[uint64]}},
	"Sub": {2, binary{types: numeric, f: sub[float64], i: sub[int64], u: sub[uint64]}},
	"Mul": {2, binary{types: numeric, f: mul[float64], i: mul[int64], u: mul[uint64]}},
	"Div": {2, binary{types: numeric, f: div[float64], i: div[int64], u: div[uint64], divides: true}},

	"BitwiseAnd": {2, binary{types: ints, i: and[int64], u: and[uint64]}},
	"BitwiseOr":  {2, binary{types: ints, i: or[int64], u: or[uint64]}},
	"BitwiseXor": {2, binary{types: ints, i: xor[int64], u: xor[uint64]}},

	"And": {2, binary{types: bools, b: func(a, b bool) bool { return a && b }}},
	"Or":  {2, binary{types: bools, b: func(a, b bool) bool { return a || b }}},
	"Xor": {2, binary{types: bools, b: func(a, b bool) bool { return a != b }}},

	"Max":  {-1, binary{types: numeric, f: maxOf[float64], i: maxOf[int64], u: maxOf[uint64]}},
	"Min":  {-1, binary{types: numeric, f: minOf[float64], i: minOf[int64], u: minOf[uint64]}},
	"Sum":  {-1, binary{types: floats, f: add[float64]}},
	"Mean": {-1, binary{types: floats, f: add[float64], mean: true}},

	// PRelu: x where x >= 0, slope·x where x < 0; the slope broadcasts to x.
	"PRelu": {2, binary{types: floats | setOf(ir.Int32, ir.Int64, ir.Uint32, ir.Uint64),
		f: prelu[float64], i: prelu[int64], u: prelu[uint64], unidirectional: true}},
}

func init() {
	for name, e := range binaries {
		maxIn := e.nIn
		minIn := max(e.nIn, 1)
		registerFold(name, minIn, maxIn, func(*ir.Node) (binary, error) { return e.op, nil })
	}
	registerFold("Mod", 2, 2, makeMod)
	registerFold("BitShift", 2, 2, makeBitShift)
	ref.Register("Pow", powKernel)
}

func prelu[T number](x, slope T) T {
	if x < 0 {
		return slope * x
	}
	return x
}

// makeMod: fmod=1 is C's fmod (the sign of the dividend), the only form
// ONNX allows for floats; fmod=0 is Python's % on integers (the sign of
// the divisor).
func makeMod(n *ir.Node) (binary, error) {
	switch f := n.AttrInt("fmod", 0); f {
	case 1:
		return binary{types: numeric, f: math.Mod, i: truncMod[int64], u: truncMod[uint64], divides: true}, nil
	case 0:
		return binary{types: ints, i: floorMod, u: truncMod[uint64], divides: true,
			hint: "float Mod needs fmod=1"}, nil
	default:
		return binary{}, fmt.Errorf("Mod fmod=%d, want 0 or 1", f)
	}
}

// truncMod is the remainder of division truncated toward zero (C's %).
func truncMod[T int64 | uint64](a, b T) T { return a % b }

// floorMod is the remainder of floor division: it has the divisor's sign.
func floorMod(a, b int64) int64 {
	r := a % b
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

// makeBitShift shifts unsigned integers; shifting by the width or more
// gives 0 (the result is computed in uint64, then wrapped to the width).
func makeBitShift(n *ir.Node) (binary, error) {
	op := binary{types: unsigned}
	switch d := n.AttrString("direction", ""); d {
	case "LEFT":
		op.u = func(a, b uint64) uint64 { return a << b }
	case "RIGHT":
		op.u = func(a, b uint64) uint64 { return a >> b }
	default:
		return binary{}, fmt.Errorf("BitShift direction %q, want LEFT or RIGHT", d)
	}
	return op, nil
}

// Pow's type constraints: the base (and result) and the exponent.
var (
	powBase     = floats | setOf(ir.Int32, ir.Int64)
	powExponent = numeric
)

// powKernel computes base^exponent with broadcasting. The result has the
// base's dtype. A float base uses math.Pow; an integer base with an integer
// exponent multiplies exactly (wrapping); an integer base with a float
// exponent uses math.Pow truncated toward zero (as a Cast would).
func powKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := needOutputs(n, 1); err != nil {
		return nil, err
	}
	if len(in) != 2 {
		return nil, fmt.Errorf("got %d inputs, want 2", len(in))
	}
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, y := in[0], in[1]
	if err := checkDType("the base (input 0)", x.DType, powBase); err != nil {
		return nil, err
	}
	if err := checkDType("the exponent (input 1)", y.DType, powExponent); err != nil {
		return nil, err
	}
	shape, err := broadcastShape(in, false)
	if err != nil {
		return nil, err
	}
	out := ir.NewTensor(x.DType, shape)
	eachBroadcast(shape, in, func(o int, offs []int64) {
		a, b := int(offs[0]), int(offs[1])
		switch {
		case x.DType.IsFloat():
			setFloat(out, o, math.Pow(x.Float64(a), y.Float64(b)))
		case y.DType.IsFloat():
			out.SetInt64(o, floatToIntBits(math.Pow(x.Float64(a), y.Float64(b)), x.DType))
		case y.DType.IsUnsigned():
			out.SetInt64(o, ipow(x.Int64(a), y.Uint64(b)))
		case y.Int64(b) >= 0:
			out.SetInt64(o, ipow(x.Int64(a), uint64(y.Int64(b))))
		default:
			r, ok := ipowNeg(x.Int64(a), y.Int64(b))
			if !ok && err == nil {
				err = fmt.Errorf("integer Pow: 0 to the negative power %d", y.Int64(b))
			}
			out.SetInt64(o, r)
		}
	})
	if err != nil {
		return nil, err
	}
	return []*ir.Tensor{out}, nil
}

// ipow is a^e by squaring, wrapping around on overflow.
func ipow(a int64, e uint64) int64 {
	r := int64(1)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r *= a
		}
		a *= a
	}
	return r
}

// ipowNeg is a^e for e < 0, truncated toward zero like the real result
// cast to an integer: 1 for a = 1, ±1 for a = -1, else 0. ok is false for
// a = 0 (division by zero).
func ipowNeg(a, e int64) (r int64, ok bool) {
	switch a {
	case 0:
		return 0, false
	case 1:
		return 1, true
	case -1:
		if e%2 == 0 {
			return 1, true
		}
		return -1, true
	}
	return 0, true
}
