package qmatmul

import (
	"fmt"
	"math"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("QMatMulGroup", qMatMulGroup) }

// qMatMulGroup is QMatMulGroup(X, W0, W1, ...) (ir/ops.go): QMatMul(X, Wi)
// for every weight (plus Bi with bias 1), or with act "silu_mul"
// Mul(SiLU(Y0), Y1), each step rounded to X's dtype as the separate ops
// round.
func qMatMulGroup(c *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if len(in) < 2 {
		return nil, fmt.Errorf("QMatMulGroup needs X and at least one weight, got %d inputs", len(in))
	}
	nw, err := ir.QMatMulGroupWeights(n)
	if err != nil {
		return nil, err
	}
	ys := make([]*ir.Tensor, 0, nw)
	for i, w := range in[1 : 1+nw] {
		if w == nil {
			return nil, fmt.Errorf("QMatMulGroup weight %d is missing", i)
		}
		if w.DType == ir.Int8 {
			return nil, ref.Unsupported("QMatMulGroup with an i8 weight (it takes no Scales; use QMatMul)")
		}
		y, err := qMatMul(c, n, []*ir.Tensor{in[0], w})
		if err != nil {
			return nil, fmt.Errorf("QMatMulGroup weight %d: %w", i, err)
		}
		ys = append(ys, y[0])
	}
	// Biases: Yi = Add(Yi, Bi), Bi [Ni] broadcast over the rows.
	for i, b := range in[1+nw:] {
		y := ys[i]
		N := int(y.Shape[len(y.Shape)-1])
		if b == nil || b.DType != y.DType || len(b.Shape) != 1 || int(b.Shape[0]) != N {
			return nil, fmt.Errorf("QMatMulGroup bias %d must be %v [%d]", i, y.DType, N)
		}
		s := ir.NewTensor(y.DType, []int64{1}) // rounds each sum to the dtype, as Add does
		for j := 0; j < y.Len(); j++ {
			s.SetFloat64(0, y.Float64(j)+b.Float64(j%N))
			y.SetFloat64(j, s.Float64(0))
		}
	}
	switch act := n.AttrString("act", ""); act {
	case "":
		return ys, nil
	case "silu_mul":
		if len(ys) != 2 || !slices.Equal(ys[0].Shape, ys[1].Shape) {
			return nil, fmt.Errorf("QMatMulGroup act silu_mul needs two weights of one shape, got %d", len(ys))
		}
		g, u := ys[0], ys[1]
		y := ir.NewTensor(g.DType, g.Shape)
		s := ir.NewTensor(g.DType, []int64{1}) // rounds SiLU's result to the dtype, as the SiLU op does
		for i := 0; i < y.Len(); i++ {
			gv := g.Float64(i)
			s.SetFloat64(0, gv*sigmoid(gv))
			y.SetFloat64(i, s.Float64(0)*u.Float64(i))
		}
		return []*ir.Tensor{y}, nil
	default:
		return nil, ref.Unsupported("QMatMulGroup act %q (want \"\" or \"silu_mul\")", act)
	}
}

// sigmoid is 1/(1+e^-x) without overflowing e^-x (the Sigmoid and SiLU
// reference kernels' formula).
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}
