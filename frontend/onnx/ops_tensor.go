package onnx

import (
	"github.com/weftrt/weft/ir"
)

// Layout and tensor-manipulation operators. Attributes that later opsets
// turned into inputs (Squeeze/Unsqueeze axes, Split split, Slice
// starts/ends/axes, Pad pads/value) become constant inputs here.

func init() {
	registerSame(1, "Concat", "Gather", "Identity", "Reshape", "Shape", "Size", "Tile",
		"Transpose", "DepthToSpace", "SpaceToDepth")
	registerSame(8, "Expand")
	registerSame(9, "OneHot", "Compress", "NonZero")
	registerSame(10, "ReverseSequence")
	registerSame(11, "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Range",
		"Unique", "CumSum")
	registerSame(14, "Trilu")
	registerSame(18, "CenterCropPad")
	register("Constant", 1, importConstant)
	register("ConstantOfShape", 9, importConstantOfShape)
	register("EyeLike", 9, importEyeLike)
	register("Scatter", 9, importScatter).until = 11
	register("Squeeze", 1, axesToInput(13, false))
	register("Unsqueeze", 1, axesToInput(13, true))
	register("Split", 1, importSplit).keepOutputs = true
	register("Slice", 1, importSlice)
	register("Pad", 1, importPad)
}

// importConstant binds the output name to a constant value.
func importConstant(c *nodeCtx) error {
	if len(c.attrs) != 1 {
		return errorf("Constant needs exactly one value attribute, has %d", len(c.attrs))
	}
	if len(c.outNames) != 1 || c.outNames[0] == "" {
		return errorf("Constant needs exactly one output")
	}
	var t *ir.Tensor
	for name, a := range c.attrs {
		switch {
		case name == "value" && a.Kind == ir.AttrTensor:
			t = a.Tensor
		case name == "value_float" && a.Kind == ir.AttrFloat:
			t = ir.FromFloat32([]int64{}, []float32{a.Float})
		case name == "value_floats" && a.Kind == ir.AttrFloats:
			t = ir.FromFloat32([]int64{int64(len(a.Floats))}, a.Floats)
		case name == "value_int" && a.Kind == ir.AttrInt:
			t = ir.FromInt64([]int64{}, []int64{a.Int})
		case name == "value_ints" && a.Kind == ir.AttrInts:
			t = ir.FromInt64([]int64{int64(len(a.Ints))}, a.Ints)
		case name == "value_string" || name == "value_strings":
			return unsupported("string constants")
		case name == "sparse_value":
			return unsupported("sparse constants")
		default:
			return errorf("attribute %q (%s) is not a Constant value", name, kindName(a.Kind))
		}
	}
	v := c.g.AddConst(c.outNames[0], t)
	c.bindAll([]*ir.Value{v})
	return nil
}

func importConstantOfShape(c *nodeCtx) error {
	if a := c.attr("value"); a != nil {
		if a.Kind != ir.AttrTensor {
			return errorf("attribute \"value\" is %s, want tensor", kindName(a.Kind))
		}
		if a.Tensor.Len() != 1 {
			return errorf("attribute \"value\" has %d elements, want 1", a.Tensor.Len())
		}
	}
	return same(c)
}

func importEyeLike(c *nodeCtx) error {
	if err := checkDTypeAttr(c, "dtype", false); err != nil {
		return err
	}
	return same(c)
}

// importScatter: Scatter (opsets 9-10) is ScatterElements.
func importScatter(c *nodeCtx) error {
	c.emit("ScatterElements", c.inputs, c.attrs)
	return nil
}

// axesToInput moves the `axes` attribute (opsets before `since`) to input 1.
// An absent or empty list meant "all axes" (Reduce*) or "all unit dims"
// (Squeeze), which the newer forms say with an absent input.
func axesToInput(since int64, required bool) importFunc {
	return func(c *nodeCtx) error {
		if err := c.need(1); err != nil {
			return err
		}
		if c.opset >= since {
			return same(c)
		}
		a, err := c.takeAttr("axes", ir.AttrInts)
		if err != nil {
			return err
		}
		inputs := []*ir.Value{c.in(0), nil}
		switch {
		case a != nil && len(a.Ints) > 0:
			inputs[1] = c.constI64("axes", a.Ints)
		case required:
			return errorf("missing attribute \"axes\"")
		}
		c.emit(c.op, inputs, c.attrs)
		return nil
	}
}

// importSplit: before opset 13 the split sizes were an attribute.
func importSplit(c *nodeCtx) error {
	if err := c.need(1); err != nil {
		return err
	}
	if len(c.outNames) == 0 {
		return errorf("Split needs at least one output")
	}
	if c.opset >= 13 {
		return same(c)
	}
	a, err := c.takeAttr("split", ir.AttrInts)
	if err != nil {
		return err
	}
	inputs := []*ir.Value{c.in(0)}
	if a != nil {
		if len(a.Ints) != len(c.outNames) {
			return errorf("split has %d sizes for %d outputs", len(a.Ints), len(c.outNames))
		}
		inputs = append(inputs, c.constI64("split", a.Ints))
	}
	c.emit("Split", inputs, c.attrs)
	return nil
}

// importSlice: before opset 10 starts, ends and axes were attributes.
func importSlice(c *nodeCtx) error {
	if err := c.need(1); err != nil {
		return err
	}
	if c.opset >= 10 {
		return same(c)
	}
	starts, err := c.takeAttr("starts", ir.AttrInts)
	if err != nil {
		return err
	}
	ends, err := c.takeAttr("ends", ir.AttrInts)
	if err != nil {
		return err
	}
	axes, err := c.takeAttr("axes", ir.AttrInts)
	if err != nil {
		return err
	}
	if starts == nil || ends == nil {
		return errorf("missing attribute \"starts\" or \"ends\"")
	}
	if len(starts.Ints) != len(ends.Ints) || (axes != nil && len(axes.Ints) != len(starts.Ints)) {
		return errorf("starts, ends and axes differ in length")
	}
	inputs := []*ir.Value{c.in(0), c.constI64("starts", starts.Ints), c.constI64("ends", ends.Ints)}
	if axes != nil {
		inputs = append(inputs, c.constI64("axes", axes.Ints))
	}
	c.emit("Slice", inputs, c.attrs)
	return nil
}

// importPad: before opset 11 pads and the constant value were attributes.
func importPad(c *nodeCtx) error {
	if err := c.need(1); err != nil {
		return err
	}
	if c.opset >= 11 {
		return same(c)
	}
	pads, err := c.takeAttr("pads", ir.AttrInts)
	if err != nil {
		return err
	}
	if pads == nil {
		return errorf("missing attribute \"pads\"")
	}
	value, err := c.takeAttr("value", ir.AttrFloat)
	if err != nil {
		return err
	}
	x := c.in(0)
	inputs := []*ir.Value{x, c.constI64("pads", pads.Ints)}
	if value != nil && value.Float != 0 && c.attrString("mode", "constant") == "constant" {
		inputs = append(inputs, c.constScalarLike("value", float64(value.Float), x))
	}
	c.emit("Pad", inputs, c.attrs)
	return nil
}
