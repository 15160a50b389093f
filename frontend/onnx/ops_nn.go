package onnx

import (
	"github.com/weftrt/weft/ir"
)

// Neural-network operators: convolution, pooling, normalization, matrix
// products, softmax family, quantization, losses.

func init() {
	registerSame(1, "AveragePool", "Conv", "ConvTranspose", "Flatten", "Gemm",
		"GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "InstanceNormalization", "LRN",
		"LpNormalization", "LpPool", "MatMul", "MaxPool")
	registerSame(9, "MaxUnpool", "MeanVarianceNormalization")
	registerSame(10, "ConvInteger", "MatMulInteger", "QLinearConv", "QLinearMatMul", "DequantizeLinear")
	registerSame(11, "DynamicQuantizeLinear", "Det")
	registerSame(12, "Einsum", "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss")
	registerSame(17, "LayerNormalization")
	register("QuantizeLinear", 10, importQuantizeLinear)
	register("Softmax", 1, importSoftmax)
	register("LogSoftmax", 1, importSoftmax)
	register("Hardmax", 1, importSoftmax)
	register("BatchNormalization", 1, importBatchNorm)
	register("Dropout", 1, importDropout)
	register("GroupNormalization", 18, importGroupNorm)
}

// importSoftmax: before opset 13, Softmax, LogSoftmax and Hardmax coerced
// the input to 2-D around axis (default 1). The kernel is told so by
// legacy_axis=1, and axis is made explicit.
func importSoftmax(c *nodeCtx) error {
	if c.opset < 13 {
		if c.attr("axis") == nil {
			c.attrs["axis"] = &ir.Attr{Kind: ir.AttrInt, Int: 1}
		}
		c.attrs["legacy_axis"] = &ir.Attr{Kind: ir.AttrInt, Int: 1}
	}
	return same(c)
}

func importQuantizeLinear(c *nodeCtx) error {
	if err := checkDTypeAttr(c, "output_dtype", false); err != nil {
		return err
	}
	return same(c)
}

// importBatchNorm drops the opset 7-8 `spatial` attribute (only its default,
// 1, has the semantics of later opsets).
func importBatchNorm(c *nodeCtx) error {
	a, err := c.takeAttr("spatial", ir.AttrInt)
	if err != nil {
		return err
	}
	if a != nil && a.Int != 1 && c.opset < 9 {
		return unsupported("spatial=%d", a.Int)
	}
	return same(c)
}

// importDropout: before opset 12 the ratio was an attribute; now it is input 1
// (with training_mode as input 2). In inference Dropout is the identity.
func importDropout(c *nodeCtx) error {
	if err := c.need(1); err != nil {
		return err
	}
	if c.opset >= 12 {
		return same(c)
	}
	a, err := c.takeAttr("ratio", ir.AttrFloat)
	if err != nil {
		return err
	}
	delete(c.attrs, "is_test")
	inputs := []*ir.Value{c.in(0)}
	if a != nil {
		inputs = append(inputs, c.g.AddConst(c.name+"_ratio", ir.FromFloat32([]int64{}, []float32{a.Float})))
	}
	c.emit("Dropout", inputs, c.attrs)
	return nil
}

// importGroupNorm: opsets 18-20 had one scale/bias value per group; opset 21
// has one per channel. Old per-group constants are expanded to per-channel
// ones when the channel count is known at import time.
func importGroupNorm(c *nodeCtx) error {
	if err := c.need(3); err != nil {
		return err
	}
	if c.opset >= 21 {
		return same(c)
	}
	x, scale, bias := c.in(0), c.in(1), c.in(2)
	groups := c.attrInt("num_groups", 0)
	if groups <= 0 {
		return errorf("num_groups must be positive, got %d", groups)
	}
	if !scale.IsConst() || !bias.IsConst() || len(x.Shape) < 2 || !x.Shape[1].Known() {
		return unsupported("per-group scale/bias (opset %d) without constant scale/bias and a known channel count", c.opset)
	}
	ch := x.Shape[1].Size
	if ch > 1<<24 {
		return unsupported("%d channels", ch)
	}
	if ch%groups != 0 {
		return errorf("%d channels are not divisible into %d groups", ch, groups)
	}
	expand := func(v *ir.Value, what string) (*ir.Value, error) {
		t := v.Const
		if t.Len() != int(groups) {
			return nil, errorf("%s has %d elements, want num_groups=%d", what, t.Len(), groups)
		}
		out := ir.NewTensor(t.DType, []int64{ch})
		for i := 0; i < int(ch); i++ {
			out.SetFloat64(i, t.Float64(i/int(ch/groups)))
		}
		return c.g.AddConst(c.name+"_"+what, out), nil
	}
	s, err := expand(scale, "scale")
	if err != nil {
		return err
	}
	b, err := expand(bias, "bias")
	if err != nil {
		return err
	}
	c.emit("GroupNormalization", []*ir.Value{x, s, b}, c.attrs)
	return nil
}
