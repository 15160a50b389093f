package passes

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// HFuse runs the hfuse pass on g alone (after InferShapes and Fuse).
func HFuse(g *ir.Graph) (Change, error) { return hfusePass(g, NewContext(g)) }

// hfuseMinMembers is the smallest group hfuse merges.
const hfuseMinMembers = 2

// hfusePass merges MatMuls that read the same input with constant weights
// (horizontal fusion), as the Q, K and V projections of an attention block:
//
//	Y1 = FusedMatMul(X, W1, b1) ... Yn = FusedMatMul(X, Wn, bn)
//	  -> Y = FusedMatMul(X, [W1|...|Wn], [b1|...|bn]); Y1..Yn = Split(Y, [N1..Nn], axis=-1)
//
// so that X is packed once and the whole product is one parallel GEMM (one
// hand-off to the workers instead of n). A group is the float32 MatMul and
// FusedMatMul nodes of one graph with the same input X (input 0), a 2-D
// constant weight [K, Ni] of the same K read by that node alone, the same
// activation attributes, and either all a constant bias of exactly [Ni]
// elements ([Ni] or [1, ..., Ni], read by that node alone) or none; a
// MatMul is a FusedMatMul without bias and activation. The merged node and
// the Split go where the group's first node was (every input is X or a
// constant, so they may move up); the Split's outputs are the original
// output values, so names, graph outputs and readers are unchanged. The
// weights and biases left unused are removed by a later dce. The merge
// saves n-1 packings of X and hand-offs to the pool per group but the Split
// copies Y once (the runtime has no views): on BERT-4l (the Q, K and V
// projections, M=128, 3×768 columns) the net effect measured within noise
// (±2%) at 1 and 2 threads.
func hfusePass(g *ir.Graph, ctx *Context) (Change, error) {
	uses := ctx.Uses()
	var ch Change
	var err error
	g.Walk(func(sg *ir.Graph) {
		if err != nil {
			return
		}
		var c Change
		c, err = hfuseGraph(sg, uses)
		ch.Add(c)
	})
	return ch, err
}

// hfuseMember is one MatMul of a candidate group.
type hfuseMember struct {
	n       *ir.Node
	w, bias *ir.Tensor // bias nil: none
}

// hfuseCandidate returns n as a group member, or false.
func hfuseCandidate(n *ir.Node, uses *Uses) (hfuseMember, bool) {
	if n.Op != "MatMul" && n.Op != "FusedMatMul" || len(n.Outputs) != 1 || len(n.Inputs) < 2 || len(n.Inputs) > 3 {
		return hfuseMember{}, false
	}
	x, w, y := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if x == nil || x.DType != ir.Float32 || y == nil || y.DType != ir.Float32 || len(y.Shape) == 0 || x.Shape == nil {
		return hfuseMember{}, false
	}
	if !w.IsConst() || w.DType != ir.Float32 || len(w.Const.Shape) != 2 || !soleUse(w, n, uses) {
		return hfuseMember{}, false
	}
	N := w.Const.Shape[1]
	if last := y.Shape[len(y.Shape)-1]; !last.Known() || last.Size != N || N == 0 {
		return hfuseMember{}, false
	}
	m := hfuseMember{n: n, w: w.Const}
	if len(n.Inputs) == 3 && n.Inputs[2] != nil {
		b := n.Inputs[2]
		if !b.IsConst() || b.DType != ir.Float32 || !soleUse(b, n, uses) || len(b.Const.Shape) == 0 ||
			b.Const.Shape[len(b.Const.Shape)-1] != N || ir.NumElements(b.Const.Shape) != N || len(b.Const.Shape) > len(y.Shape) {
			return hfuseMember{}, false
		}
		m.bias = b.Const
	}
	return m, true
}

// soleUse reports whether n is the only reader of v and v is no graph
// output.
func soleUse(v *ir.Value, n *ir.Node, uses *Uses) bool {
	if len(uses.outputs[v]) > 0 {
		return false
	}
	for _, r := range uses.readers[v] {
		if r != n {
			return false
		}
	}
	return true
}

// hfuseAttrs returns the activation attributes of a member (nil for none).
func hfuseAttrs(n *ir.Node) ir.Attrs {
	if n.Op == "MatMul" || len(n.Attrs) == 0 {
		return nil
	}
	return n.Attrs
}

// sameGroup reports whether members a and b may be merged.
func sameGroup(a, b hfuseMember) bool {
	return a.n.Inputs[0] == b.n.Inputs[0] && a.w.Shape[0] == b.w.Shape[0] && (a.bias == nil) == (b.bias == nil) &&
		sameScalarAttrs(hfuseAttrs(a.n), hfuseAttrs(b.n))
}

