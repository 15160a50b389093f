package ir

import "fmt"

// Value is an SSA value: a graph input, a constant (Const != nil) or the
// output of exactly one Node (Producer).
type Value struct {
	ID       int
	Name     string // the name in the source model, if any
	DType    DType
	Shape    Shape
	Producer *Node
	Const    *Tensor
	Graph    *Graph // the graph that defines the value
}

func (v *Value) String() string {
	if v == nil {
		return "<none>"
	}
	return fmt.Sprintf("%%%d(%s) %s[%s]", v.ID, v.Name, v.DType, v.Shape)
}

// IsConst reports whether the value is a constant.
func (v *Value) IsConst() bool { return v != nil && v.Const != nil }

// Node is one operation. Inputs may hold nil for an omitted optional input.
type Node struct {
	Name    string
	Op      string
	Inputs  []*Value
	Outputs []*Value
	Attrs   Attrs
}

// In returns input i, or nil when it is absent.
func (n *Node) In(i int) *Value {
	if i < len(n.Inputs) {
		return n.Inputs[i]
	}
	return nil
}

func (n *Node) String() string {
	if n.Name != "" {
		return fmt.Sprintf("%q (%s)", n.Name, n.Op)
	}
	return n.Op
}

// Subgraphs returns the node's subgraph attributes in attribute-name order.
func (n *Node) Subgraphs() []*Graph {
	var gs []*Graph
	for _, k := range n.Attrs.Names() {
		a := n.Attrs[k]
		if a.Kind == AttrGraph {
			gs = append(gs, a.Graph)
		} else if a.Kind == AttrGraphs {
			gs = append(gs, a.Graphs...)
		}
	}
	return gs
}

// Graph is a DAG of nodes in topological order. A subgraph (If branch, Loop
// or Scan body) has a Parent and may read values of its enclosing graphs.
type Graph struct {
	Name    string
	Inputs  []*Value
	Outputs []*Value
	Consts  []*Value
	Nodes   []*Node
	Parent  *Graph
	// Opsets records the source model's operator set versions (domain -> version).
	Opsets map[string]int64
	// Meta holds free-form metadata (producer, model doc string, ...).
	Meta map[string]string

	nextID *int
}

// NewGraph returns an empty top-level graph.
func NewGraph(name string) *Graph {
	return &Graph{Name: name, nextID: new(int)}
}

// NewSubgraph returns an empty graph nested in g; value IDs stay unique
// across the whole model.
func (g *Graph) NewSubgraph(name string) *Graph {
	return &Graph{Name: name, Parent: g, nextID: g.ids()}
}

func (g *Graph) ids() *int {
	if g.nextID == nil {
		g.nextID = new(int)
	}
	return g.nextID
}

// NewValue creates a value owned by g (not yet defined by anything).
func (g *Graph) NewValue(name string, dt DType, shape Shape) *Value {
	id := g.ids()
	v := &Value{ID: *id, Name: name, DType: dt, Shape: shape, Graph: g}
	*id++
	return v
}

// AddInput appends a graph input.
func (g *Graph) AddInput(name string, dt DType, shape Shape) *Value {
	v := g.NewValue(name, dt, shape)
	g.Inputs = append(g.Inputs, v)
	return v
}

// AddConst adds a constant value holding t.
func (g *Graph) AddConst(name string, t *Tensor) *Value {
	v := g.NewValue(name, t.DType, ShapeOf(t.Shape))
	v.Const = t
	g.Consts = append(g.Consts, v)
	return v
}

// AddNode appends a node with nOut fresh output values (dtype and shape are
// left for the caller or shape inference).
func (g *Graph) AddNode(op, name string, inputs []*Value, nOut int, attrs Attrs) *Node {
	if attrs == nil {
		attrs = Attrs{}
	}
	n := &Node{Name: name, Op: op, Inputs: inputs, Attrs: attrs}
	for i := 0; i < nOut; i++ {
		v := g.NewValue("", Invalid, nil)
		v.Producer = n
		n.Outputs = append(n.Outputs, v)
	}
	g.Nodes = append(g.Nodes, n)
	return n
}

// Walk calls fn for g and every nested subgraph, outermost first.
func (g *Graph) Walk(fn func(*Graph)) {
	fn(g)
	for _, n := range g.Nodes {
		for _, sg := range n.Subgraphs() {
			sg.Walk(fn)
		}
	}
}

// Uses returns, for each value, the nodes of g (not of subgraphs) that read it.
func (g *Graph) Uses() map[*Value][]*Node {
	u := map[*Value][]*Node{}
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			if in != nil {
				u[in] = append(u[in], n)
			}
		}
	}
	return u
}

// OuterRefs returns the values that the nodes of g (and of its nested
// subgraphs) read but that are defined in an enclosing graph, in first-use order.
func (g *Graph) OuterRefs() []*Value {
	var refs []*Value
	seen := map[*Value]bool{}
	var visit func(sg *Graph)
	visit = func(sg *Graph) {
		for _, n := range sg.Nodes {
			for _, in := range n.Inputs {
				if in != nil && !seen[in] && !g.defines(in) {
					seen[in] = true
					refs = append(refs, in)
				}
			}
			for _, s := range n.Subgraphs() {
				visit(s)
			}
		}
		for _, o := range sg.Outputs {
			if o != nil && !seen[o] && !g.defines(o) {
				seen[o] = true
				refs = append(refs, o)
			}
		}
	}
	visit(g)
	return refs
}

// defines reports whether v is defined by g or a graph nested in g.
func (g *Graph) defines(v *Value) bool {
	for h := v.Graph; h != nil; h = h.Parent {
		if h == g {
			return true
		}
	}
	return false
}

// NumParams returns the number of constant elements and their bytes.
func (g *Graph) NumParams() (elems, bytes int64) {
	g.Walk(func(sg *Graph) {
		for _, c := range sg.Consts {
			elems += int64(c.Const.Len())
			bytes += int64(len(c.Const.Data))
		}
	})
	return
}
