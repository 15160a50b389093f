package reduce

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// splitAt views shape as [outer, n, inner] around axis: outer is the product
// of the dims before axis, n the size of axis, inner the product after it.
func splitAt(shape []int64, axis int) (outer, n, inner int) {
	outer, inner = 1, 1
	for _, d := range shape[:axis] {
		outer *= int(d)
	}
	for _, d := range shape[axis+1:] {
		inner *= int(d)
	}
	return outer, int(shape[axis]), inner
}

// product is the number of elements of dims (1 for none).
func product(dims []int64) int {
	p := 1
	for _, d := range dims {
		p *= int(d)
	}
	return p
}

// needFloat rejects non-float dtypes with ref.Unsupported: the op is only
// defined for floating-point tensors.
func needFloat(op string, t *ir.Tensor) error {
	if !t.DType.IsFloat() {
		return ref.Unsupported("%s on %v", op, t.DType)
	}
	return nil
}

// needNumeric rejects bool (and anything else that is not a number).
func needNumeric(op string, t *ir.Tensor) error {
	if !t.DType.IsFloat() && !t.DType.IsInt() {
		return ref.Unsupported("%s on %v", op, t.DType)
	}
	return nil
}

// floatsOf reads every element of t as float64.
func floatsOf(t *ir.Tensor) []float64 {
	out := make([]float64, t.Len())
	for i := range out {
		out[i] = t.Float64(i)
	}
	return out
}

// fromFloats builds a tensor of dtype dt and shape from float64 values,
// rounding once to dt.
func fromFloats(dt ir.DType, shape []int64, vals []float64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	for i, v := range vals {
		t.SetFloat64(i, v)
	}
	return t
}

// checkLen reports an error unless the 1-D parameter p has n elements.
func checkLen(name string, p *ir.Tensor, n int) error {
	if p.Len() != n {
		return fmt.Errorf("%s has shape %v (%d elements), want %d", name, p.Shape, p.Len(), n)
	}
	return nil
}

// onnxFloatType maps an ONNX TensorProto element type code (as used by the
// stash_type attribute) to a float dtype.
func onnxFloatType(code int64) (ir.DType, bool) {
	switch code {
	case 1:
		return ir.Float32, true
	case 10:
		return ir.Float16, true
	case 11:
		return ir.Float64, true
	case 16:
		return ir.BFloat16, true
	}
	return ir.Invalid, false
}
