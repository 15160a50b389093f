package layout

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// CumSum, the running sum along an axis.
func init() {
	ref.Register("CumSum", cumSumKernel)
}

// cumSumKernel: CumSum(x, axis) with attributes exclusive (the sum of the
// elements before, not including, each position) and reverse (sum from the
// end). Floats accumulate in float64 and round each output once; integers
// accumulate with wrap-around (uint64 bit for bit).
func cumSumKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x := in[0]
	if x.DType == ir.Bool || !x.DType.Valid() {
		return nil, fmt.Errorf("CumSum does not take %v", x.DType)
	}
	if len(x.Shape) == 0 {
		return nil, fmt.Errorf("input must have rank >= 1")
	}
	a, err := scalarInt(in[1], "axis")
	if err != nil {
		return nil, err
	}
	axis, err := ref.NormAxis(a, len(x.Shape))
	if err != nil {
		return nil, err
	}
	exclusive := n.AttrInt("exclusive", 0) != 0
	reverse := n.AttrInt("reverse", 0) != 0
	outer, dim, inner := splitAt(x.Shape, axis)
	out := ir.NewTensor(x.DType, x.Shape)
	isFloat := x.DType.IsFloat()
	for o := 0; o < outer; o++ {
		for p := 0; p < inner; p++ {
			var fs float64
			var is int64
			for s := 0; s < dim; s++ {
				j := s
				if reverse {
					j = dim - 1 - s
				}
				i := (o*dim+j)*inner + p
				if isFloat {
					if !exclusive {
						fs += x.Float64(i)
					}
					out.SetFloat64(i, fs)
					if exclusive {
						fs += x.Float64(i)
					}
				} else {
					if !exclusive {
						is += x.Int64(i)
					}
					out.SetInt64(i, is)
					if exclusive {
						is += x.Int64(i)
					}
				}
			}
		}
	}
	return []*ir.Tensor{out}, nil
}
