package qmatmul

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

func init() { ref.Register("QMatMul", qMatMul) }

// weights decodes W (and Scales) into N rows of K float32 weights.
func weights(w, scales *ir.Tensor) ([]float32, error) {
	if len(w.Shape) != 2 {
		return nil, fmt.Errorf("QMatMul weight must be 2-D [N, K], got %v", w)
	}
	n, k := int(w.Shape[0]), int(w.Shape[1])
	switch {
	case w.DType == ir.Int8:
		if scales == nil {
			return nil, fmt.Errorf("QMatMul with an i8 weight %v needs Scales [%d]", w, n)
		}
		deq, err := quant.DequantizePerChannel(w, scales)
		if err != nil {
			return nil, fmt.Errorf("QMatMul: %w", err)
		}
		return deq.Float32s(), nil
	case w.DType == ir.Float16 || w.DType == ir.BFloat16:
		if scales != nil {
			return nil, fmt.Errorf("QMatMul: Scales %v given with a %v weight %v (want none)", scales, w.DType, w)
		}
		if err := w.Check(); err != nil {
			return nil, fmt.Errorf("QMatMul weight: %w", err)
		}
		out := make([]float32, n*k)
		for i := range out {
			out[i] = float32(w.Float64(i))
		}
		return out, nil
	case w.DType.IsQuantized():
		if scales != nil {
			return nil, fmt.Errorf("QMatMul: Scales %v given with a block-quantized weight %v (its scales are in the blocks)", scales, w)
		}
		if !quant.Decodable(w.DType) {
			return nil, ref.Unsupported("QMatMul with a %v weight", w.DType)
		}
		if err := w.Check(); err != nil {
			return nil, fmt.Errorf("QMatMul weight: %w", err)
		}
		out := make([]float32, n*k)
		rb := int(w.DType.Bytes(int64(k)))
		for r := 0; r < n; r++ {
			if err := quant.DecodeRow(w.DType, out[r*k:(r+1)*k], w.Data[r*rb:(r+1)*rb]); err != nil {
				return nil, fmt.Errorf("QMatMul weight row %d: %w", r, err)
			}
		}
		return out, nil
	}
	return nil, ref.Unsupported("QMatMul with a %v weight (want i8 with Scales, f16, bf16 or a block-quantized type)", w.DType)
}

// qMatMul is weft's QMatMul(X, W, Scales?): Y[..., n] = Σ_k X[..., k]·W[n, k].
func qMatMul(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, w := in[0], in[1]
	var scales *ir.Tensor
	if len(in) > 2 {
		scales = in[2]
	}
	if !x.DType.IsFloat() {
		return nil, ref.Unsupported("QMatMul on a %v input (want a float type)", x.DType)
	}
	if len(x.Shape) == 0 {
		return nil, fmt.Errorf("QMatMul input must have rank >= 1, got a scalar")
	}
	wv, err := weights(w, scales)
	if err != nil {
		return nil, err
	}
	n, k := int(w.Shape[0]), int(w.Shape[1])
	if kx := int(x.Shape[len(x.Shape)-1]); kx != k {
		return nil, fmt.Errorf("QMatMul inner dims differ: X %v, W %v (want X[..., %d])", x.Shape, w.Shape, k)
	}
	outShape := append(append([]int64{}, x.Shape[:len(x.Shape)-1]...), int64(n))
	y := ir.NewTensor(x.DType, outShape)
	rows := x.Len() / max(k, 1)
	if k == 0 {
		rows = int(ir.NumElements(x.Shape[:len(x.Shape)-1]))
	}
	xs := make([]float64, k)
	for r := 0; r < rows; r++ {
		for i := range xs {
			xs[i] = x.Float64(r*k + i)
		}
		for j := 0; j < n; j++ {
			wr := wv[j*k : (j+1)*k]
			var s float64
			for i, xv := range xs {
				s += xv * float64(wr[i])
			}
			y.SetFloat64(r*n+j, s)
		}
	}
	return []*ir.Tensor{y}, nil
}
