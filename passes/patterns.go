package passes

import (
	"math"

	"github.com/weftrt/weft/ir"
)

// RecognizePatterns runs the patterns pass on g alone (after InferShapes).
func RecognizePatterns(g *ir.Graph) (Change, error) { return patternsPass(g, NewContext(g)) }

// patternsPass recognizes the decomposed forms that ONNX exporters write for
// common layers and replaces each by the one core op that means the same:
//
//	ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div [, Mul γ] [, Add β]  -> LayerNormalization
//	Pow, ReduceMean, Add, Sqrt, Reciprocal, Mul [, Mul γ]                 -> RMSNormalization
//	x·0.5·(1+erf(x/√2)), 0.5·x·(1+tanh(√(2/π)·(x+0.044715·x³)))           -> Gelu
//	Mul(x, Sigmoid(x))                                                    -> SiLU
//	MatMul(Q, Kᵀ), Div/Mul scale, [Add mask], Softmax, MatMul(·, V)       -> Attention
//
// (with the orderings and variants documented at each matcher). A pattern
// matches only when every intermediate value is read by the pattern alone
// (never by another node or as a graph output), constants have the exact
// values the formula needs, and the dtypes and shapes are known and agree.
// The new node takes over the output value of the last node it replaces, so
// names, graph outputs and readers stay as they were. The change counts the
// replaced nodes as Fused (minus the new fused nodes) and helper nodes
// (a Transpose for K) as Added; constants the new nodes need are counted as
// added constants. Constants the old nodes read are left to dce.
func patternsPass(g *ir.Graph, _ *Context) (Change, error) {
	r := newRewriter(g)
	r.run(func(n *ir.Node) bool {
		switch n.Op {
		case "Div", "Mul":
			return r.layerNorm(n) || r.rmsNorm(n) || r.gelu(n) || r.silu(n)
		case "MatMul":
			return r.attention(n)
		}
		return false
	})
	return r.ch, nil
}

// rewriter holds the use lists of a whole model while one pass replaces
// groups of nodes, graph by graph.
type rewriter struct {
	top     *ir.Graph
	uses    *Uses // mutable: new nodes are added as readers
	dead    map[*ir.Node]bool
	g       *ir.Graph // the graph being rewritten
	pos     map[*ir.Node]int
	inserts map[int][]*ir.Node // slot -> new nodes placed after it
	ch      Change
}

func newRewriter(g *ir.Graph) *rewriter {
	return &rewriter{top: g, uses: ComputeUses(g), dead: map[*ir.Node]bool{}}
}

// run calls match on every node of every graph of the model, in order, and
// then puts the new nodes in place. match returns whether it rewrote. The
// bodies of Fused nodes are left alone: they are kernels, not graph.
func (r *rewriter) run(match func(n *ir.Node) bool) {
	var walk func(sg *ir.Graph)
	walk = func(sg *ir.Graph) {
		r.rewrite(sg, match)
		for _, n := range sg.Nodes {
			if n.Op == "Fused" {
				continue
			}
			for _, s := range n.Subgraphs() {
				walk(s)
			}
		}
	}
	walk(r.top)
}

func (r *rewriter) rewrite(sg *ir.Graph, match func(n *ir.Node) bool) {
	r.g = sg
	r.pos = make(map[*ir.Node]int, len(sg.Nodes))
	r.inserts = map[int][]*ir.Node{}
	for i, n := range sg.Nodes {
		r.pos[n] = i
	}
	for i := 0; i < len(sg.Nodes); i++ {
		if n := sg.Nodes[i]; !r.dead[n] {
			match(n)
		}
		for j := 0; j < len(r.inserts[i]); j++ { // new nodes may match again
			if m := r.inserts[i][j]; !r.dead[m] {
				match(m)
			}
		}
	}
	if len(r.inserts) == 0 {
		return
	}
	var nodes []*ir.Node
	for i, n := range sg.Nodes {
		if !r.dead[n] {
			nodes = append(nodes, n)
		}
		for _, m := range r.inserts[i] {
			if !r.dead[m] {
				nodes = append(nodes, m)
			}
		}
	}
	sg.Nodes = nodes
}

// live reports whether n is a live node of the graph being rewritten.
func (r *rewriter) live(n *ir.Node) bool {
	if n == nil || r.dead[n] || len(n.Outputs) == 0 || n.Outputs[0] == nil || n.Outputs[0].Graph != r.g {
		return false
	}
	_, ok := r.pos[n]
	return ok
}

// def returns the live producer of v in the graph being rewritten when its
// op is one of ops.
func (r *rewriter) def(v *ir.Value, ops ...string) *ir.Node {
	if v == nil || !r.live(v.Producer) {
		return nil
	}
	for _, op := range ops {
		if v.Producer.Op == op {
			return v.Producer
		}
	}
	return nil
}

