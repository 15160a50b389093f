package weft

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/weftrt/weft/ir"
)

// Graph helpers of shape specialization (specialize.go): a deep copy of a
// graph that shares the constant tensors, and the substitution of
// symbolic dimensions by sizes.

// cloneGraph returns a deep copy of g: new values, nodes, attributes and
// subgraphs (value IDs are renumbered), sharing the constant tensors and
// tensor attributes, which the passes never write in place (a pass that
// changes a weight makes a new tensor).
func cloneGraph(g *ir.Graph) *ir.Graph {
	c := &cloner{vals: map[*ir.Value]*ir.Value{}, graphs: map[*ir.Graph]*ir.Graph{}}
	ng := ir.NewGraph(g.Name)
	c.graph(g, ng)
	return ng
}

type cloner struct {
	vals   map[*ir.Value]*ir.Value
	graphs map[*ir.Graph]*ir.Graph
}

// value returns the copy of v, making it (in the copy of the graph that
// defines v) the first time.
func (c *cloner) value(v *ir.Value, cur *ir.Graph) *ir.Value {
	if v == nil {
		return nil
	}
	if nv, ok := c.vals[v]; ok {
		return nv
	}
	owner := cur
	if g, ok := c.graphs[v.Graph]; ok {
		owner = g
	}
	nv := owner.NewValue(v.Name, v.DType, v.Shape.Clone())
	nv.Const = v.Const
	c.vals[v] = nv
	return nv
}

func (c *cloner) values(vs []*ir.Value, cur *ir.Graph) []*ir.Value {
	if vs == nil {
		return nil
	}
	out := make([]*ir.Value, len(vs))
	for i, v := range vs {
		out[i] = c.value(v, cur)
	}
	return out
}

func (c *cloner) graph(src, dst *ir.Graph) {
	c.graphs[src] = dst
	dst.Opsets, dst.Meta = maps.Clone(src.Opsets), maps.Clone(src.Meta)
	dst.Inputs = c.values(src.Inputs, dst)
	dst.Consts = c.values(src.Consts, dst)
	for _, n := range src.Nodes {
		nn := &ir.Node{Name: n.Name, Op: n.Op, Inputs: c.values(n.Inputs, dst), Attrs: c.attrs(n.Attrs, dst)}
		nn.Outputs = c.values(n.Outputs, dst)
		for _, o := range nn.Outputs {
			if o != nil {
				o.Producer = nn
			}
		}
		dst.Nodes = append(dst.Nodes, nn)
	}
	dst.Outputs = c.values(src.Outputs, dst)
}

func (c *cloner) attrs(as ir.Attrs, cur *ir.Graph) ir.Attrs {
	if as == nil {
		return nil
	}
	out := make(ir.Attrs, len(as))
	for k, a := range as {
		if a == nil {
			out[k] = nil
			continue
		}
		na := *a
		na.Ints, na.Floats, na.Strings = slices.Clone(a.Ints), slices.Clone(a.Floats), slices.Clone(a.Strings)
		if a.Graph != nil {
			na.Graph = c.subgraph(a.Graph, cur)
		}
		if a.Graphs != nil {
			na.Graphs = make([]*ir.Graph, len(a.Graphs))
			for i, sg := range a.Graphs {
				na.Graphs[i] = c.subgraph(sg, cur)
			}
		}
		out[k] = &na
	}
	return out
}

func (c *cloner) subgraph(sg, cur *ir.Graph) *ir.Graph {
	if sg == nil {
		return nil
	}
	nsg := cur.NewSubgraph(sg.Name)
	c.graph(sg, nsg)
	return nsg
}

// SymbolicDims returns the names of the symbolic dimensions of g's
// non-constant inputs, sorted.
func SymbolicDims(g *ir.Graph) []string {
	seen := map[string]bool{}
	for _, v := range g.Inputs {
		if v == nil || v.IsConst() {
			continue
		}
		for _, d := range v.Shape {
			if !d.Known() && d.Sym != "" {
				seen[d.Sym] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for s := range seen {
		names = append(names, s)
	}
	sort.Strings(names)
	return names
}

// BindDims replaces the symbolic dimensions named in dims by their sizes
// in every value of g (inputs, intermediates and outputs, subgraphs
// included), so that shape inference can make every shape static. Each
// name must be a symbolic dimension of one of g's inputs.
func BindDims(g *ir.Graph, dims map[string]int64) error {
	have := SymbolicDims(g)
	var unknown []string
	for s, n := range dims {
		if !slices.Contains(have, s) {
			unknown = append(unknown, s)
		}
		if n < 0 {
			return fmt.Errorf("dimension %s=%d: sizes must be >= 0", s, n)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		list := "none"
		if len(have) > 0 {
			list = strings.Join(have, ", ")
		}
		return fmt.Errorf("the model's inputs have no symbolic dimension %s (they have: %s)", strings.Join(unknown, ", "), list)
	}
	bindDims(g, dims, nil)
	return nil
}

// bindDims substitutes dims in every value of g; anon, when set, gives
// the sizes of g's inputs' unnamed unknown dimensions (keyed by input
// index and axis).
func bindDims(g *ir.Graph, dims map[string]int64, anon map[[2]int]int64) {
	for i, v := range g.Inputs {
		if v == nil {
			continue
		}
		for a := range v.Shape {
			if n, ok := anon[[2]int{i, a}]; ok && !v.Shape[a].Known() && v.Shape[a].Sym == "" {
				v.Shape[a] = ir.Dim{Size: n}
			}
		}
	}
	seen := map[*ir.Value]bool{}
	sub := func(v *ir.Value) {
		if v == nil || seen[v] {
			return
		}
		seen[v] = true
		for a, d := range v.Shape {
			if n, ok := dims[d.Sym]; ok && !d.Known() && d.Sym != "" {
				v.Shape[a] = ir.Dim{Size: n}
			}
		}
	}
	g.Walk(func(sg *ir.Graph) {
		for _, v := range sg.Inputs {
			sub(v)
		}
		for _, n := range sg.Nodes {
			for _, o := range n.Outputs {
				sub(o)
			}
		}
		for _, v := range sg.Outputs {
			sub(v)
		}
	})
}

// hasUnknownInputDims reports whether a non-constant input of g has a
// dimension of unknown size.
func hasUnknownInputDims(g *ir.Graph) bool {
	for _, v := range g.Inputs {
		if v == nil || v.IsConst() {
			continue
		}
		for _, d := range v.Shape {
			if !d.Known() {
				return true
			}
		}
	}
	return false
}

// alignConsts gives every constant of g whose data is not 8-byte aligned
// (weights in a file mapping often are not) an aligned copy of the same
// bytes, in place. The CPU backend copies an unaligned constant once per
// compiled graph and shares one packed copy of a weight among all graphs
// that use the same data: without this, every shape-specialized variant
// would copy and pack the weights again.
func alignConsts(g *ir.Graph) {
	g.Walk(func(sg *ir.Graph) {
		for _, vs := range [][]*ir.Value{sg.Consts, sg.Inputs} {
			for _, v := range vs {
				if !v.IsConst() || len(v.Const.Data) == 0 {
					continue
				}
				if uintptr(unsafe.Pointer(unsafe.SliceData(v.Const.Data)))%8 == 0 {
					continue
				}
				b := ir.AlignedBytes(len(v.Const.Data))
				copy(b, v.Const.Data)
				v.Const.Data = b
			}
		}
	})
}
