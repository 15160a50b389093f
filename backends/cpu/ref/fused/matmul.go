package fused

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("FusedMatMul", fusedMatMul)
	ref.Register("FusedConv", fusedConv)
}

// fusedMatMul is Y = act(MatMul(A, B) + Bias), Bias broadcasting against
// the product (numpy rules). The product is the MatMul reference kernel run
// on float64 copies of A and B, so nothing is rounded before the end.
func fusedMatMul(ctx *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	a, b, bias := in[0], in[1], opt(in, 2)
	if err := sameFloat(n.Op, []string{"A", "B", "Bias"}, []*ir.Tensor{a, b, bias}); err != nil {
		return nil, err
	}
	act, err := activation(n)
	if err != nil {
		return nil, err
	}
	mm, err := call(ctx, n, "MatMul", ir.Attrs{}, widen(a), widen(b))
	if err != nil {
		return nil, err
	}
	y, shape := toFloats(mm), mm.Shape
	if bias != nil {
		if y, shape, err = addBroadcast(y, shape, bias); err != nil {
			return nil, fmt.Errorf("Bias: %w", err)
		}
	}
	applyAct(act, y)
	return []*ir.Tensor{fromFloats(a.DType, shape, y)}, nil
}

// fusedConv is Y = act(Conv(X, W, B) + Z): the Conv reference kernel (with
// the node's Conv attributes) on float64 copies of X, W and B, then the
// residual Z, which must have the convolution's output shape, and the
// activation.
func fusedConv(ctx *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, w, b, z := in[0], in[1], opt(in, 2), opt(in, 3)
	if err := sameFloat(n.Op, []string{"X", "W", "B", "Z"}, []*ir.Tensor{x, w, b, z}); err != nil {
		return nil, err
	}
	act, err := activation(n)
	if err != nil {
		return nil, err
	}
	convAttrs := ir.Attrs{}
	for name, a := range n.Attrs {
		if !strings.HasPrefix(name, attrActivation) {
			convAttrs[name] = a
		}
	}
	args := []*ir.Tensor{widen(x), widen(w)}
	if b != nil {
		args = append(args, widen(b))
	}
	conv, err := call(ctx, n, "Conv", convAttrs, args...)
	if err != nil {
		return nil, err
	}
	y := toFloats(conv)
	if z != nil {
		if !slices.Equal(z.Shape, conv.Shape) {
			return nil, fmt.Errorf("Z has shape %v, want the Conv output shape %v", z.Shape, conv.Shape)
		}
		for i, v := range toFloats(z) {
			y[i] += v
		}
	}
	applyAct(act, y)
	return []*ir.Tensor{fromFloats(x.DType, conv.Shape, y)}, nil
}
