package transfer

import (
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register(ir.OpTransfer, kernel) }

func kernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if len(in) != 1 || in[0] == nil {
		return nil, ref.Errorf("Transfer: want exactly one input, got %d", len(in))
	}
	x := in[0]
	out := &ir.Tensor{DType: x.DType, Shape: append([]int64(nil), x.Shape...), Data: append([]byte(nil), x.Data...)}
	return []*ir.Tensor{out}, nil
}
