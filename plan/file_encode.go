package plan

import (
	"fmt"
	"sort"
	"unsafe"

	"github.com/weftrt/weft/ir"
)

// tables numbers everything the sections refer to by index: graphs in
// depth-first order (the top-level graph is 0), values in id order,
// tensors in first-use order (per graph: constants, then tensor attributes).
// Only slices and lookups are used, never map iteration, so the numbering —
// and with it the file — is a function of the plan alone.
type tables struct {
	graphs    []*ir.Graph
	graphIdx  map[*ir.Graph]int
	values    []*ir.Value
	valueIdx  map[*ir.Value]int
	tensors   []*ir.Tensor
	tensorIdx map[*ir.Tensor]int
	// offsets[i] is tensor i's offset in the weights section; tensors whose
	// data alias the same bytes share one copy.
	offsets    []int64
	weightsLen int64
}

// weightAlign is the alignment of every tensor in the weights section (and
// of every section in the file).
const weightAlign = 64

func align(n int64) int64 { return (n + weightAlign - 1) &^ (weightAlign - 1) }

func newTables(g *ir.Graph) (*tables, error) {
	t := &tables{graphIdx: map[*ir.Graph]int{}, valueIdx: map[*ir.Value]int{}, tensorIdx: map[*ir.Tensor]int{}}
	var addGraph func(g *ir.Graph) error
	addGraph = func(g *ir.Graph) error {
		if _, dup := t.graphIdx[g]; dup {
			return fmt.Errorf("subgraph %q is attached to more than one node", g.Name)
		}
		t.graphIdx[g] = len(t.graphs)
		t.graphs = append(t.graphs, g)
		for _, n := range g.Nodes {
			for _, sg := range n.Subgraphs() {
				if err := addGraph(sg); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := addGraph(g); err != nil {
		return nil, err
	}
	define := func(v *ir.Value) error {
		if _, dup := t.valueIdx[v]; dup {
			return fmt.Errorf("value %v is defined twice", v)
		}
		t.valueIdx[v] = len(t.values)
		t.values = append(t.values, v)
		return nil
	}
	addTensor := func(x *ir.Tensor) {
		if _, ok := t.tensorIdx[x]; !ok {
			t.tensorIdx[x] = len(t.tensors)
			t.tensors = append(t.tensors, x)
		}
	}
	for _, sg := range t.graphs {
		for _, v := range sg.Inputs {
			if err := define(v); err != nil {
				return nil, err
			}
		}
		for _, v := range sg.Consts {
			if err := define(v); err != nil {
				return nil, err
			}
			addTensor(v.Const)
		}
		for _, n := range sg.Nodes {
			for _, o := range n.Outputs {
				if err := define(o); err != nil {
					return nil, err
				}
			}
			for _, k := range n.Attrs.Names() {
				if a := n.Attrs[k]; a.Kind == ir.AttrTensor {
					if a.Tensor == nil {
						return nil, fmt.Errorf("node %v: tensor attribute %q is nil", n, k)
					}
					addTensor(a.Tensor)
				}
			}
		}
	}
	// The value table is in id order, so that the reader, creating the
	// values in table order, gives them ids in the same relative order
	// (renumbered densely: ids that passes dropped leave no gaps).
	sort.SliceStable(t.values, func(i, j int) bool { return t.values[i].ID < t.values[j].ID })
	for i, v := range t.values {
		t.valueIdx[v] = i
	}
	// Lay out the weights; identical byte ranges (one tensor reshaped into
	// another without copying) are stored once.
	type span struct {
		p *byte
		n int
	}
	stored := map[span]int64{}
	for _, x := range t.tensors {
		if err := x.Check(); err != nil {
			return nil, fmt.Errorf("tensor %v: %w", x, err)
		}
		off := int64(0)
		if len(x.Data) > 0 {
			key := span{unsafe.SliceData(x.Data), len(x.Data)}
			o, ok := stored[key]
			if !ok {
				o = align(t.weightsLen)
				stored[key] = o
				t.weightsLen = o + int64(len(x.Data))
			}
			off = o
		}
		t.offsets = append(t.offsets, off)
	}
	return t, nil
}

func (t *tables) value(v *ir.Value, what string) (int, error) {
	i, ok := t.valueIdx[v]
	if !ok {
		return 0, fmt.Errorf("%s refers to value %v, which no graph of the plan defines", what, v)
	}
	return i, nil
}

// optValue is value for optional references (nil allowed): -1 for nil.
func (t *tables) optValue(v *ir.Value, what string) (int, error) {
	if v == nil {
		return -1, nil
	}
	return t.value(v, what)
}

// encodeGraph writes the graph section (see docs/plan-format.md).
func (t *tables) encodeGraph() ([]byte, error) {
	e := &encoder{}
	e.n(len(t.graphs))
	e.n(len(t.values))
	e.n(len(t.tensors))
	for i, x := range t.tensors {
		e.u8(uint8(x.DType))
		e.n(len(x.Shape))
		for _, d := range x.Shape {
			e.uv(uint64(d))
		}
		e.uv(uint64(t.offsets[i]))
		e.n(len(x.Data))
	}
	for i, g := range t.graphs {
		e.str(g.Name)
		if i == 0 {
			e.ref(-1)
		} else {
			p, ok := t.graphIdx[g.Parent]
			if !ok || p >= i {
				return nil, fmt.Errorf("subgraph %q: its parent is not an enclosing graph", g.Name)
			}
			e.ref(p)
		}
		domains := make([]string, 0, len(g.Opsets))
		for k := range g.Opsets {
			domains = append(domains, k)
		}
		sort.Strings(domains)
		e.n(len(domains))
		for _, k := range domains {
			e.str(k)
			e.iv(g.Opsets[k])
		}
		keys := sortedKeys(g.Meta)
		e.n(len(keys))
		for _, k := range keys {
			e.str(k)
			e.str(g.Meta[k])
		}
	}
	for _, v := range t.values {
		gi, ok := t.graphIdx[v.Graph]
		if !ok {
			return nil, fmt.Errorf("value %v belongs to a graph outside the plan", v)
		}
		e.n(gi)
		e.str(v.Name)
		e.u8(uint8(v.DType))
		if v.Shape == nil {
			e.uv(0)
		} else {
			e.n(len(v.Shape) + 1)
			for _, d := range v.Shape {
				e.iv(d.Size)
				e.str(d.Sym)
			}
		}
		if v.Const != nil {
			e.ref(t.tensorIdx[v.Const])
		} else {
			e.ref(-1)
		}
	}
	for _, g := range t.graphs {
		if err := t.encodeBody(e, g); err != nil {
			return nil, fmt.Errorf("graph %q: %w", g.Name, err)
		}
	}
	return e.b, nil
}

func (t *tables) encodeBody(e *encoder, g *ir.Graph) error {
	list := func(vs []*ir.Value) {
		e.n(len(vs))
		for _, v := range vs {
			e.n(t.valueIdx[v]) // defined by construction of the tables
		}
	}
	list(g.Inputs)
	list(g.Consts)
	e.n(len(g.Nodes))
	for _, n := range g.Nodes {
		e.str(n.Name)
		e.str(n.Op)
		e.n(len(n.Inputs))
		for _, in := range n.Inputs {
			i, err := t.optValue(in, fmt.Sprintf("node %v", n))
			if err != nil {
				return err
			}
			e.ref(i)
		}
		list(n.Outputs)
		names := n.Attrs.Names()
		e.n(len(names))
		for _, k := range names {
			e.str(k)
			if err := t.encodeAttr(e, n.Attrs[k]); err != nil {
				return fmt.Errorf("node %v: attribute %q: %w", n, k, err)
			}
		}
	}
	e.n(len(g.Outputs))
	for _, o := range g.Outputs {
		i, err := t.optValue(o, "graph output")
		if err != nil {
			return err
		}
		e.ref(i)
	}
	return nil
}

func (t *tables) encodeAttr(e *encoder, a *ir.Attr) error {
	if a == nil {
		return fmt.Errorf("nil attribute")
	}
	e.u8(uint8(a.Kind))
	switch a.Kind {
	case ir.AttrInt:
		e.iv(a.Int)
	case ir.AttrFloat:
		e.f32(a.Float)
	case ir.AttrString:
		e.str(a.Str)
	case ir.AttrInts:
		e.n(len(a.Ints))
		for _, v := range a.Ints {
			e.iv(v)
		}
	case ir.AttrFloats:
		e.n(len(a.Floats))
		for _, v := range a.Floats {
			e.f32(v)
		}
	case ir.AttrStrings:
		e.n(len(a.Strings))
		for _, s := range a.Strings {
			e.str(s)
		}
	case ir.AttrTensor:
		e.n(t.tensorIdx[a.Tensor])
	case ir.AttrGraph:
		e.n(t.graphIdx[a.Graph])
	case ir.AttrGraphs:
		e.n(len(a.Graphs))
		for _, sg := range a.Graphs {
			e.n(t.graphIdx[sg])
		}
	default:
		return fmt.Errorf("unknown attribute kind %d", a.Kind)
	}
	return nil
}

// encodeSchedule writes the schedule section: the partitions.
func (t *tables) encodeSchedule(p *Plan) ([]byte, error) {
	nodeIdx := make(map[*ir.Node]int, len(p.Graph.Nodes))
	for i, n := range p.Graph.Nodes {
		nodeIdx[n] = i
	}
	// Refuse what a reader would refuse: every top-level node in exactly
	// one partition, indices equal to positions, one cause per node (or none).
	placed := make([]bool, len(p.Graph.Nodes))
	e := &encoder{}
	e.n(len(p.Partitions))
	for k, part := range p.Partitions {
		if part == nil {
			return nil, fmt.Errorf("partition %d is nil", k)
		}
		if part.Index != k {
			return nil, fmt.Errorf("partition %d has index %d", k, part.Index)
		}
		if len(part.Causes) != 0 && len(part.Causes) != len(part.Nodes) {
			return nil, fmt.Errorf("partition %d has %d causes for %d nodes", k, len(part.Causes), len(part.Nodes))
		}
		e.iv(int64(part.Index))
		e.str(part.Device)
		e.n(len(part.Nodes))
		for _, n := range part.Nodes {
			i, ok := nodeIdx[n]
			if !ok {
				return nil, fmt.Errorf("partition %d: node %v is not a node of the top-level graph", part.Index, n)
			}
			if placed[i] {
				return nil, fmt.Errorf("partition %d: node %v is in two partitions", part.Index, n)
			}
			placed[i] = true
			e.n(i)
		}
		e.n(len(part.Causes))
		for _, c := range part.Causes {
			e.str(c)
		}
		for _, vs := range [][]*ir.Value{part.Inputs, part.Outputs} {
			e.n(len(vs))
			for _, v := range vs {
				i, err := t.value(v, fmt.Sprintf("partition %d", part.Index))
				if err != nil {
					return nil, err
				}
				e.n(i)
			}
		}
	}
	for i, ok := range placed {
		if !ok {
			return nil, fmt.Errorf("node %d %v is in no partition", i, p.Graph.Nodes[i])
		}
	}
	return e.b, nil
}

// encodeMemory writes the memory section: arenas and buffers.
func (t *tables) encodeMemory(p *Plan) ([]byte, error) {
	e := &encoder{}
	e.n(len(p.Arenas))
	for _, a := range p.Arenas {
		e.str(a.Device)
		e.iv(a.Size)
	}
	e.n(len(p.Buffers))
	for k, b := range p.Buffers {
		what := fmt.Sprintf("buffer %d", k)
		i, err := t.value(b.Value, what)
		if err != nil {
			return nil, err
		}
		j, err := t.optValue(b.InPlaceOf, what)
		if err != nil {
			return nil, err
		}
		e.n(i)
		e.str(b.Device)
		e.iv(b.Bytes)
		e.iv(int64(b.Arena))
		e.iv(b.Offset)
		e.ref(j)
	}
	return e.b, nil
}

// encodeMeta writes the metadata section: sorted key/value pairs.
func encodeMeta(meta map[string]string) []byte {
	e := &encoder{}
	keys := sortedKeys(meta)
	e.n(len(keys))
	for _, k := range keys {
		e.str(k)
		e.str(meta[k])
	}
	return e.b
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
