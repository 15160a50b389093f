package passes

import (
	"slices"

	"github.com/weftrt/weft/ir"
)

// rmsMatch is d / sqrt(mean(d², axes ≥ axis) + eps), as found by rmsOf.
type rmsMatch struct {
	d     *ir.Value
	eps   float64
	axis  int // non-negative
	nodes []*ir.Node
}

// rmsOf matches, ending at n, the forms
//
//	Div(d, Sqrt(Add(ReduceMean(sq(d)), eps)))
//	Mul(d, Reciprocal(Sqrt(Add(ReduceMean(sq(d)), eps))))   (either operand order)
//	Mul(d, Div(1, Sqrt(Add(ReduceMean(sq(d)), eps))))
//
// where sq(d) is Pow(d, 2) or Mul(d, d), the Add takes eps in either order,
// and the ReduceMean keeps its dims and reduces trailing axes.
func (r *rewriter) rmsOf(n *ir.Node) (rmsMatch, bool) {
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 {
		return rmsMatch{}, false
	}
	if n.Op == "Div" {
		return r.rmsTry(n, n.Inputs[0], n.Inputs[1], false)
	}
	if m, ok := r.rmsTry(n, n.Inputs[0], n.Inputs[1], true); ok {
		return m, true
	}
	return r.rmsTry(n, n.Inputs[1], n.Inputs[0], true)
}

func (r *rewriter) rmsTry(n *ir.Node, d, den *ir.Value, recip bool) (rmsMatch, bool) {
	m := rmsMatch{d: d, nodes: []*ir.Node{n}}
	s := den
	if recip {
		if rc := r.def(den, "Reciprocal"); rc != nil {
			m.nodes = append(m.nodes, rc)
			s = rc.In(0)
		} else if dv := r.def(den, "Div"); dv != nil && isScalar(dv.In(0), 1, 1e-6) {
			m.nodes = append(m.nodes, dv)
			s = dv.In(1)
		} else {
			return m, false
		}
	}
	sqrt := r.def(s, "Sqrt")
	if sqrt == nil {
		return m, false
	}
	add := r.def(sqrt.In(0), "Add")
	if add == nil || len(add.Inputs) != 2 {
		return m, false
	}
	for i := 0; i < 2; i++ {
		eps, ok := scalarOf(add.Inputs[1-i])
		mean := r.def(add.Inputs[i], "ReduceMean")
		if !ok || eps < 0 || mean == nil {
			continue
		}
		sq := r.def(mean.In(0), "Pow", "Mul")
		if sq == nil || sq.In(0) != d || len(sq.Inputs) != 2 {
			continue
		}
		if sq.Op == "Pow" && !isScalar(sq.Inputs[1], 2, 0) || sq.Op == "Mul" && sq.Inputs[1] != d {
			continue
		}
		axis, ok := trailingAxis(mean)
		if !ok || !sameType(sq.Outputs[0], d) {
			continue
		}
		m.eps, m.axis = eps, axis
		m.nodes = append(m.nodes, sqrt, add, mean, sq)
		return m, true
	}
	return m, false
}

// trailingAxis returns the first axis of a ReduceMean that keeps its dims
// and reduces exactly the axes axis..rank-1 of its input.
func trailingAxis(mean *ir.Node) (int, bool) {
	x := mean.In(0)
	if x == nil || x.Shape == nil || mean.AttrInt("keepdims", 1) != 1 || len(x.Shape) == 0 || mean.Has("axes") {
		return 0, false
	}
	rank := len(x.Shape)
	a := mean.In(1)
	if a == nil {
		if mean.AttrInt("noop_with_empty_axes", 0) != 0 {
			return 0, false
		}
		return 0, true // all axes
	}
	if !a.IsConst() || a.Const.DType != ir.Int64 || len(a.Const.Shape) != 1 || a.Const.Len() == 0 {
		return 0, false
	}
	axes := make([]int, a.Const.Len())
	for i := range axes {
		ax := int(a.Const.Int64(i))
		if ax < 0 {
			ax += rank
		}
		if ax < 0 || ax >= rank {
			return 0, false
		}
		axes[i] = ax
	}
	slices.Sort(axes)
	for i, ax := range axes {
		if ax != rank-len(axes)+i {
			return 0, false
		}
	}
	return axes[0], true
}

// param returns p as the Scale or B input of a normalization over the axes
// axis.. of x: p has x's dtype and, after leading 1 dims, exactly the
// normalized dims. A constant with extra leading 1 dims is reshaped.
func (r *rewriter) param(p, x *ir.Value, axis int) (*ir.Value, bool) {
	if p == nil || p.DType != x.DType || p.Shape == nil {
		return nil, false
	}
	norm := x.Shape[axis:]
	k := len(p.Shape) - len(norm)
	if k < 0 {
		return nil, false
	}
	for i, d := range p.Shape {
		if i < k && !(d.Known() && d.Size == 1) || i >= k && !sameDim(d, norm[i-k]) {
			return nil, false
		}
	}
	if k == 0 {
		return p, true
	}
	if !p.IsConst() {
		return nil, false
	}
	t := &ir.Tensor{DType: p.Const.DType, Shape: append([]int64{}, p.Const.Shape[k:]...), Data: p.Const.Data}
	return r.constant(p.Name, t), true
}

