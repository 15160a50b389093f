package elementwise

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// unary describes an elementwise map whose output has the input's dtype.
// Exactly the functions for the dtype classes in types are set.
type unary struct {
	types dtypeSet
	f     func(x float64) float64 // float dtypes, computed in float64
	i     func(x int64) int64     // signed integers; the result wraps to the width
	u     func(x uint64) uint64   // unsigned integers; the result wraps to the width
	b     func(x bool) bool       // bool
}

// unaryMaker builds an op's unary from its attributes and, for ops such as
// Clip, its extra inputs (in[0] is the data).
type unaryMaker func(n *ir.Node, in []*ir.Tensor) (unary, error)

// fixed is the unaryMaker of an op without attributes.
func fixed(u unary) unaryMaker {
	return func(*ir.Node, []*ir.Tensor) (unary, error) { return u, nil }
}

// registerUnary registers a kernel that applies the unary that mk builds to
// every element of input 0; the op takes 1 to maxIn inputs.
func registerUnary(op string, maxIn int, mk unaryMaker) {
	ref.Register(op, func(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		if err := needOutputs(n, 1); err != nil {
			return nil, err
		}
		if len(in) > maxIn {
			return nil, fmt.Errorf("got %d inputs, want %s", len(in), countRange(1, maxIn))
		}
		if err := ref.Need(in, 0); err != nil {
			return nil, err
		}
		x := in[0]
		u, err := mk(n, in)
		if err != nil {
			return nil, err
		}
		if err := checkDType("input 0", x.DType, u.types); err != nil {
			return nil, err
		}
		out := ir.NewTensor(x.DType, x.Shape)
		for k := range x.Len() {
			switch dt := x.DType; {
			case dt.IsFloat():
				setFloat(out, k, u.f(x.Float64(k)))
			case dt.IsSigned():
				out.SetInt64(k, u.i(x.Int64(k)))
			case dt.IsUnsigned():
				out.SetInt64(k, int64(u.u(x.Uint64(k))))
			default:
				out.SetInt64(k, b2i(u.b(x.Bool(k))))
			}
		}
		return []*ir.Tensor{out}, nil
	})
}

// registerPredicate registers a kernel that maps every element of a float
// input 0 to a bool.
func registerPredicate(op string, mk func(n *ir.Node) func(float64) bool) {
	ref.Register(op, func(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		if err := needOutputs(n, 1); err != nil {
			return nil, err
		}
		if len(in) != 1 {
			return nil, fmt.Errorf("got %d inputs, want 1", len(in))
		}
		if err := ref.Need(in, 0); err != nil {
			return nil, err
		}
		x := in[0]
		if err := checkDType("input 0", x.DType, floats); err != nil {
			return nil, err
		}
		p := mk(n)
		out := ir.NewTensor(ir.Bool, x.Shape)
		for k := range x.Len() {
			out.SetInt64(k, b2i(p(x.Float64(k))))
		}
		return []*ir.Tensor{out}, nil
	})
}

// needOutputs checks that the node has want outputs.
func needOutputs(n *ir.Node, want int) error {
	if len(n.Outputs) != want {
		return fmt.Errorf("node has %d outputs, want %d", len(n.Outputs), want)
	}
	return nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
