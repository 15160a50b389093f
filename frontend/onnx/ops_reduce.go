package onnx

import (
	"github.com/weftrt/weft/ir"
)

// Reductions, arg-reductions and TopK. Reduce* axes became an input in
// opset 13 (ReduceSum) or 18 (the others); TopK's k became an input in
// opset 10.

func init() {
	for _, op := range []string{"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
		"ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"} {
		register(op, 1, axesToInput(18, false))
	}
	register("ReduceSum", 1, axesToInput(13, false))
	registerSame(1, "ArgMax", "ArgMin")
	register("TopK", 1, importTopK)
}

func importTopK(c *nodeCtx) error {
	if err := c.need(1); err != nil {
		return err
	}
	if c.opset >= 10 {
		return same(c)
	}
	k, err := c.takeAttr("k", ir.AttrInt)
	if err != nil {
		return err
	}
	if k == nil {
		return errorf("missing attribute \"k\"")
	}
	c.emit("TopK", []*ir.Value{c.in(0), c.constI64("k", []int64{k.Int})}, c.attrs)
	return nil
}
