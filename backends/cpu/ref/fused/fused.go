package fused

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("Fused", fusedGraph) }

// fusedGraph is Fused: its attribute body (a graph) computes the node's
// outputs from its inputs, and running the body with the reference kernels
// is the meaning of the op. The body runs in a child of the node's Env, so
// it may read values of the enclosing graphs.
func fusedGraph(ctx *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	body := n.AttrGraph("body")
	if body == nil {
		return nil, fmt.Errorf("Fused node has no body graph attribute")
	}
	if len(body.Outputs) != len(n.Outputs) {
		return nil, fmt.Errorf("Fused body %q has %d outputs, the node %d", body.Name, len(body.Outputs), len(n.Outputs))
	}
	for i, t := range in {
		if t == nil {
			return nil, fmt.Errorf("Fused input %d is absent (a body input needs a value)", i)
		}
	}
	if ctx == nil {
		ctx = &ref.Context{}
	}
	out, err := ref.RunGraph(ctx.Ctx, body, ctx.Env, in)
	if err != nil {
		return nil, fmt.Errorf("Fused body: %w", err)
	}
	// The node's outputs must be fresh tensors: copy a body output that is
	// not computed by a body node (an input, a constant, an outer value) or
	// that is listed twice.
	computed := map[*ir.Value]bool{}
	for _, bn := range body.Nodes {
		for _, o := range bn.Outputs {
			computed[o] = true
		}
	}
	seen := map[*ir.Tensor]bool{}
	for i, v := range body.Outputs {
		if !computed[v] || seen[out[i]] {
			out[i] = out[i].Clone()
		}
		seen[out[i]] = true
	}
	return out, nil
}