// readers returns the live nodes that read v.
func (r *rewriter) readers(v *ir.Value) []*ir.Node {
	var out []*ir.Node
	for _, n := range r.uses.readers[v] {
		if !r.dead[n] {
			out = append(out, n)
		}
	}
	return out
}

// soleReader returns the one node that reads v (perhaps more than once)
// when v is no graph output, else nil.
func (r *rewriter) soleReader(v *ir.Value) *ir.Node {
	if len(r.uses.outputs[v]) > 0 {
		return nil
	}
	rs := r.readers(v)
	if len(rs) == 0 {
		return nil
	}
	for _, n := range rs[1:] {
		if n != rs[0] {
			return nil
		}
	}
	if !r.live(rs[0]) {
		return nil
	}
	return rs[0]
}

// replace replaces the nodes of group (live nodes of the current graph) by
// the new nodes, which end with the one that takes over keep, the output of
// the group. It checks that every other output of the group is read only
// inside the group and that keep's producer comes last, and returns false
// (changing nothing) otherwise. The new nodes go where that producer was. fused is how many of the
// new nodes are fused ops (the rest count as Added).
func (r *rewriter) replace(group []*ir.Node, keep *ir.Value, fused int, nodes ...*ir.Node) bool {
	if keep == nil || !r.interior(group, keep) {
		return false
	}
	// keep's producer must be the last node of the group: the new nodes go
	// there, before any reader of keep.
	last, found := r.pos[keep.Producer], false
	for _, n := range group {
		if r.pos[n] > last {
			return false
		}
		found = found || keep.Producer == n
	}
	if !found {
		return false
	}
	for _, n := range group {
		r.dead[n] = true
	}
	for _, m := range nodes {
		for _, v := range m.Inputs {
			if v != nil {
				r.uses.readers[v] = append(r.uses.readers[v], m)
			}
		}
		for _, o := range m.Outputs {
			o.Producer = m
		}
		r.pos[m] = last
	}
	r.inserts[last] = append(r.inserts[last], nodes...)
	r.ch.Fused += len(group) - fused
	r.ch.Added += len(nodes) - fused
	return true
}

// node returns a new node (not yet placed); out is its output value, or a
// fresh value of the current graph with the given type when nil.
func (r *rewriter) node(op, name string, attrs ir.Attrs, out *ir.Value, dt ir.DType, shape ir.Shape, inputs ...*ir.Value) *ir.Node {
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	if out == nil {
		out = r.g.NewValue("", dt, shape)
	}
	return &ir.Node{Name: name, Op: op, Inputs: inputs, Outputs: []*ir.Value{out}, Attrs: attrs}
}

// constant adds a constant to the current graph (counted in the change).
func (r *rewriter) constant(name string, t *ir.Tensor) *ir.Value {
	r.ch.Consts--
	r.ch.BytesSaved -= int64(len(t.Data))
	return r.g.AddConst(name, t)
}

// scalarOf returns the value of v when it is a numeric constant whose
// elements are all equal and whose dims are all 1 (so that it broadcasts
// without growing anything).
func scalarOf(v *ir.Value) (float64, bool) {
	if !v.IsConst() || !v.Const.DType.IsFloat() && !v.Const.DType.IsInt() || v.Const.Len() < 1 {
		return 0, false
	}
	for _, d := range v.Const.Shape {
		if d != 1 {
			return 0, false
		}
	}
	return v.Const.Float64(0), true
}

// isScalar reports whether v is such a constant equal to want within the
// relative tolerance tol.
func isScalar(v *ir.Value, want, tol float64) bool {
	c, ok := scalarOf(v)
	return ok && math.Abs(c-want) <= tol*math.Abs(want)
}

// other returns the operand of the binary node n that is not v, or nil when
// v is not an operand.
func other(n *ir.Node, v *ir.Value) *ir.Value {
	if len(n.Inputs) != 2 {
		return nil
	}
	switch v {
	case n.Inputs[0]:
		return n.Inputs[1]
	case n.Inputs[1]:
		return n.Inputs[0]
	}
	return nil
}

// sameType reports whether a and b have the same valid dtype and the same
// known shape.
func sameType(a, b *ir.Value) bool {
	return a != nil && b != nil && a.DType.Valid() && a.DType == b.DType && a.Shape != nil && a.Shape.Equal(b.Shape)
}

// floatTyped reports whether v has a float dtype and a known rank.
func floatTyped(v *ir.Value) bool {
	return v != nil && v.DType.IsFloat() && v.Shape != nil
}

// nameOf names a node that replaces the group ending with n.
func nameOf(n *ir.Node) string { return n.Name }
