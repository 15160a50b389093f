package control

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("If", ifKernel) }

// ifKernel runs then_branch when the single-element bool cond is true and
// else_branch otherwise; the node's outputs are the chosen branch's
// outputs, copied. Branches take no inputs and read outer values.
func ifKernel(ctx *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	c, err := truth(in[0], "cond")
	if err != nil {
		return nil, err
	}
	name := "else_branch"
	if c {
		name = "then_branch"
	}
	g := n.AttrGraph(name)
	if g == nil {
		return nil, fmt.Errorf("missing %s attribute", name)
	}
	if len(g.Inputs) != 0 {
		return nil, fmt.Errorf("%s takes %d inputs, want none", name, len(g.Inputs))
	}
	if len(g.Outputs) != len(n.Outputs) {
		return nil, fmt.Errorf("%s has %d outputs, node has %d", name, len(g.Outputs), len(n.Outputs))
	}
	out, err := ref.RunGraph(ctx.Ctx, g, ctx.Env, nil)
	if err != nil {
		return nil, err
	}
	return cloneAll(out), nil
}
