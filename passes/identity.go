package passes

import "github.com/weftrt/weft/ir"

// EliminateIdentity runs the identity pass on g alone.
func EliminateIdentity(g *ir.Graph) (Change, error) { return identityPass(g, NewContext(g)) }

// identityPass bypasses Identity nodes: every use of an Identity's output
// reads its input instead, and the node is removed.
//
// A graph output must stay a distinct, named value of its graph, so when the
// Identity output is an output of some graph, its input takes over the
// output's name instead, unless the input cannot: it is a graph input or a
// constant (then the Identity is the only way to expose it under a second
// name), it belongs to another graph, or it already is a graph output.
func identityPass(g *ir.Graph, ctx *Context) (Change, error) {
	uses := ctx.Uses()
	repl := map[*ir.Value]*ir.Value{}
	resolve := func(v *ir.Value) *ir.Value {
		for v != nil {
			r, ok := repl[v]
			if !ok {
				break
			}
			v = r
		}
		return v
	}
	becameOutput := map[*ir.Value]bool{}
	dead := map[*ir.Node]bool{}
	g.Walk(func(sg *ir.Graph) {
		for _, n := range sg.Nodes {
			if n.Op != "Identity" || len(n.Inputs) != 1 || n.Inputs[0] == nil || len(n.Outputs) != 1 {
				continue
			}
			x, y := resolve(n.Inputs[0]), n.Outputs[0]
			if len(uses.OutputOf(y)) > 0 {
				if x.Producer == nil || x.Graph != sg || len(uses.OutputOf(x)) > 0 || becameOutput[x] {
					continue
				}
				x.Name = y.Name
				becameOutput[x] = true
			}
			if !x.DType.Valid() {
				x.DType = y.DType
			}
			if x.Shape == nil {
				x.Shape = y.Shape.Clone()
			}
			repl[y] = x
			dead[n] = true
		}
	})
	if len(dead) == 0 {
		return Change{}, nil
	}
	var ch Change
	g.Walk(func(sg *ir.Graph) {
		kept := sg.Nodes[:0]
		for _, n := range sg.Nodes {
			if dead[n] {
				ch.Removed++
				continue
			}
			kept = append(kept, n)
			for i, v := range n.Inputs {
				if r := resolve(v); r != v {
					n.Inputs[i] = r
					ch.Rewired++
				}
			}
		}
		clear(sg.Nodes[len(kept):])
		sg.Nodes = kept
		for i, v := range sg.Outputs {
			if r := resolve(v); r != v {
				sg.Outputs[i] = r
				ch.Rewired++
			}
		}
	})
	return ch, nil
}
