package onnx

// Control flow: If, Loop, Scan. Their bodies are subgraphs (imported with
// the attributes) that may read outer values by name. The number of outputs
// is semantic (it matches the body's), so trailing empty outputs are kept.

func init() {
	register("If", 1, same).keepOutputs = true
	register("Loop", 1, same).keepOutputs = true
	register("Scan", 8, importScan).keepOutputs = true
}

// importScan refuses Scan-8, whose batch axis and sequence_lens input have no
// counterpart in later opsets.
func importScan(c *nodeCtx) error {
	if c.opset < 9 {
		return unsupported("Scan-8 (batched form with sequence_lens)")
	}
	return same(c)
}