// affine extends a normalization whose output is y forward over
// Mul(y, γ) (either order) and, when bias, Add(·, β); it returns the new
// output, the parameters (nil when absent) and the nodes taken.
func (r *rewriter) affine(y, x *ir.Value, axis int, bias bool) (out, scale, shift *ir.Value, nodes []*ir.Node) {
	out = y
	step := func(op string) *ir.Value {
		rd := r.soleReader(out)
		if rd == nil || rd.Op != op || len(rd.Outputs) != 1 || !sameType(rd.Outputs[0], x) {
			return nil
		}
		p := other(rd, out)
		if p == nil || p == out {
			return nil
		}
		// a reshaped constant is added only if the step is taken
		if v, ok := r.param(p, x, axis); ok {
			nodes = append(nodes, rd)
			out = rd.Outputs[0]
			return v
		}
		return nil
	}
	scale = step("Mul")
	if bias {
		shift = step("Add")
	}
	return out, scale, shift, nodes
}

// ones returns a constant of x's dtype shaped like x's dims axis.., all 1,
// or nil when those dims are not static.
func (r *rewriter) ones(x *ir.Value, axis int, name string) *ir.Value {
	norm := x.Shape[axis:]
	if !norm.Static() {
		return nil
	}
	t := ir.NewTensor(x.DType, norm.Ints())
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, 1)
	}
	return r.constant(name, t)
}

func normAttrs(axis, rank int, eps float64) ir.Attrs {
	return ir.Attrs{
		"axis":    {Kind: ir.AttrInt, Int: int64(axis - rank)},
		"epsilon": {Kind: ir.AttrFloat, Float: float32(eps)},
	}
}

// layerNorm matches, ending at the Div or Mul n,
//
//	d = Sub(x, ReduceMean(x)); rmsOf(d) [· γ] [+ β]
//
// (both ReduceMeans over the same trailing axes) and replaces it by
// LayerNormalization(x, γ or ones, β?).
func (r *rewriter) layerNorm(n *ir.Node) bool {
	m, ok := r.rmsOf(n)
	if !ok {
		return false
	}
	sub := r.def(m.d, "Sub")
	if sub == nil || len(sub.Inputs) != 2 {
		return false
	}
	x := sub.Inputs[0]
	mean := r.def(sub.Inputs[1], "ReduceMean")
	if mean == nil || !floatTyped(x) || !sameType(n.Outputs[0], x) || !sameType(m.d, x) {
		return false
	}
	if axis, ok := trailingAxis(mean); !ok || axis != m.axis || mean.In(0) != x {
		return false
	}
	group := append(m.nodes, sub, mean)
	if !r.interior(group, n.Outputs[0]) {
		return false
	}
	out, scale, shift, more := r.affine(n.Outputs[0], x, m.axis, true)
	last := n
	if len(more) > 0 {
		last = more[len(more)-1]
	}
	if scale == nil {
		if scale = r.ones(x, m.axis, nameOf(last)+"_scale"); scale == nil {
			return false
		}
	}
	attrs := normAttrs(m.axis, len(x.Shape), m.eps)
	if x.DType == ir.Float64 {
		attrs["stash_type"] = &ir.Attr{Kind: ir.AttrInt, Int: 11}
	}
	inputs := []*ir.Value{x, scale}
	if shift != nil {
		inputs = append(inputs, shift)
	}
	ln := r.node("LayerNormalization", nameOf(last), attrs, out, 0, nil, inputs...)
	return r.replace(append(group, more...), out, 1, ln)
}

// rmsNorm matches rmsOf(x) [· γ] ending at n and replaces it by
// RMSNormalization(x, γ or ones).
func (r *rewriter) rmsNorm(n *ir.Node) bool {
	m, ok := r.rmsOf(n)
	x := m.d
	if !ok || !floatTyped(x) || !sameType(n.Outputs[0], x) || !r.interior(m.nodes, n.Outputs[0]) {
		return false
	}
	out, scale, _, more := r.affine(n.Outputs[0], x, m.axis, false)
	last := n
	if len(more) > 0 {
		last = more[0]
	}
	if scale == nil {
		if scale = r.ones(x, m.axis, nameOf(last)+"_scale"); scale == nil {
			return false
		}
	}
	rms := r.node("RMSNormalization", nameOf(last), normAttrs(m.axis, len(x.Shape), m.eps), out, 0, nil, x, scale)
	return r.replace(append(m.nodes, more...), out, 1, rms)
}

// interior reports whether every output of group except keep is read only
// inside the group (replace checks it again; matchers check first so that
// they add no constants for a group that cannot be replaced).
func (r *rewriter) interior(group []*ir.Node, keep *ir.Value) bool {
	in := map[*ir.Node]bool{}
	for _, n := range group {
		if !r.live(n) {
			return false
		}
		in[n] = true
	}
	for _, n := range group {
		for _, o := range n.Outputs {
			if o == keep || o == nil {
				continue
			}
			if len(r.uses.outputs[o]) > 0 {
				return false
			}
			for _, rd := range r.readers(o) {
				if !in[rd] {
					return false
				}
			}
		}
	}
	return true
}
