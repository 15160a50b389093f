package passes

import (
	"math"

	"github.com/weftrt/weft/ir"
)

// Element-wise folding of tracked values (see infer_values.go): arithmetic,
// comparisons, Where, generators and broadcasts over small static tensors.

// broadcastIndex maps flat output index i to a flat index into a tensor of
// static shape in, broadcast to static shape out.
func broadcastIndex(i int, out, in []int64) int {
	idx, stride := 0, 1
	for k := len(out) - 1; k >= 0; k-- {
		c := i % int(out[k])
		i /= int(out[k])
		if j := k - (len(out) - len(in)); j >= 0 {
			if in[j] != 1 {
				idx += c * stride
			}
			stride *= int(in[j])
		}
	}
	return idx
}

func staticInts(v *ir.Value) ([]int64, bool) {
	if v == nil || !v.Shape.Static() {
		return nil, false
	}
	return v.Shape.Ints(), true
}

func (s *state) foldBinary(n *ir.Node) []elem {
	if len(n.Inputs) != 2 { // Max and Min are variadic
		return nil
	}
	a, b, out := n.In(0), n.In(1), n.Outputs[0]
	ae, ok1 := s.values(a)
	be, ok2 := s.values(b)
	as, ok3 := staticInts(a)
	bs, ok4 := staticInts(b)
	os, ok5 := staticInts(out)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || a.DType != b.DType {
		return nil
	}
	e := make([]elem, ir.NumElements(os))
	for i := range e {
		e[i] = binaryElem(n.Op, ae[broadcastIndex(i, os, as)], be[broadcastIndex(i, os, bs)], a.DType, n.AttrInt("fmod", 0))
	}
	return e
}

// binaryElem applies op to two elements of dtype dt. Anything not certain
// (symbols, division of negative integers, overflow-prone cases) is unknown.
func binaryElem(op string, x, y elem, dt ir.DType, fmod int64) elem {
	if !x.known || !y.known {
		// x+0, x-0, x*1 and x/1 keep a symbol.
		if x.sym != "" && y.known && !dt.IsFloat() &&
			((y.i == 0 && (op == "Add" || op == "Sub")) || (y.i == 1 && (op == "Mul" || op == "Div"))) {
			return x
		}
		if y.sym != "" && x.known && !dt.IsFloat() && ((x.i == 0 && op == "Add") || (x.i == 1 && op == "Mul")) {
			return y
		}
		return elem{}
	}
	if dt.IsFloat() {
		var v float64
		switch op {
		case "Add":
			v = x.f + y.f
		case "Sub":
			v = x.f - y.f
		case "Mul":
			v = x.f * y.f
		case "Div":
			v = x.f / y.f
		case "Max":
			v = math.Max(x.f, y.f)
		case "Min":
			v = math.Min(x.f, y.f)
		case "Mod":
			if fmod == 0 {
				return elem{}
			}
			v = math.Mod(x.f, y.f)
		default:
			if math.IsNaN(x.f) || math.IsNaN(y.f) {
				return elem{}
			}
			return boolElem(op, x.f < y.f, x.f == y.f)
		}
		return floatElem(v, dt)
	}
	if dt == ir.Uint64 && (x.i < 0 || y.i < 0) {
		return elem{} // beyond int64: not shape arithmetic
	}
	var v int64
	switch op {
	case "Add":
		v = x.i + y.i
	case "Sub":
		v = x.i - y.i
	case "Mul":
		v = x.i * y.i
	case "Div", "Mod":
		// Integer division of non-negative operands is the same under every
		// rounding convention; for others we do not guess.
		if y.i <= 0 || x.i < 0 {
			return elem{}
		}
		if op == "Div" {
			v = x.i / y.i
		} else {
			v = x.i % y.i
		}
	case "Max":
		v = max(x.i, y.i)
	case "Min":
		v = min(x.i, y.i)
	default:
		if dt == ir.Uint64 {
			return elem{}
		}
		return boolElem(op, x.i < y.i, x.i == y.i)
	}
	return intElem(wrapInt(v, dt))
}

func boolElem(op string, less, eq bool) elem {
	var b bool
	switch op {
	case "Equal":
		b = eq
	case "Less":
		b = less
	case "LessOrEqual":
		b = less || eq
	case "Greater":
		b = !less && !eq
	case "GreaterOrEqual":
		b = !less
	default:
		return elem{}
	}
	if b {
		return intElem(1)
	}
	return intElem(0)
}

