package passes

import "github.com/weftrt/weft/ir"

// DCE runs dead-code elimination on g alone.
func DCE(g *ir.Graph) (Change, error) { return dcePass(g, NewContext(g)) }

// dcePass removes nodes whose outputs nothing needs and constants nothing
// reads, in the whole model. A value is needed when it is a top-level graph
// output, or read by a needed node, or an output of a subgraph of a needed
// node; so a value read only inside an If branch or a Loop body stays as
// long as that If or Loop does. Graph inputs are never removed (they are the
// model's interface), nor are subgraph outputs of live nodes (they are the
// subgraph's interface). Nodes without outputs are kept: they can only be
// there for an effect.
func dcePass(g *ir.Graph, _ *Context) (Change, error) {
	owner := map[*ir.Graph]*ir.Node{} // subgraph -> the node holding it
	home := map[*ir.Node]*ir.Graph{}  // node -> its graph
	g.Walk(func(sg *ir.Graph) {
		for _, n := range sg.Nodes {
			home[n] = sg
			for _, s := range n.Subgraphs() {
				owner[s] = n
			}
		}
	})
	liveNode := map[*ir.Node]bool{}
	liveVal := map[*ir.Value]bool{}
	var work []*ir.Node
	markVal := func(v *ir.Value) {
		if v == nil || liveVal[v] {
			return
		}
		liveVal[v] = true
		if p := v.Producer; p != nil && !liveNode[p] {
			liveNode[p] = true
			work = append(work, p)
		}
	}
	markNode := func(n *ir.Node) {
		for ; n != nil && !liveNode[n]; n = owner[home[n]] {
			liveNode[n] = true
			work = append(work, n)
		}
	}
	for _, o := range g.Outputs {
		markVal(o)
	}
	for n := range home {
		if len(n.Outputs) == 0 {
			markNode(n)
		}
	}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		markNode(owner[home[n]]) // a live node keeps its enclosing node
		for _, in := range n.Inputs {
			markVal(in)
		}
		for _, sg := range n.Subgraphs() {
			for _, o := range sg.Outputs {
				markVal(o)
			}
		}
	}
	var ch Change
	var sweep func(sg *ir.Graph)
	sweep = func(sg *ir.Graph) {
		kept := sg.Nodes[:0]
		for _, n := range sg.Nodes {
			if liveNode[n] {
				kept = append(kept, n)
				for _, s := range n.Subgraphs() {
					sweep(s)
				}
			} else {
				ch.Removed += 1
				for _, s := range n.Subgraphs() {
					ch.Removed += countNodes(s)
				}
			}
		}
		clear(sg.Nodes[len(kept):])
		sg.Nodes = kept
		consts := sg.Consts[:0]
		for _, c := range sg.Consts {
			if liveVal[c] {
				consts = append(consts, c)
			} else {
				ch.Consts++
				ch.BytesSaved += int64(len(c.Const.Data))
			}
		}
		clear(sg.Consts[len(consts):])
		sg.Consts = consts
	}
	sweep(g)
	return ch, nil
}
