package reduce

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("ArgMax", func(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		return argExtreme(n, in, true)
	})
	ref.Register("ArgMin", func(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		return argExtreme(n, in, false)
	})
}

// argExtreme implements ArgMax (wantMax) and ArgMin: the i64 index of the
// first (or, with select_last_index, the last) extreme element along axis.
// As in numpy, a NaN counts as more extreme than any number.
func argExtreme(n *ir.Node, in []*ir.Tensor, wantMax bool) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needNumeric(n.Op, x); err != nil {
		return nil, err
	}
	axis, err := ref.NormAxis(n.AttrInt("axis", 0), len(x.Shape))
	if err != nil {
		return nil, err
	}
	outer, size, inner := splitAt(x.Shape, axis)
	if size == 0 && outer*inner > 0 {
		return nil, fmt.Errorf("%s over the empty axis %d of shape %v", n.Op, axis, x.Shape)
	}
	last := n.AttrInt("select_last_index", 0) != 0

	// better reports whether element i beats element j (strictly, or also
	// on ties when the last index is wanted).
	var better func(i, j int) bool
	switch {
	case x.DType.IsFloat():
		better = func(i, j int) bool {
			a, b := x.Float64(i), x.Float64(j)
			if math.IsNaN(b) {
				return last && math.IsNaN(a)
			}
			if math.IsNaN(a) {
				return true
			}
			return (wantMax && a > b) || (!wantMax && a < b) || (last && a == b)
		}
	case x.DType.IsSigned():
		better = func(i, j int) bool {
			a, b := x.Int64(i), x.Int64(j)
			return (wantMax && a > b) || (!wantMax && a < b) || (last && a == b)
		}
	default:
		better = func(i, j int) bool {
			a, b := x.Uint64(i), x.Uint64(j)
			return (wantMax && a > b) || (!wantMax && a < b) || (last && a == b)
		}
	}

	shape := append([]int64{}, x.Shape...)
	if n.AttrInt("keepdims", 1) != 0 {
		shape[axis] = 1
	} else {
		shape = append(shape[:axis], shape[axis+1:]...)
	}
	out := ir.NewTensor(ir.Int64, shape)
	for o := 0; o < outer; o++ {
		for k := 0; k < inner; k++ {
			base := o*size*inner + k
			best := 0
			for j := 1; j < size; j++ {
				if better(base+j*inner, base+best*inner) {
					best = j
				}
			}
			out.SetInt64(o*inner+k, int64(best))
		}
	}
	return []*ir.Tensor{out}, nil
}
