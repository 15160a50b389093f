package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("QuantizeLinear", quantizeLinear)
	ref.Register("DequantizeLinear", dequantizeLinear)
	ref.Register("DynamicQuantizeLinear", dynamicQuantizeLinear)
}

// qRange is the saturation range of an integer quantized type.
func qRange(dt ir.DType) (lo, hi int64) {
	switch dt {
	case ir.Uint8:
		return 0, math.MaxUint8
	case ir.Int8:
		return math.MinInt8, math.MaxInt8
	case ir.Uint16:
		return 0, math.MaxUint16
	case ir.Int16:
		return math.MinInt16, math.MaxInt16
	}
	return math.MinInt32, math.MaxInt32
}

// saturate rounds v half to even and clamps it to [lo, hi]. NaN maps to 0
// (what the common x86 runtimes produce; ONNX leaves it undefined).
func saturate(v float64, lo, hi int64) int64 {
	if math.IsNaN(v) {
		return 0
	}
	v = math.RoundToEven(v)
	if v <= float64(lo) {
		return lo
	}
	if v >= float64(hi) {
		return hi
	}
	return int64(v)
}

// requantize maps an integer accumulator to the output quantized type:
// saturate(round(acc · mult) + zp).
func requantize(acc float64, mult float32, zp, lo, hi int64) int64 {
	return saturate(math.RoundToEven(acc*float64(mult))+float64(zp), lo, hi)
}

// onnxDType maps the ONNX TensorProto element types a quantized output may
// name (output_dtype) to weft dtypes.
func onnxDType(code int64) (ir.DType, bool) {
	switch code {
	case 2:
		return ir.Uint8, true
	case 3:
		return ir.Int8, true
	case 4:
		return ir.Uint16, true
	case 5:
		return ir.Int16, true
	}
	return ir.Invalid, false
}

// paramIndex maps a linear index of x to the linear index of a scale or
// zero-point tensor of shape p: per tensor (one element, block == 0), per
// axis (1-D of length x[axis], block == 0) or blocked (rank of x, with
// p[axis] = ceil(x[axis]/block) and the other dims equal to x's).
func paramIndex(x, p []int64, axis int, block int64) (func(int) int, error) {
	if len(x) == 0 {
		if ir.NumElements(p) != 1 {
			return nil, fmt.Errorf("scale shape %v for a scalar input", p)
		}
		return func(int) int { return 0 }, nil
	}
	inner := int(ir.NumElements(x[axis+1:]))
	d := int(x[axis])
	if block == 0 {
		if len(p) <= 1 && ir.NumElements(p) == 1 {
			return func(int) int { return 0 }, nil
		}
		if len(p) != 1 || int(p[0]) != d {
			return nil, fmt.Errorf("per-axis scale shape %v: want [%d] (axis %d of %v)", p, d, axis, x)
		}
		return func(i int) int { return (i / inner) % d }, nil
	}
	if block < 0 {
		return nil, fmt.Errorf("block_size %d < 0", block)
	}
	nb := (int64(d) + block - 1) / block
	if len(p) != len(x) {
		return nil, fmt.Errorf("blocked scale has rank %d, input rank %d", len(p), len(x))
	}
	for i := range x {
		if (i == axis && p[i] != nb) || (i != axis && p[i] != x[i]) {
			return nil, fmt.Errorf("blocked scale shape %v does not fit input %v with axis %d, block_size %d", p, x, axis, block)
		}
	}
	bs := int(block)
	return func(i int) int {
		outer, c, in := i/(inner*d), (i/inner)%d, i%inner
		return (outer*int(nb)+c/bs)*inner + in
	}, nil
}

// quantParams validates a scale and optional zero point for x and returns
// the index map shared by both.
func quantParams(n *ir.Node, x, scale, zp *ir.Tensor) (func(int) int, error) {
	axis := 0
	block := n.AttrInt("block_size", 0)
	perTensor := block == 0 && len(scale.Shape) <= 1 && scale.Len() == 1
	// axis matters only for per-axis and blocked parameters.
	if len(x.Shape) > 0 && !perTensor {
		var err error
		if axis, err = ref.NormAxis(n.AttrInt("axis", 1), len(x.Shape)); err != nil {
			return nil, err
		}
	}
	idx, err := paramIndex(x.Shape, scale.Shape, axis, block)
	if err != nil {
		return nil, err
	}
	if zp != nil && !slices.Equal(zp.Shape, scale.Shape) && !(zp.Len() == 1 && scale.Len() == 1) {
		return nil, fmt.Errorf("zero point shape %v differs from scale shape %v", zp.Shape, scale.Shape)
	}
	return idx, nil
}

