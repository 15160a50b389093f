package onnx

import "github.com/weftrt/weft/ir"

// Models with a default-domain opset below 7 are imported node by node: a
// node is accepted only when its operator has the same version at the
// model's opset as at opset 7 (so the model means exactly what it would at
// opset 7). Nodes whose operator changed in between (Add-6 with its legacy
// broadcast attribute, BatchNormalization-6, Gemm-6, ...) are unsupported.

// changedBy7 lists, per operator, the opsets in 2..7 that introduced a new
// version of it (from the ONNX operator schemas).
var changedBy7 = map[string][]int64{
	"Abs":                   {6},
	"Acos":                  {7},
	"Add":                   {6, 7},
	"And":                   {7},
	"Asin":                  {7},
	"Atan":                  {7},
	"AveragePool":           {7},
	"BatchNormalization":    {6, 7},
	"Cast":                  {6},
	"Ceil":                  {6},
	"Clip":                  {6},
	"Concat":                {4},
	"Cos":                   {7},
	"Div":                   {6, 7},
	"Dropout":               {6, 7},
	"Elu":                   {6},
	"Equal":                 {7},
	"Exp":                   {6},
	"Floor":                 {6},
	"GRU":                   {3, 7},
	"Gemm":                  {6, 7},
	"GlobalLpPool":          {2},
	"Greater":               {7},
	"HardSigmoid":           {6},
	"InstanceNormalization": {6},
	"LSTM":                  {7},
	"LeakyRelu":             {6},
	"Less":                  {7},
	"Log":                   {6},
	"LpPool":                {2},
	"Max":                   {6},
	"Mean":                  {6},
	"Min":                   {6},
	"Mul":                   {6, 7},
	"Neg":                   {6},
	"Or":                    {7},
	"PRelu":                 {6, 7},
	"Pad":                   {2},
	"Pow":                   {7},
	"RNN":                   {7},
	"Reciprocal":            {6},
	"Relu":                  {6},
	"Reshape":               {5},
	"Selu":                  {6},
	"Sigmoid":               {6},
	"Sin":                   {7},
	"Split":                 {2},
	"Sqrt":                  {6},
	"Sub":                   {6, 7},
	"Sum":                   {6},
	"Tan":                   {7},
	"Tanh":                  {6},
	"Tile":                  {6},
	"Upsample":              {7},
	"Xor":                   {7},
}

// checkLegacyOpset refuses a node of a pre-opset-7 model whose operator
// version differs from the one opset 7 uses, unless legacyFixes knows how to
// restate it (which importNode then runs before the op's importer).
func checkLegacyOpset(op string, opset int64) (func(*nodeCtx) error, error) {
	if opset >= 7 {
		return nil, nil
	}
	for _, v := range changedBy7[op] {
		if v > opset {
			if fix, ok := legacyFixes[op]; ok {
				return fix, nil
			}
			return nil, unsupported("%s changed in opset %d; an opset %d model is imported only where its ops are as in opset 7", op, v, opset)
		}
	}
	return nil, nil
}

// legacyFixes restate pre-opset-7 operator versions in opset-7 terms.
var legacyFixes = map[string]func(*nodeCtx) error{}

func init() {
	for _, op := range []string{"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"} {
		legacyFixes[op] = legacyBroadcast
	}
	// Opset 6 removed the consumed_inputs attribute (an in-place hint).
	for _, op := range []string{"Abs", "Ceil", "Clip", "Elu", "Exp", "Floor", "HardSigmoid", "LeakyRelu",
		"Log", "Neg", "Reciprocal", "Relu", "Selu", "Sigmoid", "Sqrt", "Tanh", "InstanceNormalization"} {
		legacyFixes[op] = dropAttrs("consumed_inputs")
	}
	legacyFixes["Gemm"] = dropAttrs("broadcast")
	legacyFixes["BatchNormalization"] = legacyBatchNorm
	legacyFixes["Dropout"] = legacyDropout
	legacyFixes["PRelu"] = legacyPRelu
	legacyFixes["AveragePool"] = dropAttrs() // AveragePool-1 excluded pads: count_include_pad=0
}

