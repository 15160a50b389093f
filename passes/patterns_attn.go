package passes

import (
	"slices"

	"github.com/weftrt/weft/ir"
)

// attention matches scaled dot-product attention ending at the MatMul n:
//
//	S = MatMul(Q, Kᵀ)                      Q [B,H,Sq,D], Kᵀ [B,Hkv,D,Skv]
//	S = Div(S, c) | Mul(S, c) | Mul(c, S)  (optional; scale 1/c or c)
//	S = Where(cond, S, fill)               (optional; see below)
//	S = Add(S, mask) | Add(mask, S)        (optional; mask does not grow S)
//	P = Softmax(S, axis = -1)
//	Y = MatMul(P, V)                       V [B,Hkv,Skv,Dv]
//
// with Hkv = H or 1, and replaces it by Attention(Q, K, V, mask?; scale).
// Q and Kᵀ may each be scaled by a constant first (Mul(Q, c), as torch
// exports scaled_dot_product_attention); the constants join the scale.
// Attention takes K as [B,Hkv,Skv,D]: when Kᵀ is a Transpose its perm is
// composed with [0,1,3,2] (and the Transpose dropped if nothing else reads
// it); otherwise a Transpose of Kᵀ is inserted.
//
// Where(cond, S, fill), as GPT exports apply their causal mask, matches
// when fill is a scalar constant of −1e9 or below (−Inf, −FLT_MAX) and
// cond a constant bool [.., Sq', Skv'] whose leading dims are 1 and whose
// every row keeps at least one key: then masked scores get weight exactly
// 0 either way. A cond that is the causal triangle (key j kept for query
// i iff j ≤ i + Skv − Sq) becomes is_causal = 1; any other becomes the
// (boolean) mask, unless an additive mask is there too.
func (r *rewriter) attention(n *ir.Node) bool {
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 {
		return false
	}
	y, v := n.Outputs[0], n.Inputs[1]
	sm := r.def(n.Inputs[0], "Softmax")
	if sm == nil || !rank4(y) || !rank4(v) {
		return false
	}
	if ax := sm.AttrInt("axis", -1); ax != -1 && ax != 3 {
		return false
	}
	group := []*ir.Node{n, sm}
	s := sm.In(0)
	var mask *ir.Value
	if add := r.def(s, "Add"); add != nil && len(add.Inputs) == 2 {
		for i := 0; i < 2; i++ {
			if r.def(add.Inputs[i], "Div", "Mul", "MatMul", "Where") != nil && rank4(add.Inputs[i]) && sameType(add.Outputs[0], add.Inputs[i]) {
				s, mask = add.Inputs[i], add.Inputs[1-i]
				group = append(group, add)
				break
			}
		}
		if mask == nil || !mask.DType.IsFloat() || mask.Shape == nil || len(mask.Shape) > 4 {
			return false
		}
	}
	causal := false
	if wh := r.def(s, "Where"); wh != nil && len(wh.Inputs) == 3 && rank4(wh.Inputs[1]) && sameType(wh.Outputs[0], wh.Inputs[1]) {
		isCausal, ok := whereMask(wh, wh.Inputs[1].Shape)
		if !ok || !isCausal && mask != nil {
			return false
		}
		causal = isCausal
		if !isCausal {
			mask = wh.Inputs[0]
		}
		s = wh.Inputs[1]
		group = append(group, wh)
	}
	scale := 1.0
	if sc := r.def(s, "Div", "Mul"); sc != nil && len(sc.Inputs) == 2 {
		c, ok := 0.0, false
		if sc.Op == "Div" {
			c, ok = scalarOf(sc.Inputs[1])
			if ok = ok && c != 0; ok {
				scale, s = 1/c, sc.Inputs[0]
			}
		} else {
			for i := 0; i < 2 && !ok; i++ {
				if c, ok = scalarOf(sc.Inputs[1-i]); ok {
					scale, s = c, sc.Inputs[i]
				}
			}
		}
		if !ok || scale == 0 {
			return false
		}
		group = append(group, sc)
	}
	qk := r.def(s, "MatMul")
	if qk == nil || len(qk.Inputs) != 2 {
		return false
	}
	group = append(group, qk)
	q, kt := qk.Inputs[0], qk.Inputs[1]
	// torch's scaled_dot_product_attention export scales Q and Kᵀ by
	// √scale each: fold those Muls into the scale.
	kReader := qk // the node of the group that reads Kᵀ
	for _, op := range []**ir.Value{&q, &kt} {
		if m := r.def(*op, "Mul"); m != nil && len(m.Inputs) == 2 && r.soleReader(*op) == qk && qk.Inputs[0] != qk.Inputs[1] {
			for i := 0; i < 2; i++ {
				if c, ok := scalarOf(m.Inputs[1-i]); ok && c != 0 && sameType(m.Inputs[i], *op) {
					scale *= c
					*op = m.Inputs[i]
					if op == &kt {
						kReader = m
					}
					group = append(group, m)
					break
				}
			}
		}
	}
	if !rank4(q) || !rank4(kt) || !rank4(s) || !sameType(s, sm.Outputs[0]) || q.DType != y.DType || kt.DType != y.DType || v.DType != y.DType || !q.DType.IsFloat() {
		return false
	}
	qs, ks, vs := q.Shape, kt.Shape, v.Shape
	if !sameDim(qs[0], ks[0]) || !sameDim(qs[0], vs[0]) || !sameDim(ks[1], vs[1]) ||
		!(sameDim(ks[1], qs[1]) || ks[1].Known() && ks[1].Size == 1) ||
		!sameDim(qs[3], ks[2]) || !sameDim(ks[3], vs[2]) {
		return false
	}
	if !r.interior(group, y) {
		return false
	}
	// K = Transpose(Kᵀ, [0,1,3,2]), composed with Kᵀ's own Transpose.
	var nodes []*ir.Node
	src, perm := kt, []int64{0, 1, 3, 2}
	if tr := r.def(kt, "Transpose"); tr != nil && r.soleReader(kt) == kReader {
		if p := tr.AttrInts("perm", nil); len(p) == 4 {
			src, perm = tr.In(0), []int64{p[0], p[1], p[3], p[2]}
			group = append(group, tr)
		}
	}
	k := src
	if !slices.Equal(perm, []int64{0, 1, 2, 3}) {
		kShape := ir.Shape{ks[0], ks[1], ks[3], ks[2]}
		name := ""
		if n.Name != "" {
			name = n.Name + "/k"
		}
		t := r.node("Transpose", name, ir.Attrs{"perm": {Kind: ir.AttrInts, Ints: perm}}, nil, y.DType, kShape, src)
		nodes, k = append(nodes, t), t.Outputs[0]
	}
	inputs := []*ir.Value{q, k, v}
	if mask != nil {
		inputs = append(inputs, mask)
	}
	attrs := ir.Attrs{"scale": {Kind: ir.AttrFloat, Float: float32(scale)}}
	if causal {
		attrs["is_causal"] = &ir.Attr{Kind: ir.AttrInt, Int: 1}
	}
	nodes = append(nodes, r.node("Attention", nameOf(n), attrs, y, 0, nil, inputs...))
	return r.replace(group, y, 1, nodes...)
}

