package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

// floatRows returns the elements of a float tensor as float32 values and
// its shape split into rows × cols (cols = the last dimension).
func floatRows(t *ir.Tensor) (vals []float32, rows, cols int, err error) {
	if !t.DType.IsFloat() {
		return nil, 0, 0, fmt.Errorf("quant: %w: quantizing a %v tensor (want a float type)", ir.ErrUnsupported, t.DType)
	}
	if len(t.Shape) == 0 {
		return nil, 0, 0, fmt.Errorf("quant: cannot quantize a scalar")
	}
	if err := t.Check(); err != nil {
		return nil, 0, 0, fmt.Errorf("quant: %w", err)
	}
	cols = int(t.Shape[len(t.Shape)-1])
	n := t.Len()
	if cols > 0 {
		rows = n / cols
	}
	vals = make([]float32, n)
	if t.DType == ir.Float32 {
		copy(vals, t.Float32s())
	} else {
		for i := range vals {
			vals[i] = float32(t.Float64(i))
		}
	}
	return vals, rows, cols, nil
}

// Quantize encodes a float tensor (f32, f16, bf16, f64) into the block
// format dt (a Supported type or Q4_K) along its last dimension, which must
// be a multiple of dt's block size. The result has t's shape and dtype dt.
func Quantize(t *ir.Tensor, dt ir.DType) (*ir.Tensor, error) {
	if !Encodable(dt) {
		return nil, fmt.Errorf("quant: %w: no codec for %v", ir.ErrUnsupported, dt)
	}
	vals, rows, cols, err := floatRows(t)
	if err != nil {
		return nil, err
	}
	if cols%dt.BlockSize() != 0 {
		return nil, fmt.Errorf("quant: %v: the last dimension %d is not a multiple of %d", t, cols, dt.BlockSize())
	}
	out := ir.NewTensor(dt, t.Shape)
	rb := int(dt.Bytes(int64(cols)))
	for r := 0; r < rows; r++ {
		if err := EncodeRow(dt, out.Data[r*rb:(r+1)*rb], vals[r*cols:(r+1)*cols]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// QuantizePerChannel encodes a 2-D float tensor [N, K] as int8 with one
// float32 scale per row (see QuantizeRowInt8): it returns the Int8 [N, K]
// codes and the Float32 [N] scales.
func QuantizePerChannel(t *ir.Tensor) (q, scales *ir.Tensor, err error) {
	if len(t.Shape) != 2 {
		return nil, nil, fmt.Errorf("quant: per-channel int8 needs a 2-D tensor, got %v", t)
	}
	vals, rows, cols, err := floatRows(t)
	if err != nil {
		return nil, nil, err
	}
	q = ir.NewTensor(ir.Int8, t.Shape)
	scales = ir.NewTensor(ir.Float32, []int64{t.Shape[0]})
	codes := make([]int8, cols)
	for r := 0; r < rows; r++ {
		s := QuantizeRowInt8(codes, vals[r*cols:(r+1)*cols])
		for j, c := range codes {
			q.Data[r*cols+j] = byte(c)
		}
		binary.LittleEndian.PutUint32(scales.Data[4*r:], math.Float32bits(s))
	}
	return q, scales, nil
}

// DequantizePerChannel decodes Int8 [N, K] codes with Float32 [N] scales
// into a Float32 [N, K] tensor.
func DequantizePerChannel(q, scales *ir.Tensor) (*ir.Tensor, error) {
	if q.DType != ir.Int8 || len(q.Shape) != 2 {
		return nil, fmt.Errorf("quant: per-channel codes must be a 2-D i8 tensor, got %v", q)
	}
	if scales.DType != ir.Float32 || len(scales.Shape) != 1 || scales.Shape[0] != q.Shape[0] {
		return nil, fmt.Errorf("quant: per-channel scales must be f32[%d], got %v", q.Shape[0], scales)
	}
	for _, t := range []*ir.Tensor{q, scales} {
		if err := t.Check(); err != nil {
			return nil, fmt.Errorf("quant: %w", err)
		}
	}
	out := ir.NewTensor(ir.Float32, q.Shape)
	if out.Len() == 0 {
		return out, nil
	}
	vals, s := out.Float32s(), scales.Float32s()
	rows, cols := int(q.Shape[0]), int(q.Shape[1])
	codes := make([]int8, cols)
	for r := 0; r < rows; r++ {
		for j := range codes {
			codes[j] = int8(q.Data[r*cols+j])
		}
		DequantizeRowInt8(vals[r*cols:(r+1)*cols], codes, s[r])
	}
	return out, nil
}

// RelError is the relative quantization error of approx against orig:
// the mean squared error divided by the mean square of orig (0 when both
// are identical, +Inf when orig is all zeros and approx is not). It panics
// if the lengths differ.
func RelError(orig, approx []float32) float64 {
	if len(orig) != len(approx) {
		panic(fmt.Sprintf("quant: RelError of %d and %d values", len(orig), len(approx)))
	}
	var se, ss float64
	for i, o := range orig {
		d := float64(o) - float64(approx[i])
		se += d * d
		ss += float64(o) * float64(o)
	}
	if se == 0 {
		return 0
	}
	return se / ss
}