func dropAttrs(names ...string) func(*nodeCtx) error {
	return func(c *nodeCtx) error {
		for _, n := range names {
			delete(c.attrs, n)
		}
		return nil
	}
}

// legacyBroadcast: before opset 7 binary ops broadcast only with broadcast=1,
// aligning B's dims with A's starting at `axis` (default: trailing). Where B
// is not already trailing-aligned, it is unsqueezed so that numpy-style
// broadcasting lines it up the same way.
func legacyBroadcast(c *nodeCtx) error {
	delete(c.attrs, "consumed_inputs")
	b, err := c.takeAttr("broadcast", ir.AttrInt)
	if err != nil {
		return err
	}
	axis, err := c.takeAttr("axis", ir.AttrInt)
	if err != nil {
		return err
	}
	if b == nil || b.Int == 0 || axis == nil || len(c.inputs) != 2 {
		return nil
	}
	x, y := c.in(0), c.in(1)
	if x == nil || y == nil || !x.Shape.RankKnown() || !y.Shape.RankKnown() {
		return unsupported("legacy broadcast with axis=%d on operands of unknown rank", axis.Int)
	}
	rx, ry := int64(len(x.Shape)), int64(len(y.Shape))
	ax := axis.Int
	if ax < 0 {
		ax += rx
	}
	if ax < 0 || ax+ry > rx {
		return errorf("legacy broadcast axis %d does not fit B of rank %d into A of rank %d", axis.Int, ry, rx)
	}
	if ax+ry == rx {
		return nil
	}
	c.inputs[1] = c.unsqueezeTrailing(y, ry, rx-ax)
	return nil
}

// unsqueezeTrailing appends unit dims to v (of rank from) up to rank to.
func (c *nodeCtx) unsqueezeTrailing(v *ir.Value, from, to int64) *ir.Value {
	axes := make([]int64, 0, to-from)
	for a := from; a < to; a++ {
		axes = append(axes, a)
	}
	n := c.g.AddNode("Unsqueeze", c.name+"_unsqueeze", []*ir.Value{v, c.constI64("unsqueeze_axes", axes)}, 1, nil)
	return n.Outputs[0]
}

// legacyBatchNorm: BatchNormalization-6 had is_test; only the inference form
// (a single output) matches later versions.
func legacyBatchNorm(c *nodeCtx) error {
	delete(c.attrs, "consumed_inputs")
	isTest, err := c.takeAttr("is_test", ir.AttrInt)
	if err != nil {
		return err
	}
	if (isTest == nil || isTest.Int == 0) && len(c.outNames) > 1 {
		return unsupported("BatchNormalization-6 in training mode")
	}
	return nil
}

func legacyDropout(c *nodeCtx) error {
	delete(c.attrs, "consumed_inputs")
	isTest, err := c.takeAttr("is_test", ir.AttrInt)
	if err != nil {
		return err
	}
	if (isTest == nil || isTest.Int == 0) && len(c.outNames) > 1 {
		return unsupported("Dropout-6 in training mode")
	}
	return nil
}

// legacyPRelu: PRelu-6 applied a 1-D slope of C values per channel (axis 1);
// PRelu-7 broadcasts numpy-style, so the slope gets trailing unit dims.
func legacyPRelu(c *nodeCtx) error {
	delete(c.attrs, "consumed_inputs")
	x, slope := c.in(0), c.in(1)
	if x == nil || slope == nil {
		return nil
	}
	if slope.Shape.RankKnown() && len(slope.Shape) == 1 && slope.Shape[0].Size == 1 {
		return nil
	}
	if !x.Shape.RankKnown() || !slope.Shape.RankKnown() || len(slope.Shape) != 1 {
		return unsupported("PRelu-6 with a slope of shape %v on input of shape %v", slope.Shape, x.Shape)
	}
	if r := int64(len(x.Shape)); r > 2 {
		c.inputs[1] = c.unsqueezeTrailing(slope, 1, r-1)
	}
	return nil
}
