package onnx

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

// importFunc lowers one ONNX node into c.g; it must call c.emit or c.bind
// for the node's outputs.
type importFunc func(c *nodeCtx) error

// opSpec describes one ONNX operator: the opset range in which weft imports
// it and the function that does so (which branches on c.opset for
// version-specific forms).
type opSpec struct {
	since       int64 // first opset that defines the op
	until       int64 // first opset that no longer does (0: still current)
	fn          importFunc
	keepOutputs bool // output count is semantic: keep trailing empty outputs
}

// opTable is filled by the init functions of the ops_*.go files.
var opTable = map[string]*opSpec{}

func register(op string, since int64, fn importFunc) *opSpec {
	if _, dup := opTable[op]; dup {
		panic("onnx: op registered twice: " + op)
	}
	s := &opSpec{since: since, fn: fn}
	opTable[op] = s
	return s
}

// registerSame registers ops that import 1:1 as the core op of the same name.
func registerSame(since int64, ops ...string) {
	for _, op := range ops {
		register(op, since, same)
	}
}

// Ops returns the supported ONNX operators with the first opset weft
// imports them from (for documentation and the CLI).
func Ops() map[string]int64 {
	out := make(map[string]int64, len(opTable))
	for k, s := range opTable {
		out[k] = max(s.since, MinOpset)
	}
	return out
}

// same imports the node unchanged.
func same(c *nodeCtx) error {
	c.emit(c.op, c.inputs, c.attrs)
	return nil
}

// nodeCtx is what an importFunc sees of one node.
type nodeCtx struct {
	im       *importer
	g        *ir.Graph
	sc       *scope
	name     string // ONNX node name or "<Op>_<index>"
	op       string
	opset    int64
	inputs   []*ir.Value // nil for absent optional inputs; trailing nils trimmed
	outNames []string
	attrs    ir.Attrs
	emitted  bool
	bindErr  error // first binding error (name defined twice, bad declared type)
}

func (c *nodeCtx) where() string {
	return fmt.Sprintf("node %q (%s, opset %d)", c.name, c.op, c.opset)
}

// in returns input i or nil.
func (c *nodeCtx) in(i int) *ir.Value {
	if i < len(c.inputs) {
		return c.inputs[i]
	}
	return nil
}

// need checks that inputs [0, n) are present.
func (c *nodeCtx) need(n int) error {
	for i := 0; i < n; i++ {
		if c.in(i) == nil {
			return fmt.Errorf("missing required input %d", i)
		}
	}
	return nil
}

// emit appends the core node op(inputs) with attrs; its outputs are the
// ONNX node's outputs, bound by name. It returns nil when the node has no
// outputs left and was dropped.
func (c *nodeCtx) emit(op string, inputs []*ir.Value, attrs ir.Attrs) *ir.Node {
	for len(inputs) > 0 && inputs[len(inputs)-1] == nil {
		inputs = inputs[:len(inputs)-1]
	}
	if len(c.outNames) == 0 {
		// Every output unnamed: core ops are pure, so the node is dead.
		c.emitted = true
		return nil
	}
	n := c.g.AddNode(op, c.name, inputs, 0, attrs)
	for _, name := range c.outNames {
		v := c.g.NewValue(name, ir.Invalid, nil)
		v.Producer = n
		n.Outputs = append(n.Outputs, v)
	}
	c.bindAll(n.Outputs)
	return n
}

// bindAll binds the ONNX output names to vals (same length as outNames).
func (c *nodeCtx) bindAll(vals []*ir.Value) {
	c.emitted = true
	for i, name := range c.outNames {
		if name == "" {
			continue
		}
		if err := c.sc.define(name, vals[i]); err != nil {
			// A name defined twice makes the model invalid; record the
			// first definition and let the error surface below.
			c.bindErr = err
			continue
		}
		if tp, ok := c.sc.types[name]; ok {
			if err := annotate(vals[i], tp); err != nil && c.bindErr == nil {
				c.bindErr = err
			}
		}
	}
}

// attr returns attribute name or nil.
func (c *nodeCtx) attr(name string) *ir.Attr { return c.attrs[name] }

func (c *nodeCtx) attrInt(name string, def int64) int64 {
	if a := c.attrs[name]; a != nil && a.Kind == ir.AttrInt {
		return a.Int
	}
	return def
}

func (c *nodeCtx) attrString(name, def string) string {
	if a := c.attrs[name]; a != nil && a.Kind == ir.AttrString {
		return a.Str
	}
	return def
}

// takeAttr removes and returns an attribute (nil when absent), checking its kind.
func (c *nodeCtx) takeAttr(name string, kinds ...ir.AttrKind) (*ir.Attr, error) {
	a := c.attrs[name]
	if a == nil {
		return nil, nil
	}
	delete(c.attrs, name)
	for _, k := range kinds {
		if a.Kind == k {
			return a, nil
		}
	}
	return nil, fmt.Errorf("attribute %q is %s, want %s", name, kindName(a.Kind), kindName(kinds[0]))
}

// constI64 adds a 1-D int64 constant named after the node.
func (c *nodeCtx) constI64(what string, vals []int64) *ir.Value {
	return c.g.AddConst(c.name+"_"+what, ir.FromInt64([]int64{int64(len(vals))}, vals))
}

// constScalarI64 adds a rank-0 int64 constant.
func (c *nodeCtx) constScalarI64(what string, v int64) *ir.Value {
	return c.g.AddConst(c.name+"_"+what, ir.FromInt64([]int64{}, []int64{v}))
}

// constF32 adds a 1-D float32 constant.
func (c *nodeCtx) constF32(what string, vals []float32) *ir.Value {
	return c.g.AddConst(c.name+"_"+what, ir.FromFloat32([]int64{int64(len(vals))}, vals))
}

// constScalarLike adds a rank-0 constant holding v in the dtype of like
// (float32 when like's dtype is not known at import time).
func (c *nodeCtx) constScalarLike(what string, v float64, like *ir.Value) *ir.Value {
	dt := ir.Float32
	if like != nil && like.DType.Valid() {
		dt = like.DType
	}
	if !dt.IsFloat() {
		// Integer inputs: clamp infinities into the dtype's range.
		v = math.Max(math.Min(v, math.MaxInt64/2), math.MinInt64/2)
	}
	return c.g.AddConst(c.name+"_"+what, ir.FromFloat64(dt, []int64{}, []float64{v}))
}
