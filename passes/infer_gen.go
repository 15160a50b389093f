package passes

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

// Shape queries, generators (ConstantOfShape, Range) and block moves
// (DepthToSpace, SpaceToDepth, CenterCropPad).

func init() {
	register(shapeOp, "Shape")
	register(sizeOp, "Size")
	register(constantOfShapeOp, "ConstantOfShape")
	register(rangeOp, "Range")
	register(depthSpaceOp, "DepthToSpace", "SpaceToDepth")
	register(centerCropPadOp, "CenterCropPad")
}

// shapeRange returns the [start, end) of dims that a Shape node reports.
func shapeRange(n *ir.Node, r int) (int, int, bool) {
	clamp := func(v int64) int {
		if v < 0 {
			v += int64(r)
		}
		return int(min(max(v, 0), int64(r)))
	}
	lo, hi := clamp(n.AttrInt("start", 0)), clamp(n.AttrInt("end", int64(r)))
	return lo, max(hi, lo), true
}

func shapeOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{{ir.Int64, unknownShape(1)}}, nil
	}
	lo, hi, _ := shapeRange(n, len(x.sh))
	return []typ{{ir.Int64, ir.S(int64(hi - lo))}}, nil
}

func sizeOp(_ *state, _ *ir.Node) ([]typ, error) {
	return []typ{{ir.Int64, ir.Scalar()}}, nil
}

func constantOfShapeOp(s *state, n *ir.Node) ([]typ, error) {
	dt := ir.Float32
	if t := n.AttrTensor("value"); t != nil {
		dt = t.DType
	}
	target, ok := s.dimValues(n.In(0))
	if !ok {
		if k := shapeLen(n.In(0)); k >= 0 {
			return []typ{{dt, unknownShape(k)}}, nil
		}
		return []typ{{dt, nil}}, nil
	}
	return []typ{{dt, ir.Shape(target)}}, nil
}

func rangeOp(s *state, n *ir.Node) ([]typ, error) {
	dt := in(n, 0).dt
	st, ok1 := s.values(n.In(0))
	li, ok2 := s.values(n.In(1))
	de, ok3 := s.values(n.In(2))
	if in(n, 1).dt != dt || in(n, 2).dt != dt {
		return []typ{{dt, unknownShape(1)}}, nil // mixed types: not a valid Range
	}
	if !ok1 || !ok2 || !ok3 || len(st) != 1 || len(li) != 1 || len(de) != 1 || !st[0].known || !li[0].known || !de[0].known {
		return []typ{{dt, unknownShape(1)}}, nil
	}
	var count int64
	if dt.IsFloat() {
		if de[0].f == 0 {
			return nil, fmt.Errorf("Range delta 0")
		}
		c := math.Ceil((li[0].f - st[0].f) / de[0].f)
		if math.IsNaN(c) || c > math.MaxInt32 {
			return []typ{{dt, unknownShape(1)}}, nil
		}
		count = int64(max(c, 0))
	} else {
		d := de[0].i
		if d == 0 {
			return nil, fmt.Errorf("Range delta 0")
		}
		diff := li[0].i - st[0].i
		if d < 0 {
			diff, d = -diff, -d
		}
		count = max(ceilDiv(diff, d), 0)
	}
	return []typ{{dt, ir.S(count)}}, nil
}

func depthSpaceOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	b := n.AttrInt("blocksize", 0)
	if x.sh == nil || b <= 0 {
		return []typ{x.withShape(unknownShape(4))}, nil
	}
	if len(x.sh) != 4 {
		return nil, fmt.Errorf("%s input has rank %d, want 4", n.Op, len(x.sh))
	}
	out := x.sh.Clone()
	if n.Op == "DepthToSpace" {
		if c := x.sh[1]; c.Known() {
			if c.Size%(b*b) != 0 {
				return nil, fmt.Errorf("DepthToSpace: %d channels not divisible by %d", c.Size, b*b)
			}
			out[1] = dim(c.Size / (b * b))
		} else {
			out[1] = unk
		}
		out[2], out[3] = dimMul(x.sh[2], dim(b)), dimMul(x.sh[3], dim(b))
		return []typ{x.withShape(out)}, nil
	}
	out[1] = dimMul(x.sh[1], dim(b*b))
	for i := 2; i < 4; i++ {
		if d := x.sh[i]; d.Known() {
			if d.Size%b != 0 {
				return nil, fmt.Errorf("SpaceToDepth: dim %d not divisible by %d", d.Size, b)
			}
			out[i] = dim(d.Size / b)
		} else {
			out[i] = unk
		}
	}
	return []typ{x.withShape(out)}, nil
}

func centerCropPadOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x}, nil
	}
	target, ok := s.dimValues(n.In(1))
	axes := make([]int, 0, len(x.sh))
	if a := n.AttrInts("axes", nil); a != nil {
		var err error
		if axes, err = normAxes(a, len(x.sh)); err != nil {
			return nil, fmt.Errorf("CenterCropPad axes: %w", err)
		}
	} else {
		for i := range x.sh {
			axes = append(axes, i)
		}
	}
	out := x.sh.Clone()
	if ok && len(target) != len(axes) {
		return nil, fmt.Errorf("CenterCropPad shape has %d entries for %d axes", len(target), len(axes))
	}
	for i, a := range axes {
		if ok {
			out[a] = target[i]
		} else {
			out[a] = unk
		}
	}
	return []typ{x.withShape(out)}, nil
}