// quantizeLinear is ONNX QuantizeLinear-21 for integer outputs:
// y = saturate(round_half_even(x / y_scale) + y_zero_point). The output
// dtype comes from the zero point, else output_dtype, else uint8. The
// division runs in float32 (float64 when x or the scale is float64).
func quantizeLinear(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, scale, zp := in[0], in[1], opt(in, 2)
	if !x.DType.IsFloat() && x.DType != ir.Int32 {
		return nil, ref.Unsupported("QuantizeLinear input %v", x.DType)
	}
	if err := needFloat("QuantizeLinear y_scale", scale); err != nil {
		return nil, err
	}
	outDT := ir.Uint8
	if code := n.AttrInt("output_dtype", 0); code != 0 {
		dt, ok := onnxDType(code)
		if !ok {
			return nil, ref.Unsupported("QuantizeLinear output_dtype %d", code)
		}
		outDT = dt
		if zp != nil && zp.DType != dt {
			return nil, fmt.Errorf("output_dtype %v differs from y_zero_point dtype %v", dt, zp.DType)
		}
	}
	if zp != nil {
		outDT = zp.DType
	}
	switch outDT {
	case ir.Uint8, ir.Int8, ir.Uint16, ir.Int16:
	default:
		return nil, ref.Unsupported("QuantizeLinear to %v", outDT)
	}
	idx, err := quantParams(n, x, scale, zp)
	if err != nil {
		return nil, err
	}
	wide := x.DType == ir.Float64 || scale.DType == ir.Float64
	lo, hi := qRange(outDT)
	y := ir.NewTensor(outDT, x.Shape)
	for i := 0; i < x.Len(); i++ {
		j := idx(i)
		var q float64
		if wide {
			q = x.Float64(i) / scale.Float64(j)
		} else {
			q = float64(float32(x.Float64(i)) / float32(scale.Float64(j)))
		}
		var z float64
		if zp != nil {
			z = float64(zp.Int64(j))
		}
		y.SetInt64(i, saturate(math.RoundToEven(q)+z, lo, hi))
	}
	return []*ir.Tensor{y}, nil
}

// dequantizeLinear is ONNX DequantizeLinear-21 for integer inputs:
// y = (x - x_zero_point) * x_scale, in the scale's dtype.
func dequantizeLinear(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, scale, zp := in[0], in[1], opt(in, 2)
	switch x.DType {
	case ir.Uint8, ir.Int8, ir.Uint16, ir.Int16, ir.Int32:
	default:
		return nil, ref.Unsupported("DequantizeLinear input %v", x.DType)
	}
	if err := needFloat("DequantizeLinear x_scale", scale); err != nil {
		return nil, err
	}
	if zp != nil && zp.DType != x.DType {
		return nil, fmt.Errorf("x_zero_point is %v, x is %v", zp.DType, x.DType)
	}
	idx, err := quantParams(n, x, scale, zp)
	if err != nil {
		return nil, err
	}
	y := ir.NewTensor(scale.DType, x.Shape)
	for i := 0; i < x.Len(); i++ {
		j := idx(i)
		d := x.Int64(i)
		if zp != nil {
			d -= zp.Int64(j)
		}
		if scale.DType == ir.Float64 {
			y.SetFloat64(i, float64(d)*scale.Float64(j))
		} else {
			y.SetFloat64(i, float64(float32(d)*float32(scale.Float64(j))))
		}
	}
	return []*ir.Tensor{y}, nil
}

// dynamicQuantizeLinear is ONNX DynamicQuantizeLinear-11, computed in
// float32 step by step as the operator's function body does:
//
//	scale = (max(0, max(x)) - min(0, min(x))) / 255
//	zp    = cast_u8(round(clip(0 - min(0, min(x)) / scale, 0, 255)))
//	y     = saturate(round(x / scale) + zp)
//
// When x is all zeros (scale 0, undefined in the spec) it returns scale 0,
// zero point 0 and y = 0.
func dynamicQuantizeLinear(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if x.DType != ir.Float32 {
		return nil, ref.Unsupported("DynamicQuantizeLinear input %v (want f32)", x.DType)
	}
	xs := x.Float32s()
	var lo, hi float32 // the range always includes 0
	for _, v := range xs {
		if math.IsNaN(float64(v)) {
			return nil, fmt.Errorf("DynamicQuantizeLinear input holds NaN")
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	scale := (hi - lo) / 255
	y := ir.NewTensor(ir.Uint8, x.Shape)
	var zp int64
	if scale != 0 {
		zf := float64(0 - lo/scale)
		zp = int64(math.RoundToEven(math.Min(math.Max(zf, 0), 255)))
		for i, v := range xs {
			y.SetInt64(i, saturate(math.RoundToEven(float64(v/scale))+float64(zp), 0, 255))
		}
	}
	return []*ir.Tensor{y, ref.Scalar(ir.Float32, float64(scale)), ref.Scalar(ir.Uint8, float64(zp))}, nil
}
