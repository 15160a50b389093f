package passes

import (
	"math"

	"github.com/weftrt/weft/ir"
)

// Known values of small tensors. ONNX exporters compute shapes at run time:
// Shape -> Gather/Slice -> Unsqueeze/Concat/Cast/Add/Mul... -> Reshape. The
// inference state tracks the element values of such small tensors, so that
// the shapes they feed become static. A value may be partly known: an
// element can be a symbolic dim (the "seq" of Shape(x)) or unknown. Nothing
// here rewrites the graph; constant folding is a later pass.

// maxTracked bounds the number of elements whose values are tracked.
const maxTracked = 1024

// elem is one element of a tracked value.
type elem struct {
	known bool
	i     int64   // the value, for integer and bool dtypes
	f     float64 // the value, for float dtypes (float64(i) for integers)
	sym   string  // when !known: the symbolic dim this element equals, if any
}

func intElem(v int64) elem { return elem{known: true, i: v, f: float64(v)} }

// values returns the tracked elements of v (row-major), if any.
func (s *state) values(v *ir.Value) ([]elem, bool) {
	if v == nil {
		return nil, false
	}
	if e, ok := s.vals[v]; ok {
		return e, true
	}
	if v.Const == nil || v.Const.Len() > maxTracked || !v.Const.DType.Valid() {
		return nil, false
	}
	t := v.Const
	e := make([]elem, t.Len())
	for i := range e {
		if t.DType.IsFloat() {
			f := t.Float64(i)
			e[i] = elem{known: true, f: f, i: truncInt(f)}
		} else {
			e[i] = intElem(t.Int64(i))
		}
	}
	s.vals[v] = e
	return e, true
}

// ints returns the values of v when all are known integers.
func (s *state) ints(v *ir.Value) ([]int64, bool) {
	e, ok := s.values(v)
	if !ok || v.DType.IsFloat() {
		return nil, false
	}
	out := make([]int64, len(e))
	for i, x := range e {
		if !x.known {
			return nil, false
		}
		out[i] = x.i
	}
	return out, true
}

// scalarInt returns the single known integer value of v.
func (s *state) scalarInt(v *ir.Value) (int64, bool) {
	x, ok := s.ints(v)
	if !ok || len(x) != 1 {
		return 0, false
	}
	return x[0], true
}

// floats returns the values of v when all are known (any numeric dtype).
func (s *state) floats(v *ir.Value) ([]float64, bool) {
	e, ok := s.values(v)
	if !ok {
		return nil, false
	}
	out := make([]float64, len(e))
	for i, x := range e {
		if !x.known {
			return nil, false
		}
		out[i] = x.f
	}
	return out, true
}

// dimValues returns a 1-D integer value as dims (known values as sizes, which
// must not be negative; symbolic elements as symbols), for Expand, ConstantOfShape, ....
func (s *state) dimValues(v *ir.Value) ([]ir.Dim, bool) {
	e, ok := s.values(v)
	if !ok || v.DType.IsFloat() {
		return nil, false
	}
	out := make([]ir.Dim, len(e))
	for i, x := range e {
		switch {
		case x.known && x.i < 0:
			return nil, false
		case x.known:
			out[i] = ir.Dim{Size: x.i}
		default:
			out[i] = ir.Dim{Size: -1, Sym: x.sym}
		}
	}
	return out, true
}

