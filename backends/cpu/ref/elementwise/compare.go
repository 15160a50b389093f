package elementwise

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// compare describes a comparison of two values of one dtype class; the
// result is bool. Comparisons involving NaN are false, except !=.
type compare struct {
	types dtypeSet
	f     func(a, b float64) bool
	i     func(a, b int64) bool
	u     func(a, b uint64) bool
	b     func(a, b bool) bool
}

func eq[T number | bool](a, b T) bool { return a == b }
func gt[T number](a, b T) bool        { return a > b }
func ge[T number](a, b T) bool        { return a >= b }
func lt[T number](a, b T) bool        { return a < b }
func le[T number](a, b T) bool        { return a <= b }

// comparisons lists the comparison ops.
var comparisons = map[string]compare{
	"Equal":          {types: anyType, f: eq[float64], i: eq[int64], u: eq[uint64], b: eq[bool]},
	"Greater":        {types: numeric, f: gt[float64], i: gt[int64], u: gt[uint64]},
	"GreaterOrEqual": {types: numeric, f: ge[float64], i: ge[int64], u: ge[uint64]},
	"Less":           {types: numeric, f: lt[float64], i: lt[int64], u: lt[uint64]},
	"LessOrEqual":    {types: numeric, f: le[float64], i: le[int64], u: le[uint64]},
}

func init() {
	for name, c := range comparisons {
		ref.Register(name, compareKernel(c))
	}
	ref.Register("Where", whereKernel)
}

// compareKernel compares two broadcast inputs of one dtype element by element.
func compareKernel(c compare) ref.Kernel {
	return func(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
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
		if x.DType != y.DType {
			return nil, fmt.Errorf("input 1 is %v but input 0 is %v; the inputs must share one dtype", y.DType, x.DType)
		}
		if err := checkDType("the inputs", x.DType, c.types); err != nil {
			return nil, err
		}
		shape, err := broadcastShape(in, false)
		if err != nil {
			return nil, err
		}
		out := ir.NewTensor(ir.Bool, shape)
		eachBroadcast(shape, in, func(o int, offs []int64) {
			a, b := int(offs[0]), int(offs[1])
			var r bool
			switch dt := x.DType; {
			case dt.IsFloat():
				r = c.f(x.Float64(a), y.Float64(b))
			case dt.IsSigned():
				r = c.i(x.Int64(a), y.Int64(b))
			case dt.IsUnsigned():
				r = c.u(x.Uint64(a), y.Uint64(b))
			default:
				r = c.b(x.Bool(a), y.Bool(b))
			}
			out.SetInt64(o, b2i(r))
		})
		return []*ir.Tensor{out}, nil
	}
}

// whereKernel picks X where the bool condition holds and Y elsewhere, all
// three broadcast together. Elements are copied bit for bit.
func whereKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := needOutputs(n, 1); err != nil {
		return nil, err
	}
	if len(in) != 3 {
		return nil, fmt.Errorf("got %d inputs, want 3", len(in))
	}
	if err := ref.Need(in, 0, 1, 2); err != nil {
		return nil, err
	}
	cond, x, y := in[0], in[1], in[2]
	if err := checkDType("the condition (input 0)", cond.DType, bools); err != nil {
		return nil, err
	}
	if x.DType != y.DType {
		return nil, fmt.Errorf("input 2 is %v but input 1 is %v; X and Y must share one dtype", y.DType, x.DType)
	}
	if err := checkDType("X and Y", x.DType, anyType); err != nil {
		return nil, err
	}
	shape, err := broadcastShape(in, false)
	if err != nil {
		return nil, err
	}
	out := ir.NewTensor(x.DType, shape)
	sz := x.DType.Size()
	eachBroadcast(shape, in, func(o int, offs []int64) {
		src, k := y, int(offs[2])
		if cond.Bool(int(offs[0])) {
			src, k = x, int(offs[1])
		}
		copy(out.Data[o*sz:(o+1)*sz], src.Data[k*sz:(k+1)*sz])
	})
	return []*ir.Tensor{out}, nil
}
