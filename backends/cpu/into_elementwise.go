package cpu

import (
	"math"
	"slices"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	registerInto(buildUnary, "Relu", "Sigmoid", "Tanh", "Gelu", "SiLU", "Erf", "Exp", "Sqrt",
		"Neg", "Abs", "Log", "Reciprocal", "LeakyRelu", "HardSigmoid", "HardSwish", "Floor", "Ceil")
	registerInto(buildBinary, "Add", "Sub", "Mul", "Div")
}

// buildUnary handles float32 elementwise activations. Gelu, Sigmoid and
// SiLU run the float32 vector kernels (vecUnary); the other
// transcendental functions are evaluated in float64 and rounded once, as
// the reference does.
func buildUnary(s *nodeSpec) intoKernel {
	if len(s.in) != 1 || len(s.out) != 1 || !s.in[0].ok || !allF32(s.in[0], s.out[0]) || !slices.Equal(s.in[0].shape, s.out[0].shape) {
		return nil
	}
	switch s.n.Op {
	case "Relu":
		return unaryF32(func(x float32) float32 {
			if x < 0 {
				return 0
			}
			return x
		})
	case "Neg":
		return unaryF32(func(x float32) float32 { return -x })
	}
	if act := vecUnary(s.n); act != nil {
		return func(in, out []*ir.Tensor, scratch []byte) error {
			y := out[0].Float32s()
			copy(y, in[0].Float32s())
			act(y)
			return nil
		}
	}
	f := unaryFunc(s.n)
	if f == nil {
		return nil
	}
	return unaryF32(func(x float32) float32 { return float32(f(float64(x))) })
}

// vecUnary returns the float32 vector kernel (kernels/vec.go) of an
// exp/erf-based activation node, or nil.
func vecUnary(n *ir.Node) func([]float32) {
	switch n.Op {
	case "Gelu":
		switch n.AttrString("approximate", "none") {
		case "none":
			return vecAct("Gelu")
		case "tanh":
			return vecAct("GeluTanh")
		}
		return nil
	case "Sigmoid", "SiLU":
		return vecAct(n.Op)
	}
	return nil
}

// unaryFunc returns the float64 formula of a unary elementwise node (the
// reference's), or nil when it has none here.
func unaryFunc(n *ir.Node) func(float64) float64 {
	switch n.Op {
	case "Relu":
		return func(x float64) float64 {
			if x < 0 {
				return 0
			}
			return x
		}
	case "Neg":
		return func(x float64) float64 { return -x }
	case "Abs":
		return math.Abs
	case "LeakyRelu":
		alpha := float64(n.AttrFloat("alpha", 0.01))
		return func(x float64) float64 {
			if x < 0 {
				return alpha * x
			}
			return x
		}
	case "Sigmoid":
		return sigmoid
	case "SiLU":
		return func(x float64) float64 { return x * sigmoid(x) }
	case "Tanh":
		return math.Tanh
	case "Gelu":
		switch n.AttrString("approximate", "none") {
		case "none":
			return func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
		case "tanh":
			c := math.Sqrt(2 / math.Pi)
			return func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(c*(x+0.044715*x*x*x))) }
		}
	case "Erf":
		return math.Erf
	case "Exp":
		return math.Exp
	case "Sqrt":
		return math.Sqrt
	case "Log":
		return math.Log
	case "Reciprocal":
		return func(x float64) float64 { return 1 / x }
	case "HardSigmoid":
		alpha, beta := float64(n.AttrFloat("alpha", 0.2)), float64(n.AttrFloat("beta", 0.5))
		return func(x float64) float64 { return max(0, min(1, alpha*x+beta)) }
	case "HardSwish":
		return func(x float64) float64 { return x * max(0, min(1, x/6+0.5)) }
	case "Floor":
		return math.Floor
	case "Ceil":
		return math.Ceil
	case "Sin":
		return math.Sin
	case "Cos":
		return math.Cos
	}
	return nil
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// unaryF32 applies f elementwise; reading x[i] before writing y[i] keeps it
// correct in place.
func unaryF32(f func(float32) float32) intoKernel {
	return func(in, out []*ir.Tensor, scratch []byte) error {
		x, y := in[0].Float32s(), out[0].Float32s()
		for i, v := range x {
			y[i] = f(v)
		}
		return nil
	}
}

// Binary op codes.
const (
	opAdd = iota
	opSub
	opMul
	opDiv
)

