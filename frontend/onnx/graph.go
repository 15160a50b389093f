package onnx

import (
	"fmt"
	"sort"

	"github.com/weftrt/weft/ir"
)

// Supported range of the default-domain ("" / "ai.onnx") operator set.
// Models below opset 7 are imported only where each node's operator is the
// same version as at opset 7 (see legacy.go).
const (
	MinOpset = 1
	MaxOpset = 21
)

// importer carries what every graph of one model shares.
type importer struct {
	file   string
	ext    externalSource
	opsets map[string]int64
	opset  int64 // default domain
}

func (im *importer) setOpsets(ids []opsetID) error {
	for _, id := range ids {
		d := id.domain
		if d == "ai.onnx" {
			d = ""
		}
		im.opsets[d] = id.version
	}
	v, ok := im.opsets[""]
	if !ok {
		if len(im.opsets) > 0 {
			domains := make([]string, 0, len(im.opsets))
			for d := range im.opsets {
				domains = append(domains, d)
			}
			sort.Strings(domains)
			return fmt.Errorf("model imports only non-default operator domains %q: %w", domains, ir.ErrUnsupported)
		}
		return fmt.Errorf("model imports no default-domain (ai.onnx) opset")
	}
	if v < MinOpset || v > MaxOpset {
		return fmt.Errorf("default-domain opset %d (weft handles %d..%d): %w", v, MinOpset, MaxOpset, ir.ErrUnsupported)
	}
	im.opset = v
	return nil
}

// scope maps ONNX value names to values; subgraphs see their parents' names.
type scope struct {
	parent *scope
	vals   map[string]*ir.Value
	types  map[string]*typeProto // value_info declarations of this graph
}

func (s *scope) lookup(name string) *ir.Value {
	for ; s != nil; s = s.parent {
		if v, ok := s.vals[name]; ok {
			return v
		}
	}
	return nil
}

func (s *scope) define(name string, v *ir.Value) error {
	if _, dup := s.vals[name]; dup {
		return fmt.Errorf("value %q is defined twice", name)
	}
	s.vals[name] = v
	return nil
}

// declType converts a declared TypeProto into a dtype and shape. A missing
// type gives (Invalid, nil); non-tensor types are unsupported.
func declType(tp *typeProto) (ir.DType, ir.Shape, error) {
	if tp == nil || tp.kind == typeNone {
		return ir.Invalid, nil, nil
	}
	if tp.kind != typeTensor {
		return ir.Invalid, nil, fmt.Errorf("%s types: %w", typeKindName[tp.kind], ir.ErrUnsupported)
	}
	dt := ir.Invalid
	if tp.elemType != dtUndefined {
		var err error
		if dt, err = DType(int64(tp.elemType)); err != nil {
			return ir.Invalid, nil, err
		}
	}
	if !tp.hasShape {
		return dt, nil, nil
	}
	shape := make(ir.Shape, len(tp.shape))
	for i, d := range tp.shape {
		switch {
		case d.hasValue && d.value >= 0:
			shape[i] = ir.Dim{Size: d.value}
		case d.param != "":
			shape[i] = ir.Sym(d.param)
		default:
			shape[i] = ir.Dim{Size: -1}
		}
	}
	return dt, shape, nil
}

// annotate fills v's dtype and shape from a declaration where still unknown.
func annotate(v *ir.Value, tp *typeProto) error {
	dt, shape, err := declType(tp)
	if err != nil {
		return err
	}
	if v.DType == ir.Invalid {
		v.DType = dt
	}
	if v.Shape == nil && shape != nil {
		v.Shape = shape
	}
	return nil
}

// buildGraph imports gp into g. parent is the enclosing scope (nil for the
// top-level graph).
func (im *importer) buildGraph(gp *graphProto, g *ir.Graph, parent *scope) error {
	sc := &scope{parent: parent, vals: map[string]*ir.Value{}, types: map[string]*typeProto{}}
	if gp.nSparseInit > 0 {
		return fmt.Errorf("graph %q: sparse initializers: %w", g.Name, ir.ErrUnsupported)
	}
	for _, tp := range gp.inits {
		if tp.name == "" {
			return fmt.Errorf("graph %q: initializer without a name", g.Name)
		}
		t, err := convertTensor(tp, im.ext)
		if err != nil {
			return fmt.Errorf("graph %q: initializer: %w", g.Name, err)
		}
		if err := sc.define(tp.name, g.AddConst(tp.name, t)); err != nil {
			return fmt.Errorf("graph %q: initializer: %w", g.Name, err)
		}
	}
	for _, vi := range gp.inputs {
		if v, ok := sc.vals[vi.name]; ok && v.IsConst() {
			continue // an initializer listed as input (IR < 4): a constant
		}
		if vi.name == "" {
			return fmt.Errorf("graph %q: input without a name", g.Name)
		}
		dt, shape, err := declType(vi.typ)
		if err != nil {
			return fmt.Errorf("graph %q: input %q: %w", g.Name, vi.name, err)
		}
		if err := sc.define(vi.name, g.AddInput(vi.name, dt, shape)); err != nil {
			return fmt.Errorf("graph %q: input: %w", g.Name, err)
		}
	}
	for _, vi := range gp.valueInfo {
		if vi.typ != nil && vi.typ.kind != typeTensor && vi.typ.kind != typeNone {
			return fmt.Errorf("graph %q: value %q has a %s type: %w", g.Name, vi.name, typeKindName[vi.typ.kind], ir.ErrUnsupported)
		}
		sc.types[vi.name] = vi.typ
	}
	for _, vi := range gp.outputs {
		if vi.typ != nil && vi.typ.kind != typeTensor && vi.typ.kind != typeNone {
			return fmt.Errorf("graph %q: output %q has a %s type: %w", g.Name, vi.name, typeKindName[vi.typ.kind], ir.ErrUnsupported)
		}
	}
	for i, np := range gp.nodes {
		if err := im.importNode(np, i, g, sc); err != nil {
			return err
		}
	}
	for _, vi := range gp.outputs {
		v := sc.lookup(vi.name)
		if v == nil {
			return fmt.Errorf("graph %q: output %q is not produced by any node, input or initializer", g.Name, vi.name)
		}
		if v.Producer == nil || v.Graph != g {
			// Outputs are always produced by a node of their graph; this keeps
			// the runtime free of input-to-output and constant-output aliasing.
			n := g.AddNode("Identity", vi.name+"_identity", []*ir.Value{v}, 1, nil)
			out := n.Outputs[0]
			out.Name, out.DType, out.Shape = vi.name, v.DType, v.Shape.Clone()
			v = out
		}
		if err := annotate(v, vi.typ); err != nil {
			return fmt.Errorf("graph %q: output %q: %w", g.Name, vi.name, err)
		}
		g.Outputs = append(g.Outputs, v)
	}
	return nil
}
