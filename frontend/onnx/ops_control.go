package onnx

// Control flow: If, Loop, Scan. Their bodies are subgraphs (imported with
// the attributes) that may read outer values by name. The number of outputs
// is semantic (it matches the body's), so trailing empty outputs are kept.

import "github.com/weftrt/weft/ir"

func init() {
	register("If", 1, same).keepOutputs = true
	register("Loop", 1, same).keepOutputs = true
	register("Scan", 8, importScan).keepOutputs = true
}

// importScan marks Scan-8, whose batch axis and sequence_lens input have no
// counterpart in later opsets, with the weft attribute batched=1 (see
// ir/ops.go); the kernel implements that form.
func importScan(c *nodeCtx) error {
	if c.opset < 9 {
		c.attrs["batched"] = &ir.Attr{Kind: ir.AttrInt, Int: 1}
	}
	return same(c)
}
