package plan

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

func decodeMeta(b []byte) (map[string]string, error) {
	d := &decoder{b: b}
	n := d.count("metadata entry", 2)
	meta := make(map[string]string, n)
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		k, v := d.str(), d.str()
		if d.err == nil && i > 0 && k <= prev {
			d.fail("metadata keys not in strictly increasing order (%q after %q)", k, prev)
		}
		meta[k], prev = v, k
	}
	d.done()
	return meta, d.err
}

// valueRec is a value record before the value exists.
type valueRec struct {
	graph  int
	name   string
	dtype  ir.DType
	shape  ir.Shape
	tensor int
}

// decodeGraph rebuilds the model graph; constants alias weights. It returns
// the graph and the value table (by index) that the other sections refer to.
func decodeGraph(b, weights []byte) (*ir.Graph, []*ir.Value, error) {
	d := &decoder{b: b}
	nGraphs := d.count("graph", 4)
	nValues := d.count("value", 6)
	nTensors := d.count("tensor", 4)
	if d.err == nil && nGraphs == 0 {
		d.fail("no graphs")
	}
	tensors := make([]*ir.Tensor, nTensors)
	for i := range tensors {
		tensors[i] = decodeTensor(d, weights, i)
		if d.err != nil {
			return nil, nil, d.err
		}
	}
	graphs := make([]*ir.Graph, nGraphs)
	for i := range graphs {
		name := d.str()
		parent := d.ref("parent graph", i)
		switch {
		case d.err != nil:
		case i == 0 && parent >= 0:
			d.fail("the top-level graph has a parent")
		case i == 0:
			graphs[0] = ir.NewGraph(name)
		case parent < 0:
			d.fail("subgraph %d (%q) has no parent", i, name)
		default:
			graphs[i] = graphs[parent].NewSubgraph(name)
		}
		if d.err != nil {
			return nil, nil, d.err
		}
		for j, n := 0, d.count("opset", 2); j < n && d.err == nil; j++ {
			if graphs[i].Opsets == nil {
				graphs[i].Opsets = map[string]int64{}
			}
			k := d.str()
			graphs[i].Opsets[k] = d.iv()
		}
		for j, n := 0, d.count("graph metadata entry", 2); j < n && d.err == nil; j++ {
			if graphs[i].Meta == nil {
				graphs[i].Meta = map[string]string{}
			}
			k := d.str()
			graphs[i].Meta[k] = d.str()
		}
		if d.err != nil {
			return nil, nil, d.err
		}
	}
	recs := make([]valueRec, nValues)
	for i := range recs {
		r := &recs[i]
		r.graph = d.index("graph", nGraphs)
		r.name = d.str()
		r.dtype = ir.DType(d.u8())
		if rank := d.count("dim", 2); rank > 0 {
			r.shape = make(ir.Shape, rank-1)
			for k := range r.shape {
				r.shape[k] = ir.Dim{Size: d.iv(), Sym: d.str()}
			}
		}
		r.tensor = d.ref("tensor", nTensors)
		if d.err == nil && !r.dtype.Valid() && r.dtype != ir.Invalid && r.dtype != ir.String {
			d.fail("value %d: bad dtype %d", i, r.dtype)
		}
		if d.err != nil {
			return nil, nil, d.err
		}
	}
	vals := makeValues(recs, graphs, tensors)
	usedGraph := make([]bool, nGraphs)
	defined := make([]bool, nValues)
	for gi, g := range graphs {
		decodeBody(d, g, gi, graphs, vals, recs, tensors, defined, usedGraph)
		if d.err != nil {
			return nil, nil, fmt.Errorf("graph %d (%q): %w", gi, g.Name, d.err)
		}
	}
	d.done()
	if d.err != nil {
		return nil, nil, d.err
	}
	for i, ok := range defined {
		if !ok {
			return nil, nil, fmt.Errorf("%w: value %v is never defined", errCorrupt, vals[i])
		}
	}
	for i := 1; i < nGraphs; i++ {
		if !usedGraph[i] {
			return nil, nil, fmt.Errorf("%w: subgraph %d (%q) is not attached to any node", errCorrupt, i, graphs[i].Name)
		}
	}
	if err := ir.Verify(graphs[0]); err != nil {
		return nil, nil, fmt.Errorf("%w: the decoded graph is invalid: %w", errCorrupt, err)
	}
	return graphs[0], vals, nil
}

