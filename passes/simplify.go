package passes

import (
	"github.com/weftrt/weft/ir"
)

// simplifyPass applies algebraic identities that make a node unnecessary or
// shorten a chain, without changing any result:
//
//	Reshape/Flatten/Squeeze/Unsqueeze chain back to x's own shape  -> x
//	Reshape(any of those(x), s)                    -> Reshape(x, s)
//	Reshape(x, Concat(dims of x's own shape, c))   -> Reshape(x, [0,...,c])
//	Transpose(Transpose(x, p), q)                  -> Transpose(x, p∘q), or x
//	x*1, 1*x, x+0, 0+x, x-0, x/1 (constants)       -> x
//	Cast(x) to x's dtype, CastLike likewise        -> x
//	Cast(Cast(x, T), U), T holding every x exactly -> Cast(x, U), or x
//	Dropout(x) in inference, mask unused           -> x
//	Expand(x) to x's shape, Concat(x)              -> x
//
// A node is bypassed only when its output has exactly x's dtype and shape
// (broadcasting against a constant 1 can grow a shape, and then the node
// stays). Graph outputs keep their names: the bypassing value takes the
// name over, or the node stays (see redirector). Nodes left unused are
// removed at the end.
func simplifyPass(g *ir.Graph, ctx *Context) (Change, error) {
	sp := &simplifier{uses: ctx.Uses(), r: newRedirector(ctx.Uses())}
	g.Walk(func(sg *ir.Graph) {
		sp.g = sg
		for _, n := range sg.Nodes {
			sp.r.rewire(n)
			if len(n.Outputs) > 0 && n.Outputs[0] != nil {
				sp.node(n)
			}
		}
	})
	ch := sp.ch
	ch.Rewired += sp.r.apply(g)
	if !ch.Changed() {
		return ch, nil
	}
	dead, err := dcePass(g, ctx)
	ch.Add(dead)
	return ch, err
}

type simplifier struct {
	g    *ir.Graph // the graph being walked
	uses *Uses
	r    *redirector
	ch   Change
}

// bypass makes the readers of n's first output read x instead.
func (sp *simplifier) bypass(n *ir.Node, x *ir.Value) bool {
	return len(n.Outputs) >= 1 && sp.r.replace(n.Outputs[0], x)
}

var reshapeLike = []string{"Reshape", "Flatten", "Squeeze", "Unsqueeze"}

func (sp *simplifier) node(n *ir.Node) {
	y, x := n.Outputs[0], n.In(0)
	if x == nil {
		return
	}
	switch n.Op {
	case "Reshape", "Flatten", "Squeeze", "Unsqueeze":
		// These only relabel a row-major buffer: a chain of them that ends
		// in the shape it started from is the identity.
		for v, depth := x, 0; v != nil && depth < 8; depth++ {
			if sp.bypass(n, v) {
				return
			}
			p := producer(v, reshapeLike...)
			if p == nil {
				break
			}
			v = sp.r.resolve(p.In(0))
		}
		if n.Op == "Reshape" {
			sp.reshapeTarget(n)
			sp.reshapeChain(n)
		}
	case "Transpose":
		sp.transpose(n)
	case "Add", "Mul":
		neutral := 0.0
		if n.Op == "Mul" {
			neutral = 1
		}
		if len(n.Inputs) == 2 && constAll(n.In(1), neutral) {
			sp.bypass(n, x)
		} else if len(n.Inputs) == 2 && constAll(x, neutral) {
			sp.bypass(n, n.In(1))
		}
	case "Sub", "Div":
		neutral := 0.0
		if n.Op == "Div" {
			neutral = 1
		}
		if len(n.Inputs) == 2 && constAll(n.In(1), neutral) {
			sp.bypass(n, x)
		}
	case "Cast", "CastLike":
		if y.DType == x.DType {
			sp.bypass(n, x)
			return
		}
		if p := producer(x, "Cast", "CastLike"); p != nil && len(p.Outputs) == 1 {
			src := sp.r.resolve(p.In(0))
			if src == nil || !exactCast(src.DType, x.DType) {
				return
			}
			if y.DType == src.DType {
				sp.bypass(n, src)
			} else {
				n.Inputs[0] = src
				sp.ch.Rewired++
			}
		}
	case "Dropout":
		mode := n.In(2)
		if (mode == nil || (mode.IsConst() && mode.Const.Len() == 1 && !mode.Const.Bool(0))) &&
			(len(n.Outputs) < 2 || n.Outputs[1] == nil || sp.uses.Count(n.Outputs[1]) == 0) {
			sp.bypass(n, x)
		}
	case "Expand":
		sp.bypass(n, x)
	case "Concat":
		if len(n.Inputs) == 1 {
			sp.bypass(n, x)
		}
	}
}

