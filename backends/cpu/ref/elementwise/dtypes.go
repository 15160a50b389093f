package elementwise

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// dtypeSet is a set of dtypes: the type constraint of an op.
type dtypeSet uint32

func setOf(dts ...ir.DType) dtypeSet {
	var s dtypeSet
	for _, dt := range dts {
		s |= 1 << dt
	}
	return s
}

func (s dtypeSet) has(dt ir.DType) bool { return dt < 32 && s&(1<<dt) != 0 }

func (s dtypeSet) String() string {
	var names []string
	for dt := ir.DType(1); dt < 32; dt++ {
		if s.has(dt) {
			names = append(names, dt.String())
		}
	}
	return strings.Join(names, ", ")
}

// The type constraints the ops use.
var (
	floats   = setOf(ir.Float16, ir.BFloat16, ir.Float32, ir.Float64)
	signed   = setOf(ir.Int8, ir.Int16, ir.Int32, ir.Int64)
	unsigned = setOf(ir.Uint8, ir.Uint16, ir.Uint32, ir.Uint64)
	ints     = signed | unsigned
	numeric  = floats | ints
	bools    = setOf(ir.Bool)
	anyType  = numeric | bools
)

// checkDType reports whether dt satisfies an op's type constraint: string
// tensors are an honest "unsupported", any other dtype outside the
// constraint is an invalid model.
func checkDType(what string, dt ir.DType, allowed dtypeSet) error {
	if dt == ir.String {
		return ref.Unsupported("%s: string tensors", what)
	}
	if !allowed.has(dt) {
		return fmt.Errorf("%s: dtype %v is not allowed here (allowed: %v)", what, dt, allowed)
	}
	return nil
}

// onnxDTypes maps ONNX TensorProto.DataType numbers to weft dtypes.
// Numbers missing here (string 8, complex 14/15, float8 17-20, 4-bit
// ints 21/22) have no weft dtype.
var onnxDTypes = map[int64]ir.DType{
	1:  ir.Float32,
	2:  ir.Uint8,
	3:  ir.Int8,
	4:  ir.Uint16,
	5:  ir.Int16,
	6:  ir.Int32,
	7:  ir.Int64,
	9:  ir.Bool,
	10: ir.Float16,
	11: ir.Float64,
	12: ir.Uint32,
	13: ir.Uint64,
	16: ir.BFloat16,
}

// DTypeFromONNX maps an ONNX TensorProto.DataType number (as in Cast's `to`
// attribute) to a weft dtype. ok is false for numbers weft has no dtype
// for (string, complex, float8, 4-bit types, undefined).
func DTypeFromONNX(n int64) (dt ir.DType, ok bool) {
	dt, ok = onnxDTypes[n]
	return dt, ok
}

// ONNXFromDType is the inverse of DTypeFromONNX; ok is false for dtypes
// without an ONNX number (Invalid).
func ONNXFromDType(dt ir.DType) (n int64, ok bool) {
	if dt == ir.String {
		return 8, true
	}
	for k, v := range onnxDTypes {
		if v == dt {
			return k, true
		}
	}
	return 0, false
}

// setFloat stores v into element i; ir.Tensor.SetFloat64 rounds once
// (through round-to-odd) for f16 and bf16.
func setFloat(t *ir.Tensor, i int, v float64) { t.SetFloat64(i, v) }

// uintToFloat64Odd converts m to float64 rounding to odd, so that a later
// rounding to a narrower float is still a single correct rounding.
func uintToFloat64Odd(m uint64) float64 {
	if m < 1<<53 {
		return float64(m)
	}
	shift := bits.Len64(m) - 53
	q := m >> shift
	if m&(1<<shift-1) != 0 {
		q |= 1
	}
	return math.Ldexp(float64(q), shift)
}

// setFromInt stores the integer v (interpreted as unsigned when uns) into
// element i of t, whatever t's dtype: wrapped to an integer width, v != 0
// for bool, correctly rounded for floats.
func setFromInt(t *ir.Tensor, i int, v int64, uns bool) {
	switch {
	case !t.DType.IsFloat():
		t.SetInt64(i, v) // wraps to the width; bool is v != 0
	case t.DType == ir.Float32 && uns:
		t.SetFloat64(i, float64(float32(uint64(v))))
	case t.DType == ir.Float32:
		t.SetFloat64(i, float64(float32(v)))
	case t.DType == ir.Float64 && uns:
		t.SetFloat64(i, float64(uint64(v)))
	case t.DType == ir.Float64:
		t.SetFloat64(i, float64(v))
	case uns:
		setFloat(t, i, uintToFloat64Odd(uint64(v)))
	case v < 0:
		setFloat(t, i, -uintToFloat64Odd(-uint64(v)))
	default:
		setFloat(t, i, uintToFloat64Odd(uint64(v)))
	}
}

// floatToIntBits converts a float to the two's-complement bits of an
// integer of dtype dt (to be wrapped to its width by SetInt64): truncation
// toward zero. ONNX leaves out-of-range conversions undefined (numpy's
// results differ by width and platform), so weft picks one portable rule:
// a truncated value inside the int64 range (or, for a u64 target, the
// uint64 range) wraps to the width, which agrees with numpy on x86-64 for
// the common cases (-1.0 -> 255 and 300.0 -> 44 in u8); NaN, infinities
// and anything beyond become math.MinInt64 (0 for the narrower widths).
func floatToIntBits(v float64, dt ir.DType) int64 {
	t := math.Trunc(v)
	switch {
	case t >= -(1<<63) && t < 1<<63:
		return int64(t)
	case dt == ir.Uint64 && t >= 0 && t < 1<<64:
		return int64(uint64(t))
	}
	return math.MinInt64
}

// setFromFloat stores the float v into element i of t, whatever t's
// dtype: rounded for floats, v != 0 for bool (NaN is true), converted by
// floatToIntBits for integers.
func setFromFloat(t *ir.Tensor, i int, v float64) {
	switch {
	case t.DType.IsFloat():
		setFloat(t, i, v)
	case t.DType == ir.Bool:
		t.SetFloat64(i, v) // v != 0, NaN included
	default:
		t.SetInt64(i, floatToIntBits(v, t.DType))
	}
}