// truncInt converts a float to an integer toward zero (0 for NaN, clamped).
func truncInt(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// fold computes the values of n's outputs from known input values, when n is
// one of the ops of shape arithmetic and its output is small and static.
func (s *state) fold(n *ir.Node) {
	if len(n.Outputs) != 1 {
		return
	}
	out := n.Outputs[0]
	numel := out.Shape.NumElements()
	if numel < 0 || numel > maxTracked || !out.DType.Valid() || out.DType == ir.String {
		return
	}
	var e []elem
	switch n.Op {
	case "Shape":
		e = s.foldShape(n)
	case "Size":
		if x := n.In(0); x != nil {
			if c := x.Shape.NumElements(); c >= 0 {
				e = []elem{intElem(c)}
			}
		}
	case "Identity":
		e, _ = s.values(n.In(0))
	case "Cast", "CastLike":
		e = s.foldCast(n.In(0), out.DType)
	case "Unsqueeze", "Squeeze", "Reshape", "Flatten":
		e, _ = s.values(n.In(0)) // same elements, new shape
	case "Concat":
		e = s.foldConcat(n)
	case "Gather":
		e = s.foldGather(n)
	case "Slice":
		e = s.foldSlice(n)
	case "Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual":
		e = s.foldBinary(n)
	case "Neg", "Abs", "Floor", "Ceil", "Not":
		e = s.foldUnary(n)
	case "Where":
		e = s.foldWhere(n)
	case "ConstantOfShape":
		e = s.foldConstantOfShape(n)
	case "Range":
		e = s.foldRange(n)
	case "Expand", "Tile":
		e = s.foldBroadcastLike(n)
	case "ReduceProd", "ReduceSum":
		e = s.foldReduce(n)
	}
	if e != nil && int64(len(e)) == numel {
		s.vals[out] = e
	}
}

func (s *state) foldShape(n *ir.Node) []elem {
	x := n.In(0)
	if x == nil || x.Shape == nil {
		return nil
	}
	lo, hi, ok := shapeRange(n, len(x.Shape))
	if !ok {
		return nil
	}
	e := make([]elem, 0, hi-lo)
	for _, d := range x.Shape[lo:hi] {
		if d.Known() {
			e = append(e, intElem(d.Size))
		} else {
			e = append(e, elem{sym: d.Sym})
		}
	}
	return e
}

// castElem converts one element to dtype dt (exactly as Cast would for the
// values that matter to shapes; symbols survive integer/float casts).
func castElem(x elem, from, to ir.DType) elem {
	if !x.known {
		if to == ir.Bool {
			return elem{}
		}
		return x
	}
	switch {
	case to == ir.Bool:
		b := x.f != 0
		if !from.IsFloat() {
			b = x.i != 0
		}
		if b {
			return intElem(1)
		}
		return intElem(0)
	case to.IsFloat():
		v := x.f
		if !from.IsFloat() {
			v = float64(x.i)
		}
		return floatElem(v, to)
	default:
		v := x.i
		if from.IsFloat() {
			if math.IsNaN(x.f) || math.IsInf(x.f, 0) {
				return elem{}
			}
			v = truncInt(x.f)
		}
		return intElem(wrapInt(v, to))
	}
}

// floatElem rounds v to dtype dt.
func floatElem(v float64, dt ir.DType) elem {
	t := ir.NewTensor(dt, []int64{1})
	t.SetFloat64(0, v)
	f := t.Float64(0)
	return elem{known: true, f: f, i: truncInt(f)}
}

// wrapInt wraps v to the width of integer dtype dt.
func wrapInt(v int64, dt ir.DType) int64 {
	t := ir.NewTensor(dt, []int64{1})
	t.SetInt64(0, v)
	return t.Int64(0)
}

func (s *state) foldCast(x *ir.Value, to ir.DType) []elem {
	e, ok := s.values(x)
	if !ok {
		return nil
	}
	out := make([]elem, len(e))
	for i := range e {
		out[i] = castElem(e[i], x.DType, to)
	}
	return out
}

func (s *state) foldConcat(n *ir.Node) []elem {
	out := n.Outputs[0]
	if len(out.Shape) != 1 {
		return nil // only 1-D concatenation matters for shapes
	}
	e := []elem{}
	for _, v := range n.Inputs {
		x, ok := s.values(v)
		if !ok {
			return nil
		}
		e = append(e, x...)
	}
	return e
}

func (s *state) foldGather(n *ir.Node) []elem {
	data, idx := n.In(0), n.In(1)
	de, ok := s.values(data)
	if !ok || len(data.Shape) != 1 {
		return nil
	}
	ix, ok := s.ints(idx)
	if !ok {
		return nil
	}
	size := int64(len(de))
	e := make([]elem, len(ix))
	for i, j := range ix {
		if j < 0 {
			j += size
		}
		if j < 0 || j >= size {
			return nil
		}
		e[i] = de[j]
	}
	return e
}

func (s *state) foldSlice(n *ir.Node) []elem {
	data := n.In(0)
	de, ok := s.values(data)
	if !ok || len(data.Shape) != 1 {
		return nil
	}
	r, ok := s.sliceRanges(n, ir.S(int64(len(de))))
	if !ok {
		return nil
	}
	var e []elem
	sl := r[0]
	for i := sl.start; (sl.step > 0 && i < sl.end) || (sl.step < 0 && i > sl.end); i += sl.step {
		e = append(e, de[i])
	}
	if e == nil {
		e = []elem{}
	}
	return e
}