func decodeTensor(d *decoder, weights []byte, i int) *ir.Tensor {
	dt := ir.DType(d.u8())
	shape := make([]int64, d.count("dim", 1))
	elems := uint64(1)
	for k := range shape {
		v := d.uv()
		if d.err == nil && (v > math.MaxInt64 || v != 0 && elems > math.MaxInt64/v) {
			d.fail("tensor %d: dim %d too large", i, v)
			return nil
		}
		shape[k] = int64(v)
		elems *= v
	}
	off, length := d.uv(), d.uv()
	if d.err != nil {
		return nil
	}
	if !dt.Valid() {
		d.fail("tensor %d: bad dtype %d", i, dt)
		return nil
	}
	if length > 0 && (off%weightAlign != 0 || off > uint64(len(weights)) || length > uint64(len(weights))-off) {
		d.fail("tensor %d: data [%d, +%d) out of range of the weights section (%d bytes) or not %d-byte aligned",
			i, off, length, len(weights), weightAlign)
		return nil
	}
	t := &ir.Tensor{DType: dt, Shape: shape, Data: []byte{}} // an empty tensor's offset means nothing
	if length > 0 {
		t.Data = weights[off : off+length : off+length]
	}
	if err := t.Check(); err != nil {
		d.fail("tensor %d: %v", i, err)
		return nil
	}
	return t
}

// makeValues creates the values in table order; as the table is in the
// compiled graph's id order, each value gets an id (from the graph's own
// counter, so ids stay unique if a later pass adds values) in the same
// relative order.
func makeValues(recs []valueRec, graphs []*ir.Graph, tensors []*ir.Tensor) []*ir.Value {
	vals := make([]*ir.Value, len(recs))
	for i, r := range recs {
		v := graphs[r.graph].NewValue(r.name, r.dtype, r.shape)
		if r.tensor >= 0 {
			v.Const = tensors[r.tensor]
		}
		vals[i] = v
	}
	return vals
}

func decodeBody(d *decoder, g *ir.Graph, gi int, graphs []*ir.Graph, vals []*ir.Value, recs []valueRec,
	tensors []*ir.Tensor, defined, usedGraph []bool) {
	define := func(what string) *ir.Value {
		i := d.index(what, len(vals))
		if d.err != nil {
			return nil
		}
		if recs[i].graph != gi {
			d.fail("%s %v belongs to graph %d", what, vals[i], recs[i].graph)
		} else if defined[i] {
			d.fail("%s %v is defined twice", what, vals[i])
		}
		defined[i] = true
		return vals[i]
	}
	for k, n := 0, d.count("input", 1); k < n && d.err == nil; k++ {
		g.Inputs = append(g.Inputs, define("input"))
	}
	for k, n := 0, d.count("constant", 1); k < n && d.err == nil; k++ {
		v := define("constant")
		if d.err == nil && v.Const == nil {
			d.fail("constant %v has no tensor", v)
		}
		g.Consts = append(g.Consts, v)
	}
	for k, n := 0, d.count("node", 4); k < n && d.err == nil; k++ {
		node := &ir.Node{Name: d.str(), Op: d.str(), Attrs: ir.Attrs{}}
		for j, m := 0, d.count("node input", 1); j < m && d.err == nil; j++ {
			var in *ir.Value
			if r := d.ref("value", len(vals)); r >= 0 {
				in = vals[r]
			}
			node.Inputs = append(node.Inputs, in)
		}
		for j, m := 0, d.count("node output", 1); j < m && d.err == nil; j++ {
			o := define("output")
			if d.err == nil {
				if o.Const != nil {
					d.fail("node output %v is a constant", o)
				}
				o.Producer = node
			}
			node.Outputs = append(node.Outputs, o)
		}
		for j, m := 0, d.count("attribute", 2); j < m && d.err == nil; j++ {
			name := d.str()
			if _, dup := node.Attrs[name]; dup && d.err == nil {
				d.fail("node %v: attribute %q twice", node, name)
			}
			node.Attrs[name] = decodeAttr(d, gi, graphs, tensors, usedGraph)
			if d.err != nil {
				d.err = fmt.Errorf("node %d %v: attribute %q: %w", k, node, name, d.err)
			}
		}
		g.Nodes = append(g.Nodes, node)
	}
	for k, n := 0, d.count("output", 1); k < n && d.err == nil; k++ {
		var o *ir.Value
		if r := d.ref("value", len(vals)); r >= 0 {
			o = vals[r]
		}
		g.Outputs = append(g.Outputs, o)
	}
}