// reshapeChain makes Reshape(Reshape/Flatten/Squeeze/Unsqueeze(x), s) read x
// directly. A 0 in s copies a dim of the reshaped input, so s must be a
// constant without zeros (or allowzero set); a static output shape can
// stand in for s.
func (sp *simplifier) reshapeChain(n *ir.Node) {
	p := producer(n.In(0), reshapeLike...)
	if p == nil || len(n.Inputs) < 2 || sp.r.resolve(p.In(0)) == nil {
		return
	}
	s, y := n.In(1), n.Outputs[0]
	ok := s.IsConst() && (n.AttrInt("allowzero", 0) != 0 || !hasZero(s.Const))
	if !ok {
		if !y.Shape.Static() {
			return
		}
		sp.ch.Consts--
		sp.ch.BytesSaved -= int64(8 * len(y.Shape))
		n.Inputs[1] = sp.g.AddConst(prefix(n)+"_shape", ir.FromInt64([]int64{int64(len(y.Shape))}, y.Shape.Ints()))
	}
	n.Inputs[0] = sp.r.resolve(p.In(0))
	sp.ch.Rewired++
}

// reshapeTarget turns the target exporters compute for a Reshape that
// keeps some leading dims, Concat(Unsqueeze(Gather(Shape(x), i)), ...,
// constants), into one constant: element i of the target is dim i of x
// itself, which a 0 says (allowzero unset: "copy the input's dim"). The
// shape arithmetic then dies even when those dims are symbolic.
func (sp *simplifier) reshapeTarget(n *ir.Node) {
	x, t := sp.r.resolve(n.In(0)), n.In(1)
	if n.AttrInt("allowzero", 0) != 0 || x == nil || x.Shape == nil || t == nil || t.IsConst() || len(t.Shape) != 1 {
		return
	}
	cat := producer(t, "Concat")
	if cat == nil || len(cat.Outputs) != 1 {
		return
	}
	var dims []int64
	for _, p := range cat.Inputs {
		d, ok := sp.targetPiece(sp.r.resolve(p), x, len(dims))
		if !ok {
			return
		}
		dims = append(dims, d...)
	}
	if int64(len(dims)) != t.Shape.NumElements() {
		return
	}
	n.Inputs[1] = sp.g.AddConst(prefix(n)+"_shape", ir.FromInt64([]int64{int64(len(dims))}, dims))
	sp.ch.Rewired++
	sp.ch.Consts--
	sp.ch.BytesSaved -= int64(8 * len(dims))
}

// targetPiece returns the elements of one Concat operand of a Reshape
// target starting at position pos: the values of a 1-D integer constant, or
// 0 for Unsqueeze(Gather(Shape(x), pos), 0), Gather(Shape(x), [pos]) and
// each element of Slice(Shape(x), pos, pos+k).
func (sp *simplifier) targetPiece(p, x *ir.Value, pos int) ([]int64, bool) {
	if p == nil || p.Shape == nil || len(p.Shape) != 1 {
		return nil, false
	}
	if p.IsConst() {
		if !p.DType.IsInt() {
			return nil, false
		}
		return p.Const.Int64s(), true
	}
	if sl := producer(p, "Slice"); sl != nil {
		return sp.shapeSlice(sl, p, x, pos)
	}
	g := p
	if u := producer(p, "Unsqueeze"); u != nil {
		g = sp.r.resolve(u.In(0))
		if g == nil || g.Shape == nil || len(g.Shape) != 0 {
			return nil, false // Unsqueeze of a scalar is [v] whatever the axis
		}
	}
	gat := producer(g, "Gather")
	if gat == nil || gat.AttrInt("axis", 0) != 0 || !gat.In(1).IsConst() || gat.In(1).Const.Len() != 1 {
		return nil, false
	}
	sh := producer(sp.r.resolve(gat.In(0)), "Shape")
	if sh == nil || sp.r.resolve(sh.In(0)) != x || sh.Has("start") || sh.Has("end") {
		return nil, false
	}
	k := gat.In(1).Const.Int64(0)
	if k < 0 {
		k += int64(len(x.Shape))
	}
	if k != int64(pos) {
		return nil, false
	}
	return []int64{0}, true
}

