package onnx

import (
	"errors"
	"fmt"

	"github.com/weftrt/weft/ir"
)

// importNode converts one NodeProto through the op table and binds its
// output names in sc.
func (im *importer) importNode(np *nodeProto, idx int, g *ir.Graph, sc *scope) error {
	name := np.name
	if name == "" {
		name = fmt.Sprintf("%s_%d", np.op, idx)
	}
	c := &nodeCtx{im: im, g: g, sc: sc, name: name, op: np.op, opset: im.opset}
	if err := im.importNode1(c, np); err != nil {
		// Errors nest naturally: a subgraph node's error is wrapped by its
		// parent node's context.
		if g.Parent != nil {
			return fmt.Errorf("graph %q: %s: %w", g.Name, c.where(), err)
		}
		return fmt.Errorf("%s: %w", c.where(), err)
	}
	return nil
}

func (im *importer) importNode1(c *nodeCtx, np *nodeProto) error {
	if np.op == "" {
		return errors.New("node has no op_type")
	}
	if np.domain != "" && np.domain != "ai.onnx" {
		return fmt.Errorf("operator domain %q: %w", np.domain, ir.ErrUnsupported)
	}
	spec, ok := opTable[np.op]
	if !ok {
		if why, known := unsupportedOps[np.op]; known {
			return fmt.Errorf("op %s (%s): %w", np.op, why, ir.ErrUnsupported)
		}
		return fmt.Errorf("op %s is not a known ONNX operator: %w", np.op, ir.ErrUnsupported)
	}
	if c.opset < spec.since {
		return fmt.Errorf("op %s needs opset >= %d: %w", np.op, spec.since, ir.ErrUnsupported)
	}
	if spec.until != 0 && c.opset >= spec.until {
		return fmt.Errorf("op %s was removed in opset %d: %w", np.op, spec.until, ir.ErrUnsupported)
	}
	legacyFix, err := checkLegacyOpset(np.op, c.opset)
	if err != nil {
		return err
	}
	if err := checkArity(np.op, len(np.inputs), len(np.outputs)); err != nil {
		return err
	}
	for _, in := range np.inputs {
		if in == "" {
			c.inputs = append(c.inputs, nil)
			continue
		}
		v := c.sc.lookup(in)
		if v == nil {
			return fmt.Errorf("input %q is not defined (by an earlier node, an input or an initializer)", in)
		}
		c.inputs = append(c.inputs, v)
	}
	for len(c.inputs) > 0 && c.inputs[len(c.inputs)-1] == nil {
		c.inputs = c.inputs[:len(c.inputs)-1]
	}
	c.outNames = np.outputs
	if !spec.keepOutputs {
		for len(c.outNames) > 0 && c.outNames[len(c.outNames)-1] == "" {
			c.outNames = c.outNames[:len(c.outNames)-1]
		}
	}
	attrs, err := im.convertAttrs(c, np.attrs)
	if err != nil {
		return err
	}
	c.attrs = attrs
	if err := checkAttrKinds(np.op, attrs); err != nil {
		return err
	}
	if legacyFix != nil {
		if err := legacyFix(c); err != nil {
			return err
		}
	}
	if err := spec.fn(c); err != nil {
		return err
	}
	if !c.emitted {
		return errors.New("importer produced nothing (internal error)")
	}
	if c.bindErr != nil {
		return c.bindErr
	}
	return nil
}

// convertAttrs turns AttributeProtos into ir.Attrs; graph attributes are
// imported as subgraphs of c.g that can see c's scope.
func (im *importer) convertAttrs(c *nodeCtx, aps []*attrProto) (ir.Attrs, error) {
	attrs := ir.Attrs{}
	for _, ap := range aps {
		if ap.name == "" {
			return nil, errors.New("attribute without a name")
		}
		if _, dup := attrs[ap.name]; dup {
			return nil, fmt.Errorf("attribute %q given twice", ap.name)
		}
		if ap.refAttrName != "" {
			return nil, fmt.Errorf("attribute %q refers to function attribute %q: %w", ap.name, ap.refAttrName, ir.ErrUnsupported)
		}
		a := &ir.Attr{}
		switch ap.typ {
		case atFloat:
			a.Kind, a.Float = ir.AttrFloat, ap.f
		case atInt:
			a.Kind, a.Int = ir.AttrInt, ap.i
		case atString:
			a.Kind, a.Str = ir.AttrString, string(ap.s)
		case atFloats:
			a.Kind, a.Floats = ir.AttrFloats, append([]float32{}, ap.floats...)
		case atInts:
			a.Kind, a.Ints = ir.AttrInts, append([]int64{}, ap.ints...)
		case atStrings:
			a.Kind = ir.AttrStrings
			a.Strings = []string{}
			for _, s := range ap.strings {
				a.Strings = append(a.Strings, string(s))
			}
		case atTensor:
			if ap.t == nil {
				return nil, fmt.Errorf("attribute %q: tensor attribute without a tensor", ap.name)
			}
			t, err := convertTensor(ap.t, im.ext)
			if err != nil {
				return nil, fmt.Errorf("attribute %q: %w", ap.name, err)
			}
			a.Kind, a.Tensor = ir.AttrTensor, t
		case atGraph:
			if ap.g == nil {
				return nil, fmt.Errorf("attribute %q: graph attribute without a graph", ap.name)
			}
			sg, err := im.subgraph(c, ap.name, ap.g)
			if err != nil {
				return nil, err
			}
			a.Kind, a.Graph = ir.AttrGraph, sg
		case atGraphs:
			a.Kind = ir.AttrGraphs
			for _, gp := range ap.graphs {
				sg, err := im.subgraph(c, ap.name, gp)
				if err != nil {
					return nil, err
				}
				a.Graphs = append(a.Graphs, sg)
			}
		case atTensors:
			return nil, fmt.Errorf("attribute %q: tensor-list attributes: %w", ap.name, ir.ErrUnsupported)
		case atSparseTensor, atSparseTens:
			return nil, fmt.Errorf("attribute %q: sparse tensors: %w", ap.name, ir.ErrUnsupported)
		case atTypeProto, atTypeProtos:
			return nil, fmt.Errorf("attribute %q: type-proto attributes: %w", ap.name, ir.ErrUnsupported)
		case atUndefined:
			return nil, fmt.Errorf("attribute %q has no value", ap.name)
		default:
			return nil, fmt.Errorf("attribute %q has unknown type %d", ap.name, ap.typ)
		}
		attrs[ap.name] = a
	}
	return attrs, nil
}

func (im *importer) subgraph(c *nodeCtx, attr string, gp *graphProto) (*ir.Graph, error) {
	name := gp.name
	if name == "" {
		name = c.name + "_" + attr
	}
	sg := c.g.NewSubgraph(name)
	if err := im.buildGraph(gp, sg, c.sc); err != nil {
		return nil, fmt.Errorf("attribute %q: %w", attr, err)
	}
	return sg, nil
}

var kindNames = map[ir.AttrKind]string{
	ir.AttrInt: "int", ir.AttrFloat: "float", ir.AttrString: "string", ir.AttrInts: "ints",
	ir.AttrFloats: "floats", ir.AttrStrings: "strings", ir.AttrTensor: "tensor",
	ir.AttrGraph: "graph", ir.AttrGraphs: "graphs",
}

func kindName(k ir.AttrKind) string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", k)
}
