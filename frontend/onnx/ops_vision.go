package onnx

import (
	"github.com/weftrt/weft/ir"
)

// Image and signal operators: Resize (and the Upsample it replaced),
// GridSample, RoiAlign, NonMaxSuppression, DFT, STFT, windows.

func init() {
	registerSame(1, "MaxRoiPool")
	registerSame(10, "NonMaxSuppression")
	registerSame(17, "STFT")
	register("Resize", 10, importResize)
	register("Upsample", 7, importUpsample).until = 10
	register("GridSample", 16, importGridSample)
	register("RoiAlign", 10, importRoiAlign)
	register("DFT", 17, importDFT)
	for _, op := range []string{"BlackmanWindow", "HammingWindow", "HannWindow", "MelWeightMatrix"} {
		register(op, 17, importWindow)
	}
}

// setDefault sets a string attribute unless the node has it.
func (c *nodeCtx) setDefault(name, val string) {
	if c.attr(name) == nil {
		c.attrs[name] = &ir.Attr{Kind: ir.AttrString, Str: val}
	}
}

// upsampleSemantics makes the coordinate mapping of Upsample and Resize-10
// (x_in = x_out / scale, nearest rounds down) explicit in Resize-19 terms.
func upsampleSemantics(c *nodeCtx) {
	c.setDefault("mode", "nearest")
	c.attrs["coordinate_transformation_mode"] = &ir.Attr{Kind: ir.AttrString, Str: "asymmetric"}
	c.attrs["nearest_mode"] = &ir.Attr{Kind: ir.AttrString, Str: "floor"}
}

// emptyConstToNil treats a constant with no elements (the pre-opset-13 way
// of omitting roi or scales) as an absent input.
func emptyConstToNil(v *ir.Value) *ir.Value {
	if v.IsConst() && v.Const.Len() == 0 {
		return nil
	}
	return v
}

func importResize(c *nodeCtx) error {
	if err := c.need(1); err != nil {
		return err
	}
	if c.opset < 11 {
		// Resize-10: (X, scales) with Upsample's coordinate mapping.
		if err := c.need(2); err != nil {
			return err
		}
		upsampleSemantics(c)
		c.emit("Resize", []*ir.Value{c.in(0), nil, c.in(1)}, c.attrs)
		return nil
	}
	inputs := append([]*ir.Value{}, c.inputs...)
	for i := 1; i < len(inputs) && i < 3; i++ {
		if inputs[i] != nil {
			inputs[i] = emptyConstToNil(inputs[i])
		}
	}
	c.emit("Resize", inputs, c.attrs)
	return nil
}

// importUpsample rewrites Upsample (scales attribute in opsets 7-8, input in
// 9) as Resize(X, roi=nil, scales).
func importUpsample(c *nodeCtx) error {
	if err := c.need(1); err != nil {
		return err
	}
	var scales *ir.Value
	if c.opset < 9 {
		a, err := c.takeAttr("scales", ir.AttrFloats)
		if err != nil {
			return err
		}
		if a == nil {
			return errorf("missing attribute \"scales\"")
		}
		scales = c.constF32("scales", a.Floats)
	} else {
		if err := c.need(2); err != nil {
			return err
		}
		scales = c.in(1)
	}
	upsampleSemantics(c)
	c.emit("Resize", []*ir.Value{c.in(0), nil, scales}, c.attrs)
	return nil
}

// importGridSample renames the opset 16-19 modes to their opset 20 names.
func importGridSample(c *nodeCtx) error {
	if c.opset < 20 {
		switch c.attrString("mode", "bilinear") {
		case "bilinear":
			c.attrs["mode"] = &ir.Attr{Kind: ir.AttrString, Str: "linear"}
		case "bicubic":
			c.attrs["mode"] = &ir.Attr{Kind: ir.AttrString, Str: "cubic"}
		}
	}
	return same(c)
}

// importRoiAlign: before opset 16 RoiAlign did not shift by half a pixel;
// opset 16 calls that coordinate_transformation_mode="output_half_pixel".
func importRoiAlign(c *nodeCtx) error {
	if c.opset < 16 {
		c.attrs["coordinate_transformation_mode"] = &ir.Attr{Kind: ir.AttrString, Str: "output_half_pixel"}
	}
	return same(c)
}

// importDFT: DFT-17 had an `axis` attribute (default 1); DFT-20 takes it as
// input 2 (a scalar).
func importDFT(c *nodeCtx) error {
	if err := c.need(1); err != nil {
		return err
	}
	if c.opset >= 20 {
		return same(c)
	}
	a, err := c.takeAttr("axis", ir.AttrInt)
	if err != nil {
		return err
	}
	axis := int64(1)
	if a != nil {
		axis = a.Int
	}
	c.emit("DFT", []*ir.Value{c.in(0), c.in(1), c.constScalarI64("axis", axis)}, c.attrs)
	return nil
}

func importWindow(c *nodeCtx) error {
	if err := checkDTypeAttr(c, "output_datatype", false); err != nil {
		return err
	}
	return same(c)
}