// shapeSlice handles a Slice piece p of a Reshape target (see targetPiece).
func (sp *simplifier) shapeSlice(sl *ir.Node, p, x *ir.Value, pos int) ([]int64, bool) {
	sh := producer(sp.r.resolve(sl.In(0)), "Shape")
	if sh == nil || sp.r.resolve(sh.In(0)) != x || sh.Has("start") || sh.Has("end") || !p.Shape[0].Known() {
		return nil, false
	}
	one := func(i int, def int64) (int64, bool) {
		v := sl.In(i)
		if v == nil {
			return def, true
		}
		if !v.IsConst() || v.Const.Len() != 1 || !v.DType.IsInt() {
			return 0, false
		}
		return v.Const.Int64(0), true
	}
	start, ok1 := one(1, 0)
	_, ok2 := one(2, 0) // the end only bounds what p.Shape already says
	axis, ok3 := one(3, 0)
	step, ok4 := one(4, 1)
	if !ok1 || !ok2 || !ok3 || !ok4 || (axis != 0 && axis != -1) || step != 1 {
		return nil, false
	}
	rank := int64(len(x.Shape))
	if start < 0 {
		start += rank
	}
	k := p.Shape[0].Size
	if start != int64(pos) || start+k > rank {
		return nil, false
	}
	return make([]int64, k), true
}

func hasZero(t *ir.Tensor) bool {
	for i := 0; i < t.Len(); i++ {
		if t.Int64(i) == 0 {
			return true
		}
	}
	return false
}

// perm returns the permutation of a Transpose of the given rank.
func perm(n *ir.Node, rank int) ([]int64, bool) {
	p := n.AttrInts("perm", nil)
	if p == nil {
		p = make([]int64, rank)
		for i := range p {
			p[i] = int64(rank - 1 - i)
		}
	}
	if len(p) != rank {
		return nil, false
	}
	seen := make([]bool, rank)
	for _, a := range p {
		if a < 0 || a >= int64(rank) || seen[a] {
			return nil, false
		}
		seen[a] = true
	}
	return p, true
}

func isIdentityPerm(p []int64) bool {
	for i, a := range p {
		if a != int64(i) {
			return false
		}
	}
	return true
}

// transpose removes an identity Transpose and composes Transpose chains:
// z = T(T(x, p), q) has z.shape[i] = x.shape[p[q[i]]], so it is T(x, p∘q).
func (sp *simplifier) transpose(n *ir.Node) {
	x := n.In(0)
	if x.Shape == nil {
		return
	}
	q, ok := perm(n, len(x.Shape))
	if !ok {
		return
	}
	if isIdentityPerm(q) {
		sp.bypass(n, x)
		return
	}
	p := producer(x, "Transpose")
	if p == nil || len(p.Outputs) != 1 {
		return
	}
	src := sp.r.resolve(p.In(0))
	if src == nil || src.Shape == nil {
		return
	}
	pp, ok := perm(p, len(src.Shape))
	if !ok || len(pp) != len(q) {
		return
	}
	c := make([]int64, len(q))
	for i := range q {
		c[i] = pp[q[i]]
	}
	if isIdentityPerm(c) {
		sp.bypass(n, src)
		return
	}
	n.Attrs = cloneAttrs(n.Attrs)
	n.Attrs["perm"] = &ir.Attr{Kind: ir.AttrInts, Ints: c}
	n.Inputs[0] = src
	sp.ch.Rewired++
}

// exactCast reports whether every value of dtype from converts to dtype to
// and back unchanged (to is at least as wide, in the right kind).
func exactCast(from, to ir.DType) bool {
	if from == to {
		return true
	}
	// The widest integer magnitude each float type holds exactly is 2^(mantissa+1).
	floatBits := map[ir.DType]int{ir.Float16: 11, ir.BFloat16: 8, ir.Float32: 24, ir.Float64: 53}
	intBits := func(d ir.DType) (int, bool) { // magnitude bits, signedness
		switch d {
		case ir.Bool:
			return 1, false
		case ir.Uint8:
			return 8, false
		case ir.Int8:
			return 7, true
		case ir.Uint16:
			return 16, false
		case ir.Int16:
			return 15, true
		case ir.Uint32:
			return 32, false
		case ir.Int32:
			return 31, true
		case ir.Uint64:
			return 64, false
		case ir.Int64:
			return 63, true
		}
		return 0, false
	}
	switch {
	case from.IsFloat() && to.IsFloat():
		// f16 and bf16 do not contain each other; f32 holds both; f64 all.
		return to == ir.Float64 || (to == ir.Float32 && from != ir.Float64)
	case from.IsFloat():
		return false
	case to.IsFloat():
		b, _ := intBits(from)
		return b > 0 && b <= floatBits[to]
	case to == ir.Bool:
		return from == ir.Bool
	}
	fb, fs := intBits(from)
	tb, ts := intBits(to)
	if fb == 0 || tb == 0 {
		return false
	}
	if fs && !ts {
		return false // negative values do not survive an unsigned type
	}
	return fb <= tb
}