// sameScalarAttrs reports whether a and b have the same attributes, all of
// them ints, floats or strings (anything else: false).
func sameScalarAttrs(a, b ir.Attrs) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || x.Kind != y.Kind {
			return false
		}
		switch x.Kind {
		case ir.AttrInt:
			ok = x.Int == y.Int
		case ir.AttrFloat:
			ok = x.Float == y.Float
		case ir.AttrString:
			ok = x.Str == y.Str
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return true
}

// hfuseGraph merges the groups of one graph.
func hfuseGraph(sg *ir.Graph, uses *Uses) (Change, error) {
	var groups [][]hfuseMember
	for _, n := range sg.Nodes {
		if n.Op == "Fused" {
			continue
		}
		m, ok := hfuseCandidate(n, uses)
		if !ok {
			continue
		}
		placed := false
		for i, gr := range groups {
			if sameGroup(gr[0], m) {
				groups[i] = append(gr, m)
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, []hfuseMember{m})
		}
	}
	var ch Change
	at := map[*ir.Node][]*ir.Node{} // first member -> its replacement
	dead := map[*ir.Node]bool{}
	for _, gr := range groups {
		if len(gr) < hfuseMinMembers {
			continue
		}
		nodes, c, err := hfuseMerge(sg, gr)
		if err != nil {
			return ch, err
		}
		ch.Add(c)
		at[gr[0].n] = nodes
		for _, m := range gr {
			dead[m.n] = true
		}
	}
	if len(at) == 0 {
		return ch, nil
	}
	out := make([]*ir.Node, 0, len(sg.Nodes))
	for _, n := range sg.Nodes {
		out = append(out, at[n]...)
		if !dead[n] {
			out = append(out, n)
		}
	}
	sg.Nodes = out
	return ch, nil
}

// hfuseMerge builds the merged node and the Split of a group.
func hfuseMerge(sg *ir.Graph, gr []hfuseMember) ([]*ir.Node, Change, error) {
	first := gr[0].n
	K := gr[0].w.Shape[0]
	var total int64
	sizes := make([]int64, len(gr))
	for i, m := range gr {
		sizes[i] = m.w.Shape[1]
		total += sizes[i]
	}
	w := make([]float32, K*total)
	var bias []float32
	if gr[0].bias != nil {
		bias = make([]float32, 0, total)
	}
	off := int64(0)
	for _, m := range gr {
		src, n := m.w.Float32s(), m.w.Shape[1]
		if int64(len(src)) != K*n {
			return nil, Change{}, fmt.Errorf("hfuse: node %q: weight holds %d floats, shape %v", m.n.Name, len(src), m.w.Shape)
		}
		for k := int64(0); k < K; k++ {
			copy(w[k*total+off:k*total+off+n], src[k*n:(k+1)*n])
		}
		off += n
		if bias != nil {
			bias = append(bias, m.bias.Float32s()...)
		}
	}
	var ch Change
	addConst := func(name string, t *ir.Tensor) *ir.Value {
		ch.Consts--
		ch.BytesSaved -= int64(len(t.Data))
		return sg.AddConst(name, t)
	}
	name := first.Name + "/hfuse"
	inputs := []*ir.Value{first.Inputs[0], addConst(name+"/weight", ir.FromFloat32([]int64{K, total}, w))}
	op := "MatMul"
	var attrs ir.Attrs
	if bias != nil || hfuseAttrs(first) != nil {
		op, attrs = "FusedMatMul", cloneAttrs(hfuseAttrs(first))
	}
	if bias != nil {
		inputs = append(inputs, addConst(name+"/bias", ir.FromFloat32([]int64{total}, bias)))
	}
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	y0 := first.Outputs[0]
	shape := y0.Shape.Clone()
	shape[len(shape)-1] = ir.Dim{Size: total}
	y := sg.NewValue("", ir.Float32, shape)
	mm := &ir.Node{Name: name, Op: op, Inputs: inputs, Outputs: []*ir.Value{y}, Attrs: attrs}
	y.Producer = mm
	split := &ir.Node{
		Name:   name + "/split",
		Op:     "Split",
		Inputs: []*ir.Value{y, addConst(name+"/sizes", ir.FromInt64([]int64{int64(len(sizes))}, sizes))},
		Attrs:  ir.Attrs{"axis": &ir.Attr{Kind: ir.AttrInt, Int: int64(len(shape) - 1)}},
	}
	for _, m := range gr {
		o := m.n.Outputs[0]
		o.Producer = split
		split.Outputs = append(split.Outputs, o)
	}
	ch.Fused += len(gr) - 1
	ch.Added++ // the Split
	return []*ir.Node{mm, split}, ch, nil
}
