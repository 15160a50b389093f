package passes

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weftrt/weft/ir"
)

// cseConstLimit bounds the size of the constants cse compares byte for byte.
const cseConstLimit = 4 << 10

// csePass merges identical computations. Two nodes of one graph are the
// same when they have the same op, read the same values (the same *Value,
// after earlier merges) in the same order, have the same number of outputs
// and equal attributes; the later one's outputs are replaced by the
// earlier one's. Nodes with a subgraph attribute (If, Loop, Scan, Fused) and
// nondeterministic ones (RandomNormal, ...) never merge. Before that,
// identical small constants (same dtype, shape and bytes, at most
// cseConstLimit bytes) merge, within a graph or into one of an enclosing
// graph, so that nodes reading equal copies merge too. Graph outputs keep
// their names (see redirector); nodes and constants left unused are removed.
func csePass(g *ir.Graph, ctx *Context) (Change, error) {
	r := newRedirector(ctx.Uses())
	consts := map[string][]*ir.Value{}
	nodes := map[string][]*ir.Node{}
	g.Walk(func(sg *ir.Graph) {
		for _, c := range sg.Consts {
			key, ok := constKey(c)
			if !ok {
				continue
			}
			for _, d := range consts[key] {
				if visibleIn(d, sg) && bytes.Equal(d.Const.Data, c.Const.Data) && r.replace(c, d) {
					break
				}
			}
			if r.resolve(c) == c {
				consts[key] = append(consts[key], c)
			}
		}
		for _, n := range sg.Nodes {
			r.rewire(n)
			key, ok := nodeKey(n)
			if !ok {
				continue
			}
			key = fmt.Sprintf("%p|%s", sg, key) // nodes merge within one graph only
			merged := false
			for _, m := range nodes[key] {
				if attrsEqual(m.Attrs, n.Attrs) && mergeOutputs(r, n, m) {
					merged = true
					break
				}
			}
			if !merged {
				nodes[key] = append(nodes[key], n)
			}
		}
	})
	ch := Change{Rewired: r.apply(g)}
	if !ch.Changed() {
		return ch, nil
	}
	dead, err := dcePass(g, ctx) // removes the merged nodes and constants
	ch.Add(dead)
	return ch, err
}

// mergeOutputs replaces every output of n by the same output of m, or
// nothing when one of them cannot be replaced (a graph output whose name m's
// output cannot take over, or types that differ).
func mergeOutputs(r *redirector, n, m *ir.Node) bool {
	for i, o := range n.Outputs {
		if o == nil || m.Outputs[i] == nil || !r.canReplace(o, m.Outputs[i]) {
			return false
		}
	}
	ok := true
	for i, o := range n.Outputs {
		ok = r.replace(o, m.Outputs[i]) && ok // each replacement is sound on its own
	}
	return ok
}

// visibleIn reports whether v, defined in its graph, can be read in sg.
func visibleIn(v *ir.Value, sg *ir.Graph) bool {
	for h := sg; h != nil; h = h.Parent {
		if h == v.Graph {
			return true
		}
	}
	return false
}

// constKey identifies a constant's dtype and shape (the bytes are compared
// separately), when it is small enough to merge.
func constKey(c *ir.Value) (string, bool) {
	t := c.Const
	if t == nil || len(t.Data) > cseConstLimit {
		return "", false
	}
	return fmt.Sprintf("%v%v", t.DType, t.Shape), true
}

// nodeKey renders everything about n that must be equal for a merge, except
// tensor attributes, which attrsEqual compares.
func nodeKey(n *ir.Node) (string, bool) {
	if len(n.Outputs) == 0 || !isDeterministic(n) || len(n.Subgraphs()) > 0 {
		return "", false
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s/%d(", n.Op, len(n.Outputs))
	for _, v := range n.Inputs {
		if v == nil {
			sb.WriteString("_,")
		} else {
			fmt.Fprintf(&sb, "%p,", v)
		}
	}
	sb.WriteString(")")
	for _, k := range n.Attrs.Names() {
		a := n.Attrs[k]
		fmt.Fprintf(&sb, "%s:%d=", k, a.Kind)
		switch a.Kind {
		case ir.AttrFloat:
			fmt.Fprintf(&sb, "%x", math.Float32bits(a.Float)) // -0 and NaN payloads stay distinct
		case ir.AttrFloats:
			for _, f := range a.Floats {
				fmt.Fprintf(&sb, "%x,", math.Float32bits(f))
			}
		case ir.AttrTensor:
			if a.Tensor != nil {
				sb.WriteString(a.Tensor.String())
			}
		case ir.AttrStrings:
			fmt.Fprintf(&sb, "%q", a.Strings)
		default:
			sb.WriteString(a.String())
		}
		sb.WriteString(";")
	}
	return sb.String(), true
}

// attrsEqual compares the attributes of two nodes whose nodeKeys are equal:
// only tensor attributes remain to be compared.
func attrsEqual(a, b ir.Attrs) bool {
	for k, x := range a {
		y, ok := b[k]
		if !ok || x.Kind != y.Kind {
			return false
		}
		if x.Kind == ir.AttrTensor {
			if (x.Tensor == nil) != (y.Tensor == nil) {
				return false
			}
			if x.Tensor != nil && (x.Tensor.DType != y.Tensor.DType || !slices.Equal(x.Tensor.Shape, y.Tensor.Shape) ||
				!bytes.Equal(x.Tensor.Data, y.Tensor.Data)) {
				return false
			}
		}
	}
	return len(a) == len(b)
}
