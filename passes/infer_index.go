package passes

import (
	"fmt"
	"math"
	"slices"

	"github.com/weftrt/weft/ir"
)

// Indexing, selection and reduction ops.

func init() {
	register(gatherOp, "Gather")
	register(gatherElementsOp, "GatherElements")
	register(gatherNDOp, "GatherND")
	register(oneHotOp, "OneHot")
	register(nonZeroOp, "NonZero")
	register(compressOp, "Compress")
	register(uniqueOp, "Unique")
	register(topKOp, "TopK")
	register(argOp, "ArgMax", "ArgMin")
	register(reduceOp, "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
		"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
	register(nmsOp, "NonMaxSuppression")
}

func gatherOp(_ *state, n *ir.Node) ([]typ, error) {
	x, idx := in(n, 0), in(n, 1)
	if x.sh == nil || idx.sh == nil {
		return []typ{x.withShape(nil)}, nil
	}
	ax, err := normAxis(n.AttrInt("axis", 0), len(x.sh))
	if err != nil {
		return nil, err
	}
	out := cat(x.sh[:ax], idx.sh, x.sh[ax+1:])
	return []typ{x.withShape(ir.Shape(out))}, nil
}

func gatherElementsOp(_ *state, n *ir.Node) ([]typ, error) {
	x, idx := in(n, 0), in(n, 1)
	if x.sh != nil && idx.sh != nil && len(x.sh) != len(idx.sh) {
		return nil, fmt.Errorf("GatherElements data rank %d, indices rank %d", len(x.sh), len(idx.sh))
	}
	return []typ{x.withShape(idx.sh)}, nil
}

func gatherNDOp(_ *state, n *ir.Node) ([]typ, error) {
	x, idx := in(n, 0), in(n, 1)
	b := int(n.AttrInt("batch_dims", 0))
	if x.sh == nil || idx.sh == nil || len(idx.sh) == 0 || !idx.sh[len(idx.sh)-1].Known() {
		return []typ{x.withShape(nil)}, nil
	}
	k := int(idx.sh[len(idx.sh)-1].Size)
	if b < 0 || b+k > len(x.sh) || b >= len(idx.sh) {
		return nil, fmt.Errorf("GatherND: batch_dims %d + index depth %d for data rank %d", b, k, len(x.sh))
	}
	out := cat(idx.sh[:len(idx.sh)-1], x.sh[b+k:])
	return []typ{x.withShape(ir.Shape(out))}, nil
}

func oneHotOp(s *state, n *ir.Node) ([]typ, error) {
	idx, vals := in(n, 0), in(n, 2)
	if idx.sh == nil {
		return []typ{{vals.dt, nil}}, nil
	}
	r := len(idx.sh) + 1
	ax, err := normAxis(n.AttrInt("axis", -1), r)
	if err != nil {
		return nil, err
	}
	depth := unk
	if f, ok := s.floats(n.In(1)); ok && len(f) == 1 {
		if f[0] < 1 || math.IsNaN(f[0]) {
			return nil, fmt.Errorf("OneHot depth %v", f[0])
		}
		depth = dim(truncInt(f[0]))
	}
	out := cat(idx.sh[:ax], ir.Shape{depth}, idx.sh[ax:])
	return []typ{{vals.dt, ir.Shape(out)}}, nil
}

func nonZeroOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{{ir.Int64, unknownShape(2)}}, nil
	}
	return []typ{{ir.Int64, ir.Shape{dim(int64(len(x.sh))), unk}}}, nil
}

func compressOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if !n.Has("axis") {
		return []typ{x.withShape(unknownShape(1))}, nil
	}
	if x.sh == nil {
		return []typ{x}, nil
	}
	ax, err := normAxis(n.AttrInt("axis", 0), len(x.sh))
	if err != nil {
		return nil, err
	}
	out := x.sh.Clone()
	out[ax] = unk
	return []typ{x.withShape(out)}, nil
}

// uniqueOp: Y, indices, inverse_indices, counts; sizes are data-dependent.
func uniqueOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	y := x.withShape(unknownShape(1))
	inv := typ{ir.Int64, unknownShape(1)}
	if n.Has("axis") {
		if x.sh == nil {
			y = x
		} else {
			ax, err := normAxis(n.AttrInt("axis", 0), len(x.sh))
			if err != nil {
				return nil, err
			}
			sh := x.sh.Clone()
			sh[ax] = unk
			y = x.withShape(sh)
			inv.sh = ir.Shape{x.sh[ax]}
		}
	} else if x.sh != nil {
		inv.sh = ir.Shape{prodDims(x.sh)}
	}
	return []typ{y, {ir.Int64, unknownShape(1)}, inv, {ir.Int64, unknownShape(1)}}, nil
}

func topKOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x, {ir.Int64, nil}}, nil
	}
	ax, err := normAxis(n.AttrInt("axis", -1), len(x.sh))
	if err != nil {
		return nil, err
	}
	sh := x.sh.Clone()
	sh[ax] = unk
	if k, ok := s.scalarInt(n.In(1)); ok {
		if k < 0 || (x.sh[ax].Known() && k > x.sh[ax].Size) {
			return nil, fmt.Errorf("TopK k=%d for axis of size %v", k, x.sh[ax])
		}
		sh[ax] = dim(k)
	}
	return []typ{x.withShape(sh), {ir.Int64, sh}}, nil
}

// reduced returns sh with axes reduced (kept as 1 or dropped).
func reduced(sh ir.Shape, axes []int, keep bool) ir.Shape {
	out := ir.Shape{}
	for i, d := range sh {
		switch {
		case !slices.Contains(axes, i):
			out = append(out, d)
		case keep:
			out = append(out, dim(1))
		}
	}
	return out
}

func argOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{{ir.Int64, nil}}, nil
	}
	ax, err := normAxis(n.AttrInt("axis", 0), len(x.sh))
	if err != nil {
		return nil, err
	}
	return []typ{{ir.Int64, reduced(x.sh, []int{ax}, n.AttrInt("keepdims", 1) != 0)}}, nil
}

func reduceOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	keep := n.AttrInt("keepdims", 1) != 0
	if x.sh == nil {
		return []typ{x}, nil
	}
	var axes []int
	if a := n.In(1); a != nil {
		ax, ok := s.ints(a)
		if !ok {
			if !keep {
				return []typ{x.withShape(nil)}, nil
			}
			// Any axis may be reduced to 1.
			out := x.sh.Clone()
			for i, d := range out {
				if d.Size != 1 {
					out[i] = unk
				}
			}
			return []typ{x.withShape(out)}, nil
		}
		var err error
		if axes, err = normAxes(ax, len(x.sh)); err != nil {
			return nil, fmt.Errorf("%s axes: %w", n.Op, err)
		}
	}
	if len(axes) == 0 {
		if n.AttrInt("noop_with_empty_axes", 0) != 0 {
			return []typ{x}, nil
		}
		for i := range x.sh {
			axes = append(axes, i)
		}
	}
	return []typ{x.withShape(reduced(x.sh, axes, keep))}, nil
}

func nmsOp(_ *state, _ *ir.Node) ([]typ, error) {
	return []typ{{ir.Int64, ir.Shape{unk, dim(3)}}}, nil
}