func decodeAttr(d *decoder, gi int, graphs []*ir.Graph, tensors []*ir.Tensor, usedGraph []bool) *ir.Attr {
	a := &ir.Attr{Kind: ir.AttrKind(d.u8())}
	sub := func() *ir.Graph {
		i := d.index("subgraph", len(graphs))
		if d.err != nil {
			return nil
		}
		if graphs[i].Parent != graphs[gi] {
			d.fail("subgraph %d (%q) is not a child of graph %d", i, graphs[i].Name, gi)
		} else if usedGraph[i] {
			d.fail("subgraph %d (%q) is attached twice", i, graphs[i].Name)
		}
		usedGraph[i] = true
		return graphs[i]
	}
	switch a.Kind {
	case ir.AttrInt:
		a.Int = d.iv()
	case ir.AttrFloat:
		a.Float = d.f32()
	case ir.AttrString:
		a.Str = d.str()
	case ir.AttrInts:
		a.Ints = make([]int64, d.count("int", 1))
		for i := range a.Ints {
			a.Ints[i] = d.iv()
		}
	case ir.AttrFloats:
		a.Floats = make([]float32, d.count("float", 4))
		for i := range a.Floats {
			a.Floats[i] = d.f32()
		}
	case ir.AttrStrings:
		a.Strings = make([]string, d.count("string", 1))
		for i := range a.Strings {
			a.Strings[i] = d.str()
		}
	case ir.AttrTensor:
		if i := d.index("tensor", len(tensors)); d.err == nil {
			a.Tensor = tensors[i]
		}
	case ir.AttrGraph:
		a.Graph = sub()
	case ir.AttrGraphs:
		a.Graphs = make([]*ir.Graph, d.count("subgraph", 1))
		for i := range a.Graphs {
			a.Graphs[i] = sub()
		}
	default:
		d.fail("unknown attribute kind %d", a.Kind)
	}
	return a
}

// value reads a required value index.
func (d *decoder) value(vals []*ir.Value) *ir.Value {
	i := d.index("value", len(vals))
	if d.err != nil {
		return nil
	}
	return vals[i]
}

func decodeSchedule(b []byte, p *Plan, vals []*ir.Value) error {
	d := &decoder{b: b}
	nodes := p.Graph.Nodes
	placed := make([]bool, len(nodes))
	for k, n := 0, d.count("partition", 4); k < n && d.err == nil; k++ {
		part := &Partition{Index: int(d.iv()), Device: d.str()}
		if d.err == nil && part.Index != k {
			d.fail("partition %d has index %d", k, part.Index)
		}
		for j, m := 0, d.count("node", 1); j < m && d.err == nil; j++ {
			i := d.index("node", len(nodes))
			if d.err != nil {
				break
			}
			if placed[i] {
				d.fail("node %d %v is in two partitions", i, nodes[i])
			}
			placed[i] = true
			part.Nodes = append(part.Nodes, nodes[i])
		}
		for j, m := 0, d.count("cause", 1); j < m && d.err == nil; j++ {
			part.Causes = append(part.Causes, d.str())
		}
		if d.err == nil && len(part.Causes) != 0 && len(part.Causes) != len(part.Nodes) {
			d.fail("partition %d has %d causes for %d nodes", k, len(part.Causes), len(part.Nodes))
		}
		for j, m := 0, d.count("partition input", 1); j < m && d.err == nil; j++ {
			part.Inputs = append(part.Inputs, d.value(vals))
		}
		for j, m := 0, d.count("partition output", 1); j < m && d.err == nil; j++ {
			part.Outputs = append(part.Outputs, d.value(vals))
		}
		p.Partitions = append(p.Partitions, part)
	}
	d.done()
	if d.err != nil {
		return d.err
	}
	for i, ok := range placed {
		if !ok {
			return fmt.Errorf("%w: node %d %v is in no partition", errCorrupt, i, nodes[i])
		}
	}
	return nil
}

func decodeMemory(b []byte, p *Plan, vals []*ir.Value) error {
	d := &decoder{b: b}
	for k, n := 0, d.count("arena", 2); k < n && d.err == nil; k++ {
		a := Arena{Device: d.str(), Size: d.iv()}
		if d.err == nil && a.Size < 0 {
			d.fail("arena %d has negative size %d", k, a.Size)
		}
		p.Arenas = append(p.Arenas, a)
	}
	for k, n := 0, d.count("buffer", 6); k < n && d.err == nil; k++ {
		bf := Buffer{Value: d.value(vals), Device: d.str(), Bytes: d.iv(), Arena: int(d.iv()), Offset: d.iv()}
		if r := d.ref("value", len(vals)); r >= 0 {
			bf.InPlaceOf = vals[r]
		}
		switch {
		case d.err != nil:
		case bf.Bytes < -1:
			d.fail("buffer %d (%v): size %d", k, bf.Value, bf.Bytes)
		case bf.Offset < -1:
			d.fail("buffer %d (%v): offset %d", k, bf.Value, bf.Offset)
		case bf.Offset >= 0 && (bf.Arena < 0 || bf.Arena >= len(p.Arenas)):
			d.fail("buffer %d (%v): arena %d out of range (have %d)", k, bf.Value, bf.Arena, len(p.Arenas))
		case bf.Offset >= 0 && (bf.Bytes < 0 || bf.Offset > p.Arenas[bf.Arena].Size-bf.Bytes):
			d.fail("buffer %d (%v): bytes [%d, +%d) outside arena %d (%d bytes)", k, bf.Value, bf.Offset, bf.Bytes, bf.Arena, p.Arenas[bf.Arena].Size)
		}
		p.Buffers = append(p.Buffers, bf)
	}
	d.done()
	return d.err
}