func (s *state) foldUnary(n *ir.Node) []elem {
	x := n.In(0)
	xe, ok := s.values(x)
	if !ok {
		return nil
	}
	e := make([]elem, len(xe))
	for i, v := range xe {
		if !v.known {
			return nil
		}
		switch {
		case n.Op == "Not":
			e[i] = intElem(1 - v.i)
		case x.DType.IsFloat():
			f := v.f
			switch n.Op {
			case "Neg":
				f = -f
			case "Abs":
				f = math.Abs(f)
			case "Floor":
				f = math.Floor(f)
			case "Ceil":
				f = math.Ceil(f)
			}
			e[i] = floatElem(f, x.DType)
		default:
			k := v.i
			switch n.Op {
			case "Neg":
				k = -k
			case "Abs":
				if k < 0 {
					k = -k
				}
			}
			e[i] = intElem(wrapInt(k, x.DType))
		}
	}
	return e
}

func (s *state) foldWhere(n *ir.Node) []elem {
	c, a, b, out := n.In(0), n.In(1), n.In(2), n.Outputs[0]
	ce, ok0 := s.values(c)
	ae, ok1 := s.values(a)
	be, ok2 := s.values(b)
	cs, ok3 := staticInts(c)
	as, ok4 := staticInts(a)
	bs, ok5 := staticInts(b)
	os, ok6 := staticInts(out)
	if !ok0 || !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return nil
	}
	e := make([]elem, ir.NumElements(os))
	for i := range e {
		cv := ce[broadcastIndex(i, os, cs)]
		if !cv.known {
			return nil
		}
		if cv.i != 0 {
			e[i] = ae[broadcastIndex(i, os, as)]
		} else {
			e[i] = be[broadcastIndex(i, os, bs)]
		}
	}
	return e
}

func (s *state) foldConstantOfShape(n *ir.Node) []elem {
	out := n.Outputs[0]
	v := elem{known: true}
	if t := n.AttrTensor("value"); t != nil {
		if t.Len() != 1 {
			return nil
		}
		if t.DType.IsFloat() {
			v = elem{known: true, f: t.Float64(0), i: truncInt(t.Float64(0))}
		} else {
			v = intElem(t.Int64(0))
		}
	}
	e := make([]elem, out.Shape.NumElements())
	for i := range e {
		e[i] = v
	}
	return e
}

func (s *state) foldRange(n *ir.Node) []elem {
	out := n.Outputs[0]
	st, ok1 := s.values(n.In(0))
	d, ok2 := s.values(n.In(2))
	if !ok1 || !ok2 || len(st) != 1 || len(d) != 1 || !st[0].known || !d[0].known {
		return nil
	}
	e := make([]elem, out.Shape.NumElements())
	for i := range e {
		if out.DType.IsFloat() {
			e[i] = floatElem(st[0].f+float64(i)*d[0].f, out.DType)
		} else {
			e[i] = intElem(st[0].i + int64(i)*d[0].i)
		}
	}
	return e
}

// foldBroadcastLike handles Expand (broadcast) and Tile (repeat).
func (s *state) foldBroadcastLike(n *ir.Node) []elem {
	x, out := n.In(0), n.Outputs[0]
	xe, ok := s.values(x)
	xs, ok1 := staticInts(x)
	os, ok2 := staticInts(out)
	if !ok || !ok1 || !ok2 || len(xs) > len(os) || (n.Op == "Tile" && len(xs) != len(os)) {
		return nil
	}
	e := make([]elem, ir.NumElements(os))
	for i := range e {
		if n.Op == "Expand" {
			e[i] = xe[broadcastIndex(i, os, xs)]
			continue
		}
		// Tile: output coordinate c maps to c mod input dim.
		idx, stride, rem := 0, 1, i
		for k := len(os) - 1; k >= 0; k-- {
			c := rem % int(os[k])
			rem /= int(os[k])
			idx += (c % int(xs[k])) * stride
			stride *= int(xs[k])
		}
		e[i] = xe[idx]
	}
	return e
}

// foldReduce handles ReduceProd/ReduceSum of a 1-D value over all of it
// (the element count of a shape).
func (s *state) foldReduce(n *ir.Node) []elem {
	x := n.In(0)
	xe, ok := s.values(x)
	if !ok || len(x.Shape) != 1 || x.DType.IsFloat() {
		return nil
	}
	if a := n.In(1); a == nil && n.AttrInt("noop_with_empty_axes", 0) != 0 {
		return nil
	} else if a != nil {
		ax, ok := s.ints(a)
		if !ok || len(ax) > 1 || (len(ax) == 0 && n.AttrInt("noop_with_empty_axes", 0) != 0) || (len(ax) == 1 && ax[0] != 0 && ax[0] != -1) {
			return nil
		}
	}
	acc := int64(0)
	if n.Op == "ReduceProd" {
		acc = 1
	}
	for _, v := range xe {
		if !v.known {
			return nil
		}
		if n.Op == "ReduceProd" {
			acc *= v.i
		} else {
			acc += v.i
		}
	}
	return []elem{intElem(wrapInt(acc, x.DType))}
}
