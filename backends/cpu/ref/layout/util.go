package layout

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// maxElements bounds the element count of outputs whose shape comes from
// data (ConstantOfShape, Expand, Tile, Range, ...), so that a corrupt or
// hostile shape gives an error instead of an allocation panic.
const maxElements = int64(1) << 31

// checkedNumel returns the element count of shape, rejecting negative dims,
// overflow and sizes beyond maxElements.
func checkedNumel(shape []int64) (int64, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dim in shape %v", shape)
		}
		if d == 0 {
			return 0, nil
		}
	}
	for _, d := range shape {
		if n > maxElements/d {
			return 0, fmt.Errorf("shape %v has too many elements", shape)
		}
		n *= d
	}
	return n, nil
}

// newOut allocates an output tensor after checking its shape.
func newOut(dt ir.DType, shape []int64) (*ir.Tensor, error) {
	if _, err := checkedNumel(shape); err != nil {
		return nil, err
	}
	return ir.NewTensor(dt, shape), nil
}

// copyElem copies element si of src to element di of dst (same dtype).
func copyElem(dst *ir.Tensor, di int, src *ir.Tensor, si int) {
	es := src.DType.Size()
	copy(dst.Data[di*es:(di+1)*es], src.Data[si*es:(si+1)*es])
}

// copyElems copies n consecutive elements from src[si:] to dst[di:].
func copyElems(dst *ir.Tensor, di int, src *ir.Tensor, si, n int) {
	es := src.DType.Size()
	copy(dst.Data[di*es:(di+n)*es], src.Data[si*es:(si+n)*es])
}

// view returns a tensor sharing t's data under another shape of the same
// element count. It must only be read.
func view(t *ir.Tensor, shape []int64) *ir.Tensor {
	return &ir.Tensor{DType: t.DType, Shape: shape, Data: t.Data}
}

// reshaped returns a fresh copy of t with a new shape.
func reshaped(t *ir.Tensor, shape []int64) *ir.Tensor {
	out := ir.NewTensor(t.DType, shape)
	copy(out.Data, t.Data)
	return out
}

// intValues reads an index-like tensor (any integer dtype) as int64s.
func intValues(t *ir.Tensor, what string) ([]int64, error) {
	if t == nil {
		return nil, fmt.Errorf("missing %s input", what)
	}
	if !t.DType.IsInt() {
		return nil, fmt.Errorf("%s must be an integer tensor, got %v", what, t.DType)
	}
	if t.DType == ir.Uint64 {
		for i := 0; i < t.Len(); i++ {
			if t.Uint64(i) > math.MaxInt64 {
				return nil, fmt.Errorf("%s value %d out of range", what, t.Uint64(i))
			}
		}
	}
	return t.Int64s(), nil
}

// shapeValues reads a 1-D integer tensor (rank 0 accepted for one value).
func shapeValues(t *ir.Tensor, what string) ([]int64, error) {
	if t != nil && len(t.Shape) > 1 {
		return nil, fmt.Errorf("%s must be 1-D, got shape %v", what, t.Shape)
	}
	return intValues(t, what)
}

// scalarInt reads a tensor holding exactly one integer.
func scalarInt(t *ir.Tensor, what string) (int64, error) {
	v, err := intValues(t, what)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("%s must hold one value, got shape %v", what, t.Shape)
	}
	return v[0], nil
}

// normIndex maps a possibly negative index into [0, dim) or reports it out
// of range.
func normIndex(i, dim int64) (int64, error) {
	if i < -dim || i >= dim {
		return 0, fmt.Errorf("index %d out of range for dim %d", i, dim)
	}
	if i < 0 {
		i += dim
	}
	return i, nil
}

// unravel writes the multi-index of linear offset off in shape into idx.
func unravel(off int64, shape []int64, idx []int64) {
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = off % shape[d]
			off /= shape[d]
		}
	}
}

// dot returns the linear offset of idx under strides.
func dot(idx, strides []int64) int64 {
	off := int64(0)
	for i := range idx {
		off += idx[i] * strides[i]
	}
	return off
}

// prod multiplies dims.
func prod(dims []int64) int64 { return ir.NumElements(dims) }

// splitAt decomposes shape around axis into (outer, dim, inner) counts.
func splitAt(shape []int64, axis int) (outer, dim, inner int) {
	return int(prod(shape[:axis])), int(shape[axis]), int(prod(shape[axis+1:]))
}

// need checks that inputs 0..k-1 are present.
func need(in []*ir.Tensor, k int) error {
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	return ref.Need(in, idx...)
}

// opt returns input i, or nil when it is absent.
func opt(in []*ir.Tensor, i int) *ir.Tensor {
	if i < len(in) {
		return in[i]
	}
	return nil
}

// cmpElem orders element i of a against element j of b (same dtype) by
// value: floats numerically with NaN above everything (and equal to NaN),
// unsigned integers as uint64, the rest as int64.
func cmpElem(a *ir.Tensor, i int, b *ir.Tensor, j int) int {
	switch dt := a.DType; {
	case dt.IsFloat():
		x, y := a.Float64(i), b.Float64(j)
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		switch {
		case xn && yn:
			return 0
		case xn:
			return 1
		case yn:
			return -1
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case dt.IsUnsigned():
		x, y := a.Uint64(i), b.Uint64(j)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	default:
		x, y := a.Int64(i), b.Int64(j)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
}

// onnxDTypes maps ONNX TensorProto.DataType numbers to weft dtypes.
var onnxDTypes = map[int64]ir.DType{
	1: ir.Float32, 2: ir.Uint8, 3: ir.Int8, 4: ir.Uint16, 5: ir.Int16,
	6: ir.Int32, 7: ir.Int64, 9: ir.Bool, 10: ir.Float16, 11: ir.Float64,
	12: ir.Uint32, 13: ir.Uint64, 16: ir.BFloat16,
}

// dtypeFromONNX converts an ONNX DataType number (a "dtype" attribute).
func dtypeFromONNX(code int64) (ir.DType, error) {
	if dt, ok := onnxDTypes[code]; ok {
		return dt, nil
	}
	return ir.Invalid, ref.Unsupported("ONNX data type %d", code)
}
