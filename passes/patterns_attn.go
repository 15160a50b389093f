package passes

import (
	"slices"

	"github.com/weftrt/weft/ir"
)

// attention matches scaled dot-product attention ending at the MatMul n:
//
//	S = MatMul(Q, Kᵀ)                      Q [B,H,Sq,D], Kᵀ [B,Hkv,D,Skv]
//	S = Div(S, c) | Mul(S, c) | Mul(c, S)  (optional; scale 1/c or c)
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
			if r.def(add.Inputs[i], "Div", "Mul", "MatMul") != nil && rank4(add.Inputs[i]) && sameType(add.Outputs[0], add.Inputs[i]) {
				s, mask = add.Inputs[i], add.Inputs[1-i]
				group = append(group, add)
				break
			}
		}
		if mask == nil || !mask.DType.IsFloat() || mask.Shape == nil || len(mask.Shape) > 4 {
			return false
		}
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
	nodes = append(nodes, r.node("Attention", nameOf(n), attrs, y, 0, nil, inputs...))
	return r.replace(group, y, 1, nodes...)
}

// rank4 reports whether v has a known rank of 4.
func rank4(v *ir.Value) bool { return v != nil && v.Shape != nil && len(v.Shape) == 4 }
