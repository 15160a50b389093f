package nn

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// toFloats copies t's elements into a float64 slice (a typed loop for f32,
// the generic accessor otherwise).
func toFloats(t *ir.Tensor) []float64 {
	out := make([]float64, t.Len())
	if t.DType == ir.Float32 {
		for i, v := range t.Float32s() {
			out[i] = float64(v)
		}
		return out
	}
	for i := range out {
		out[i] = t.Float64(i)
	}
	return out
}

// toInts copies t's elements into an int64 slice.
func toInts(t *ir.Tensor) []int64 {
	out := make([]int64, t.Len())
	for i := range out {
		out[i] = t.Int64(i)
	}
	return out
}

// fromFloats builds a tensor of dtype dt from float64 values, rounding once.
func fromFloats(dt ir.DType, shape []int64, vals []float64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	if dt == ir.Float32 {
		dst := t.Float32s()
		for i, v := range vals {
			dst[i] = float32(v)
		}
		return t
	}
	for i, v := range vals {
		t.SetFloat64(i, v)
	}
	return t
}

// fromInts builds a tensor of dtype dt from int64 values (wrapping).
func fromInts(dt ir.DType, shape []int64, vals []int64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	for i, v := range vals {
		t.SetInt64(i, v)
	}
	return t
}

// needFloat rejects non-float dtypes as unsupported.
func needFloat(what string, t *ir.Tensor) error {
	if !t.DType.IsFloat() {
		return ref.Unsupported("%s dtype %v (want a float type)", what, t.DType)
	}
	return nil
}

// isScalarLike reports whether t holds exactly one element and has rank 0
// or 1 (how ONNX spells a per-tensor scale or zero point).
func isScalarLike(t *ir.Tensor) bool {
	return t.Len() == 1 && len(t.Shape) <= 1
}

// checkAttrLen returns an error unless the ints attribute name, when set,
// has want entries.
func checkAttrLen(n *ir.Node, name string, want int) error {
	if v := n.AttrInts(name, nil); n.Has(name) && len(v) != want {
		return fmt.Errorf("%s has %d entries, want %d", name, len(v), want)
	}
	return nil
}

// exactInt converts an integer-valued float64 accumulator to int64,
// refusing values a float64 cannot hold exactly.
func exactInt(v float64) (int64, error) {
	if math.Abs(v) > 1<<53 {
		return 0, fmt.Errorf("integer accumulator %g exceeds 2^53", v)
	}
	return int64(v), nil
}