// bcast describes a broadcast walk: the output is rows of length inner;
// row r of the output reads A and B at offsets computed from the outer
// dims, and steps through the row with strides sa and sb (0 or 1).
type bcast struct {
	outer      []int64 // output dims except the last
	aSt, bSt   []int64 // A's and B's strides for the outer dims
	inner      int
	sa, sb     int
	rows       int
	contiguous bool // A, B and Y all have Y's shape
}

func newBcast(a, b, y []int64) (*bcast, bool) {
	shape, err := ref.BroadcastShapes(a, b)
	if err != nil || !slices.Equal(shape, y) {
		return nil, false
	}
	bc := &bcast{contiguous: slices.Equal(a, y) && slices.Equal(b, y)}
	if len(y) == 0 {
		bc.inner, bc.rows, bc.sa, bc.sb = 1, 1, 0, 0
		return bc, true
	}
	as, bs := ref.BroadcastStrides(a, y), ref.BroadcastStrides(b, y)
	r := len(y)
	bc.inner, bc.sa, bc.sb = int(y[r-1]), int(as[r-1]), int(bs[r-1])
	bc.outer, bc.aSt, bc.bSt = y[:r-1], as[:r-1], bs[:r-1]
	bc.rows = numel(bc.outer)
	return bc, true
}

// offsets returns the row's starting offsets in A and B.
func (bc *bcast) offsets(row int) (int, int) {
	var oa, ob int
	for d := len(bc.outer) - 1; d >= 0; d-- {
		n := int(bc.outer[d])
		i := row % n
		row /= n
		oa += i * int(bc.aSt[d])
		ob += i * int(bc.bSt[d])
	}
	return oa, ob
}

// buildBinary handles float32 Add, Sub, Mul and Div with numpy broadcasting.
func buildBinary(s *nodeSpec) intoKernel {
	if len(s.in) != 2 || len(s.out) != 1 || !s.in[0].ok || !s.in[1].ok || !allF32(s.in[0], s.in[1], s.out[0]) {
		return nil
	}
	bc, ok := newBcast(s.in[0].shape, s.in[1].shape, s.out[0].shape)
	if !ok {
		return nil
	}
	op := map[string]int{"Add": opAdd, "Sub": opSub, "Mul": opMul, "Div": opDiv}[s.n.Op]
	return func(in, out []*ir.Tensor, scratch []byte) error {
		a, b, y := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
		if bc.contiguous {
			binRow(op, y, a, b, 1, 1)
			return nil
		}
		for r := 0; r < bc.rows; r++ {
			oa, ob := bc.offsets(r)
			binRow(op, y[r*bc.inner:(r+1)*bc.inner], a[oa:], b[ob:], bc.sa, bc.sb)
		}
		return nil
	}
}

// binRow computes y[i] = a[i*sa] op b[i*sb]. Each element is read before
// it is written, so y may be a (or b) itself when that stride is 1.
func binRow(op int, y, a, b []float32, sa, sb int) {
	n := len(y)
	switch {
	case sa == 1 && sb == 1:
		a, b = a[:n], b[:n]
		switch op {
		case opAdd:
			// Vector add: y = a·1 + b (exact), in place over whichever
			// operand y is (addition commutes).
			switch {
			case n == 0:
			case &y[0] == &b[0]:
				kernels.ScaleAdd(y, 1, a)
			default:
				copy(y, a)
				kernels.ScaleAdd(y, 1, b)
			}
		case opSub:
			for i := range y {
				y[i] = a[i] - b[i]
			}
		case opMul:
			for i := range y {
				y[i] = a[i] * b[i]
			}
		case opDiv:
			for i := range y {
				y[i] = a[i] / b[i]
			}
		}
	case sa == 1 && sb == 0:
		a, c := a[:n], b[0]
		switch op {
		case opAdd:
			for i := range y {
				y[i] = a[i] + c
			}
		case opSub:
			for i := range y {
				y[i] = a[i] - c
			}
		case opMul:
			for i := range y {
				y[i] = a[i] * c
			}
		case opDiv:
			for i := range y {
				y[i] = a[i] / c
			}
		}
	default:
		for i := range y {
			x, z := a[i*sa], b[i*sb]
			switch op {
			case opAdd:
				y[i] = x + z
			case opSub:
				y[i] = x - z
			case opMul:
				y[i] = x * z
			case opDiv:
				y[i] = x / z
			}
		}
	}
}
