package signal

import "github.com/weftrt/weft/ir"

// opsetOf returns the default-domain opset of the model n belongs to, or 0
// when the graph does not record it.
func opsetOf(n *ir.Node) int64 {
	if len(n.Outputs) == 0 || n.Outputs[0].Graph == nil {
		return 0
	}
	g := n.Outputs[0].Graph
	for g.Parent != nil {
		g = g.Parent
	}
	if v, ok := g.Opsets[""]; ok {
		return v
	}
	return g.Opsets["ai.onnx"]
}
