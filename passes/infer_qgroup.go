package passes

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

func init() { register(inferQMatMulGroup, "QMatMulGroup") }

// inferQMatMulGroup: QMatMulGroup(X, W0, W1, ...) (ir/ops.go) has one
// QMatMul output per weight, or with act "silu_mul" (two weights of one
// shape) the one output both would have.
func inferQMatMulGroup(st *state, n *ir.Node) ([]typ, error) {
	if len(n.Inputs) < 2 {
		return nil, fmt.Errorf("QMatMulGroup needs X and at least one weight, got %d inputs", len(n.Inputs))
	}
	outs := make([]typ, 0, len(n.Inputs)-1)
	for i := 1; i < len(n.Inputs); i++ {
		w := in(n, i)
		if n.In(i) == nil {
			return nil, fmt.Errorf("QMatMulGroup weight %d is missing", i-1)
		}
		if w.dt == ir.Int8 {
			return nil, fmt.Errorf("QMatMulGroup weight %d is i8: %w (it takes no Scales; use QMatMul)", i-1, ir.ErrUnsupported)
		}
		one := &ir.Node{Op: "QMatMul", Inputs: []*ir.Value{n.In(0), n.In(i)}}
		t, err := inferQMatMul(st, one)
		if err != nil {
			return nil, fmt.Errorf("QMatMulGroup weight %d: %w", i-1, err)
		}
		outs = append(outs, t[0])
	}
	switch act := n.AttrString("act", ""); act {
	case "":
		return outs, nil
	case "silu_mul":
		if len(outs) != 2 {
			return nil, fmt.Errorf("QMatMulGroup act silu_mul needs two weights, got %d", len(outs))
		}
		w0, w1 := in(n, 1), in(n, 2)
		if w0.sh != nil && w1.sh != nil && !w0.sh.Equal(w1.sh) {
			return nil, fmt.Errorf("QMatMulGroup act silu_mul needs two weights of one shape, got [%v] and [%v]", w0.sh, w1.sh)
		}
		return outs[:1], nil
	default:
		return nil, fmt.Errorf("QMatMulGroup act %q: %w (want \"\" or \"silu_mul\")", act, ir.ErrUnsupported)
	}
}
