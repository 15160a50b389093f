package passes

import "github.com/weftrt/weft/ir"

// Shared helpers of the optimization passes (fold, simplify, cse, convbn,
// patterns, fuse): facts about values and a redirector that redirects uses
// while keeping graph outputs and their names intact.

// SingleUser returns the one node that reads v, or nil when v is read by
// more or fewer nodes, or is a graph output (an output is a use that no
// rewrite may take away).
func (u *Uses) SingleUser(v *ir.Value) *ir.Node {
	if r := u.readers[v]; len(r) == 1 && len(u.outputs[v]) == 0 {
		return r[0]
	}
	return nil
}

// producer returns the node defining v when its op is one of ops.
func producer(v *ir.Value, ops ...string) *ir.Node {
	if v == nil || v.Producer == nil {
		return nil
	}
	for _, op := range ops {
		if v.Producer.Op == op {
			return v.Producer
		}
	}
	return nil
}

// nondeterministic lists the ops whose outputs differ from run to run on the
// same inputs: they are never folded or merged.
var nondeterministic = map[string]bool{
	"RandomNormal": true, "RandomUniform": true, "RandomNormalLike": true,
	"RandomUniformLike": true, "Bernoulli": true, "Multinomial": true,
	// Not random, but it writes its cache input in place (ir/ops.go).
	"KVCacheUpdate": true,
}

// isDeterministic reports whether n computes the same outputs from the same
// inputs every time, without side effects.
func isDeterministic(n *ir.Node) bool { return !nondeterministic[n.Op] }

// shapesMatch reports whether a and b certainly describe the same dims: equal
// rank, and each dim the same known size or the same named symbol. Anonymous
// unknown dims match nothing.
func shapesMatch(a, b ir.Shape) bool {
	if a == nil || b == nil || len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Known() != y.Known() || (x.Known() && x.Size != y.Size) || (!x.Known() && (x.Sym == "" || x.Sym != y.Sym)) {
			return false
		}
	}
	return true
}

// typesMatch reports whether a and b have the same known dtype and matching shapes.
func typesMatch(a, b *ir.Value) bool {
	return a != nil && b != nil && a.DType.Valid() && a.DType == b.DType && shapesMatch(a.Shape, b.Shape)
}

// constAll reports whether v is a numeric constant every element of which
// equals want exactly (an empty constant does not qualify).
func constAll(v *ir.Value, want float64) bool {
	if !v.IsConst() || v.Const.Len() == 0 || v.Const.DType.IsQuantized() || !v.Const.DType.Valid() {
		return false
	}
	t := v.Const
	for i := 0; i < t.Len(); i++ {
		if t.DType.IsFloat() {
			if t.Float64(i) != want {
				return false
			}
		} else if t.DType == ir.Bool || float64(t.Int64(i)) != want {
			return false
		}
	}
	return true
}

// redirector redirects the uses of values to equivalent ones across a whole
// model. Replacements are recorded with replace (chains resolve), node
// inputs are rewired eagerly with rewire while a pass walks the nodes in
// order, and apply rewires whatever is left, graph outputs included.
//
// A graph output must stay a distinct, named value of its graph (the model's
// interface), so replacing one is allowed only when the new value can take
// over the output's name: it is a node output of the same graph and not
// already an output (identity.go follows the same rule).
type redirector struct {
	uses    *Uses
	repl    map[*ir.Value]*ir.Value
	outputs map[*ir.Value]bool // values that took over a graph output
	rewired int
}

func newRedirector(uses *Uses) *redirector {
	return &redirector{uses: uses, repl: map[*ir.Value]*ir.Value{}, outputs: map[*ir.Value]bool{}}
}

// resolve follows recorded replacements from v.
func (r *redirector) resolve(v *ir.Value) *ir.Value {
	for v != nil {
		w, ok := r.repl[v]
		if !ok {
			break
		}
		v = w
	}
	return v
}

// isOutput reports whether v is (or has become) a graph output.
func (r *redirector) isOutput(v *ir.Value) bool {
	return len(r.uses.OutputOf(v)) > 0 || r.outputs[v]
}

// canReplace reports whether old may be replaced by nw (see replace).
func (r *redirector) canReplace(old, nw *ir.Value) bool {
	nw = r.resolve(nw)
	if old == nil || nw == nil || old == nw || !typesMatch(old, nw) {
		return false
	}
	if !r.isOutput(old) {
		return true
	}
	if nw.Producer == nil || nw.Graph != old.Graph || r.isOutput(nw) {
		return false
	}
	for _, h := range r.uses.OutputOf(old) {
		if h != old.Graph {
			return false // a subgraph returns the value too
		}
	}
	return true
}

// replace records that every use of old reads nw instead, when old and nw
// have the same dtype and shape and graph outputs allow it (see redirector).
// nw must be defined before every reader of old (an operand of old's
// computation, or an earlier equal value). It reports whether it did.
func (r *redirector) replace(old, nw *ir.Value) bool {
	if !r.canReplace(old, nw) {
		return false
	}
	nw = r.resolve(nw)
	if r.isOutput(old) {
		nw.Name = old.Name
		r.outputs[nw] = true
	}
	r.repl[old] = nw
	return true
}

// rewire redirects n's inputs through the recorded replacements.
func (r *redirector) rewire(n *ir.Node) {
	for i, v := range n.Inputs {
		if w := r.resolve(v); w != v {
			n.Inputs[i] = w
			r.rewired++
		}
	}
}

// apply rewires every node input and graph output of the model and returns
// the number of uses redirected (those rewire did included).
func (r *redirector) apply(g *ir.Graph) int {
	if len(r.repl) == 0 {
		return r.rewired
	}
	g.Walk(func(sg *ir.Graph) {
		for _, n := range sg.Nodes {
			r.rewire(n)
		}
		for i, v := range sg.Outputs {
			if w := r.resolve(v); w != v {
				sg.Outputs[i] = w
				r.rewired++
			}
		}
	})
	return r.rewired
}

// loopBodies returns the subgraphs of g that run repeatedly (Loop and Scan
// bodies, and everything nested in them): a value computed there may differ
// between iterations even when its shape inference looks static.
func loopBodies(g *ir.Graph) map[*ir.Graph]bool {
	out := map[*ir.Graph]bool{}
	g.Walk(func(sg *ir.Graph) {
		for _, n := range sg.Nodes {
			for _, b := range n.Subgraphs() {
				if out[sg] || n.Op == "Loop" || n.Op == "Scan" {
					b.Walk(func(h *ir.Graph) { out[h] = true })
				}
			}
		}
	})
	return out
}

// cloneAttrs returns a shallow copy of a (the Attr values are shared), for
// a rewrite that changes one attribute of a node.
func cloneAttrs(a ir.Attrs) ir.Attrs {
	c := make(ir.Attrs, len(a))
	for k, v := range a {
		c[k] = v
	}
	return c
}
