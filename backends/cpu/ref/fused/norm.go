package fused

import (
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("RMSNormalization", rmsNorm)
	ref.Register("SiLU", siluKernel)
}

// rmsNorm is RMSNormalization as ONNX opset 23 defines it:
// Y = X / sqrt(mean(X², axes ≥ axis) + epsilon) · Scale, with Scale
// broadcast (unidirectionally) to X's shape and of X's dtype.
func rmsNorm(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, scale := in[0], in[1]
	if err := sameFloat(n.Op, []string{"X", "Scale"}, []*ir.Tensor{x, scale}); err != nil {
		return nil, err
	}
	if len(n.Outputs) > 1 {
		return nil, ref.Unsupported("RMSNormalization with %d outputs", len(n.Outputs))
	}
	axis, err := ref.NormAxis(n.AttrInt("axis", -1), len(x.Shape))
	if err != nil {
		return nil, err
	}
	sIdx, err := broadcastIndex("Scale", scale.Shape, x.Shape)
	if err != nil {
		return nil, err
	}
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	cols := int(ir.NumElements(x.Shape[axis:]))
	xs, ss := toFloats(x), toFloats(scale)
	y := make([]float64, len(xs))
	for r := 0; r*cols < len(xs); r++ {
		row := xs[r*cols : (r+1)*cols]
		sum := 0.0
		for _, v := range row {
			sum += v * v
		}
		rms := math.Sqrt(sum/float64(cols) + eps)
		for c, v := range row {
			i := r*cols + c
			y[i] = v / rms * ss[sIdx[i]]
		}
	}
	return []*ir.Tensor{fromFloats(x.DType, x.Shape, y)}, nil
}

// siluKernel is SiLU: Y = X · sigmoid(X).
func siluKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needFloat(n.Op, x); err != nil {
		return nil, err
	}
	y := toFloats(x)
	applyAct(silu, y)
	return []*ir.Tensor{fromFloats(x.DType, x.Shape, y)}, nil
}
