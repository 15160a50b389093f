package onnx

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/weftrt/weft/ir"
)

// The default-domain opsets Write can target. Below 13 the core ops'
// canonical forms (Squeeze/Unsqueeze/Split/ReduceSum inputs) do not exist.
const (
	MinWriteOpset = 13
	MaxWriteOpset = MaxOpset
)

// irVersionFor is the ONNX IR version that introduced each opset's release
// (onnx 1.12: IR 8 / opset 17, 1.13: 8 / 18, 1.14: 9 / 19, 1.15: 9 / 20,
// 1.16: 10 / 21). Older opsets are written with IR 8.
func irVersionFor(opset int64) int64 {
	switch {
	case opset >= 21:
		return 10
	case opset >= 19:
		return 9
	}
	return 8
}

// maxProtoSize is protobuf's 2 GiB message limit; larger models need
// external data, which Write does not produce.
const maxProtoSize = math.MaxInt32

// Write encodes g as an ONNX ModelProto importing the default-domain opset
// given (MinWriteOpset..MaxWriteOpset): graph inputs, outputs and value_info
// with their dtypes and shapes (symbolic dims as dim_param), constants as
// initializers with raw_data, nodes with all their attributes (subgraphs
// included). Core ops are written in the form of the target opset where the
// canonical form is newer (Reduce* axes and DFT axis inputs become
// attributes when constant); weft's own ops (ir.WeftOps), quantized dtypes,
// weft-internal attributes and forms the target opset cannot express fail
// with an error wrapping ir.ErrUnsupported that names the node.
//
// Values keep their names where these are unique; unnamed and clashing
// values get fresh ones. Graph inputs and outputs must have distinct names.
// Weights are streamed from the graph's tensors, not copied.
func Write(w io.Writer, g *ir.Graph, opset int64) error {
	m, err := encodeModel(g, opset)
	if err != nil {
		return fmt.Errorf("onnx: write %q: %w", graphName(g), err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := m.writeTo(bw); err != nil {
		return fmt.Errorf("onnx: write %q: %w", graphName(g), err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("onnx: write %q: %w", graphName(g), err)
	}
	return nil
}

// WriteFile writes g to path (see Write). On failure no partial file is left.
func WriteFile(path string, g *ir.Graph, opset int64) (err error) {
	m, err := encodeModel(g, opset)
	if err != nil {
		return fmt.Errorf("onnx: write %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("onnx: write: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("onnx: write %s: %w", path, cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := m.writeTo(bw); err != nil {
		return fmt.Errorf("onnx: write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("onnx: write %s: %w", path, err)
	}
	return nil
}

// Marshal returns the encoded model (see Write).
func Marshal(g *ir.Graph, opset int64) ([]byte, error) {
	m, err := encodeModel(g, opset)
	if err != nil {
		return nil, fmt.Errorf("onnx: write %q: %w", graphName(g), err)
	}
	out := make([]byte, 0, m.size())
	for _, s := range m.segs {
		out = append(out, s...)
	}
	return append(out, m.tail...), nil
}

func graphName(g *ir.Graph) string {
	if g == nil {
		return "<nil>"
	}
	return g.Name
}

// writer holds what the encoding of one model shares.
type writer struct {
	opset     int64
	names     map[*ir.Value]string
	used      map[string]bool // value names taken, model-wide (ONNX forbids shadowing)
	nodeNames map[string]bool
	nodes     map[*ir.Node]*wnode
	refs      map[*ir.Value]bool // values that written nodes or outputs read
}

// wnode is a node as it will be written: inputs and attributes in the
// target opset's form.
type wnode struct {
	inputs []*ir.Value
	attrs  ir.Attrs
}

func encodeModel(g *ir.Graph, opset int64) (*pbuf, error) {
	if g == nil {
		return nil, errors.New("nil graph")
	}
	if g.Parent != nil {
		return nil, fmt.Errorf("graph %q is a subgraph; write its top-level graph", g.Name)
	}
	if opset < MinWriteOpset || opset > MaxWriteOpset {
		return nil, fmt.Errorf("opset %d (weft writes %d..%d): %w", opset, MinWriteOpset, MaxWriteOpset, ir.ErrUnsupported)
	}
	if err := ir.Verify(g); err != nil {
		return nil, fmt.Errorf("graph does not verify: %w", err)
	}
	w := &writer{
		opset: opset, names: map[*ir.Value]string{}, used: map[string]bool{},
		nodeNames: map[string]bool{}, nodes: map[*ir.Node]*wnode{}, refs: map[*ir.Value]bool{},
	}
	if err := w.convertAll(g); err != nil {
		return nil, err
	}
	if err := w.reserveIO(g); err != nil {
		return nil, err
	}
	gp, err := w.graph(g)
	if err != nil {
		return nil, err
	}
	if gp.size() > maxProtoSize {
		return nil, fmt.Errorf("the model needs %d bytes, over protobuf's 2 GiB limit (external data: %w)", gp.size(), ir.ErrUnsupported)
	}
	m := &pbuf{}
	m.varint(1, irVersionFor(opset))
	m.str(2, "weft")
	m.msg(7, gp)
	op := &pbuf{}
	op.str(1, "")
	op.varint(2, opset)
	m.msg(8, op)
	return m, nil
}

// convertAll restates every node of g and its subgraphs in the target
// opset's form and records the values they read.
func (w *writer) convertAll(g *ir.Graph) error {
	var errs error
	g.Walk(func(sg *ir.Graph) {
		if errs != nil {
			return
		}
		for i, n := range sg.Nodes {
			wn, err := w.convert(n)
			if err != nil {
				errs = fmt.Errorf("graph %q: node %d %v: %w", sg.Name, i, n, err)
				return
			}
			w.nodes[n] = wn
			for _, in := range wn.inputs {
				if in != nil {
					w.refs[in] = true
				}
			}
		}
		for _, o := range sg.Outputs {
			w.refs[o] = true
		}
	})
	return errs
}

// reserveIO gives the top-level inputs and outputs their own names, which
// callers bind by and which must be distinct; then the inputs and outputs of
// subgraphs, so that they keep theirs unless an outer name takes it.
func (w *writer) reserveIO(g *ir.Graph) error {
	for i, v := range g.Inputs {
		name := v.Name
		if name == "" {
			name = "input_" + strconv.Itoa(i)
		}
		if w.used[name] {
			return fmt.Errorf("two graph inputs are named %q", name)
		}
		w.used[name], w.names[v] = true, name
	}
	for i, v := range g.Outputs {
		if _, done := w.names[v]; done {
			continue // an input, or an output listed twice
		}
		name := v.Name
		if name == "" {
			name = "output_" + strconv.Itoa(i)
		}
		if w.used[name] {
			// The importer names the Identity it puts behind an output that
			// is an input after that input; ONNX has no two values of one name.
			return fmt.Errorf("graph output %q has the name of another input or output: %w", name, ir.ErrUnsupported)
		}
		w.used[name], w.names[v] = true, name
	}
	g.Walk(func(sg *ir.Graph) {
		if sg == g {
			return
		}
		for _, v := range sg.Inputs {
			w.name(v)
		}
		for _, v := range sg.Outputs {
			if v.Graph == sg && !v.IsConst() {
				w.name(v)
			}
		}
	})
	return nil
}

// name returns the value's name in the written model, choosing one on first use.
func (w *writer) name(v *ir.Value) string {
	if s, ok := w.names[v]; ok {
		return s
	}
	base := v.Name
	if base == "" {
		base = "v" + strconv.Itoa(v.ID)
	}
	s := w.fresh(base)
	w.names[v] = s
	return s
}

// fresh reserves and returns a value name not used yet, base if possible.
func (w *writer) fresh(base string) string {
	s := base
	for k := 1; w.used[s]; k++ {
		s = base + "_" + strconv.Itoa(k)
	}
	w.used[s] = true
	return s
}

func (w *writer) nodeName(n *ir.Node, idx int) string {
	base := n.Name
	if base == "" {
		base = n.Op + "_" + strconv.Itoa(idx)
	}
	s := base
	for k := 1; w.nodeNames[s]; k++ {
		s = base + "_" + strconv.Itoa(k)
	}
	w.nodeNames[s] = true
	return s
}

// graph encodes a GraphProto.
func (w *writer) graph(g *ir.Graph) (*pbuf, error) {
	gp := &pbuf{}
	for i, n := range g.Nodes {
		np, err := w.node(n, i)
		if err != nil {
			return nil, fmt.Errorf("graph %q: node %d %v: %w", g.Name, i, n, err)
		}
		gp.msg(1, np)
	}
	// A subgraph output that its graph does not compute (an outer value, an
	// input or a constant) goes through an Identity, as the importer would
	// insert anyway, so that every output is produced inside the subgraph.
	outNames := make([]string, len(g.Outputs))
	for i, v := range g.Outputs {
		outNames[i] = w.name(v)
		if g.Parent == nil || (v.Producer != nil && v.Graph == g) {
			continue
		}
		outNames[i] = w.fresh(w.name(v) + "_out")
		np := &pbuf{}
		np.str(1, w.name(v))
		np.str(2, outNames[i])
		np.str(3, w.nodeName(&ir.Node{Name: outNames[i] + "_identity"}, 0))
		np.str(4, "Identity")
		gp.msg(1, np)
	}
	gp.str(2, g.Name)
	for _, c := range g.Consts {
		if !w.refs[c] {
			continue // unused, or only read as an attribute now
		}
		tp, err := w.tensor(w.name(c), c.Const)
		if err != nil {
			return nil, fmt.Errorf("graph %q: constant %q: %w", g.Name, c.Name, err)
		}
		gp.msg(5, tp)
	}
	for _, v := range g.Inputs {
		vi, err := w.valueInfo(w.name(v), v, true)
		if err != nil {
			return nil, fmt.Errorf("graph %q: input %q: %w", g.Name, v.Name, err)
		}
		gp.msg(11, vi)
	}
	for i, v := range g.Outputs {
		vi, err := w.valueInfo(outNames[i], v, true)
		if err != nil {
			return nil, fmt.Errorf("graph %q: output %q: %w", g.Name, v.Name, err)
		}
		gp.msg(12, vi)
	}
	outs := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		outs[v] = true
	}
	for _, n := range g.Nodes {
		for _, v := range n.Outputs {
			if outs[v] || (!v.DType.Valid() && v.Shape == nil) {
				continue
			}
			vi, err := w.valueInfo(w.name(v), v, false)
			if err != nil {
				return nil, fmt.Errorf("graph %q: value %q: %w", g.Name, w.name(v), err)
			}
			gp.msg(13, vi)
		}
	}
	return gp, nil
}

// node encodes a NodeProto.
func (w *writer) node(n *ir.Node, idx int) (*pbuf, error) {
	wn := w.nodes[n]
	np := &pbuf{}
	ins := wn.inputs
	for len(ins) > 0 && ins[len(ins)-1] == nil {
		ins = ins[:len(ins)-1]
	}
	for _, in := range ins {
		if in == nil {
			np.str(1, "")
		} else {
			np.str(1, w.name(in))
		}
	}
	for _, o := range n.Outputs {
		np.str(2, w.name(o))
	}
	np.str(3, w.nodeName(n, idx))
	np.str(4, n.Op)
	for _, k := range wn.attrs.Names() {
		ap, err := w.attr(k, wn.attrs[k])
		if err != nil {
			return nil, err
		}
		np.msg(5, ap)
	}
	return np, nil
}

// attr encodes an AttributeProto.
func (w *writer) attr(name string, a *ir.Attr) (*pbuf, error) {
	ap := &pbuf{}
	ap.str(1, name)
	switch a.Kind {
	case ir.AttrFloat:
		ap.f32(2, a.Float)
		ap.varint(20, atFloat)
	case ir.AttrInt:
		ap.varint(3, a.Int)
		ap.varint(20, atInt)
	case ir.AttrString:
		ap.str(4, a.Str)
		ap.varint(20, atString)
	case ir.AttrTensor:
		tp, err := w.tensor("", a.Tensor)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", name, err)
		}
		ap.msg(5, tp)
		ap.varint(20, atTensor)
	case ir.AttrGraph:
		gp, err := w.graph(a.Graph)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", name, err)
		}
		ap.msg(6, gp)
		ap.varint(20, atGraph)
	case ir.AttrFloats:
		ap.packedF32(7, a.Floats)
		ap.varint(20, atFloats)
	case ir.AttrInts:
		ap.packedVarints(8, a.Ints)
		ap.varint(20, atInts)
	case ir.AttrStrings:
		for _, s := range a.Strings {
			ap.str(9, s)
		}
		ap.varint(20, atStrings)
	case ir.AttrGraphs:
		for _, g := range a.Graphs {
			gp, err := w.graph(g)
			if err != nil {
				return nil, fmt.Errorf("attribute %q: %w", name, err)
			}
			ap.msg(11, gp)
		}
		ap.varint(20, atGraphs)
	default:
		return nil, fmt.Errorf("attribute %q has unknown kind %d", name, a.Kind)
	}
	return ap, nil
}

// tensor encodes a TensorProto with raw_data (little-endian, as ir keeps it).
func (w *writer) tensor(name string, t *ir.Tensor) (*pbuf, error) {
	code := ONNXDType(t.DType)
	if code == dtUndefined {
		return nil, fmt.Errorf("%v tensors have no ONNX type: %w", t.DType, ir.ErrUnsupported)
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	tp := &pbuf{}
	if len(t.Shape) > 0 {
		tp.packedVarints(1, t.Shape)
	}
	tp.varint(2, code)
	if name != "" {
		tp.str(8, name)
	}
	tp.bytes(9, t.Data)
	return tp, nil
}

// valueInfo encodes a ValueInfoProto with a tensor type. Graph inputs and
// outputs always get a type (possibly without element type or shape).
func (w *writer) valueInfo(name string, v *ir.Value, io bool) (*pbuf, error) {
	vi := &pbuf{}
	vi.str(1, name)
	if !io && !v.DType.Valid() && v.Shape == nil {
		return vi, nil
	}
	tt := &pbuf{}
	if v.DType != ir.Invalid {
		code := ONNXDType(v.DType)
		if code == dtUndefined {
			return nil, fmt.Errorf("%v values have no ONNX type: %w", v.DType, ir.ErrUnsupported)
		}
		tt.varint(1, code)
	}
	if v.Shape != nil {
		sh := &pbuf{}
		for _, d := range v.Shape {
			dp := &pbuf{}
			switch {
			case d.Known():
				dp.varint(1, d.Size)
			case d.Sym != "":
				dp.str(2, d.Sym)
			}
			sh.msg(1, dp)
		}
		tt.msg(2, sh)
	}
	tp := &pbuf{}
	tp.msg(1, tt)
	vi.msg(2, tp)
	return vi, nil
}

// isWeftOp reports whether op is one of weft's own core ops.
func isWeftOp(op string) bool { return slices.Contains(ir.WeftOps, op) }
