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
	nw, err := ir.QMatMulGroupWeights(n)
	if err != nil {
		return nil, err
	}
	outs := make([]typ, 0, nw)
	for i := 1; i <= nw; i++ {
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
	for i := 0; i < nw && nw < len(n.Inputs)-1; i++ {
		b, y := in(n, 1+nw+i), outs[i]
		if n.In(1+nw+i) == nil {
			return nil, fmt.Errorf("QMatMulGroup bias %d is missing", i)
		}
		if b.dt != y.dt {
			return nil, fmt.Errorf("QMatMulGroup bias %d is %v, want %v (the output's)", i, b.dt, y.dt)
		}
		if b.sh != nil && len(y.sh) > 0 {
			last := y.sh[len(y.sh)-1]
			if len(b.sh) != 1 || (b.sh[0].Known() && last.Known() && b.sh[0].Size != last.Size) {
				return nil, fmt.Errorf("QMatMulGroup bias %d has shape [%v], want [%v]", i, b.sh, last)
			}
		}
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