// whereMask checks the Where(cond, S, fill) of an attention pattern (see
// attention) against the scores' shape s [B,H,Sq,Skv]: ok when it can
// become Attention's mask, causal when cond is the causal triangle.
func whereMask(wh *ir.Node, s ir.Shape) (causal, ok bool) {
	cond, fill := wh.Inputs[0], wh.Inputs[2]
	if c, isC := scalarOf(fill); !isC || !(c <= -1e9) || !cond.IsConst() || cond.Const.DType != ir.Bool {
		return false, false
	}
	cs := cond.Const.Shape
	if len(cs) > 4 || !s[2].Known() || !s[3].Known() {
		return false, false
	}
	for len(cs) < 2 {
		cs = append([]int64{1}, cs...)
	}
	for _, d := range cs[:len(cs)-2] {
		if d != 1 {
			return false, false
		}
	}
	sq, skv := s[2].Size, s[3].Size
	rows, cols := cs[len(cs)-2], cs[len(cs)-1]
	if rows != 1 && rows != sq || cols != 1 && cols != skv {
		return false, false
	}
	data := cond.Const.Data
	causal = rows == sq && cols == skv
	for i := int64(0); i < rows; i++ {
		any := false
		for j := int64(0); j < cols; j++ {
			keep := data[i*cols+j] != 0
			any = any || keep
			if keep != (j <= i+skv-sq) {
				causal = false
			}
		}
		if !any {
			return false, false
		}
	}
	return causal, true
}

// rank4 reports whether v has a known rank of 4.
func rank4(v *ir.Value) bool { return v != nil && v.Shape != nil && len(v.Shape) == 4 }
