package layout

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Ops that generate a tensor from a shape or a few scalars:
// ConstantOfShape, Range, OneHot, EyeLike and Trilu (which masks a matrix).
func init() {
	ref.Register("ConstantOfShape", constantOfShapeKernel)
	ref.Register("Range", rangeKernel)
	ref.Register("OneHot", oneHotKernel)
	ref.Register("EyeLike", eyeLikeKernel)
	ref.Register("Trilu", triluKernel)
}

// constantOfShapeKernel: ConstantOfShape(shape) filled with the one-element
// tensor attribute value (default f32 0).
func constantOfShapeKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	shape, err := shapeValues(in[0], "shape")
	if err != nil {
		return nil, err
	}
	val := n.AttrTensor("value")
	if val == nil {
		val = ir.NewTensor(ir.Float32, []int64{1})
	}
	if val.Len() != 1 {
		return nil, fmt.Errorf("value must hold one element, got %v", val)
	}
	if !val.DType.Valid() {
		return nil, ref.Unsupported("ConstantOfShape value of dtype %v", val.DType)
	}
	out, err := newOut(val.DType, shape)
	if err != nil {
		return nil, err
	}
	for i := 0; i < out.Len(); i++ {
		copyElem(out, i, val, 0)
	}
	return []*ir.Tensor{out}, nil
}

// rangeKernel: Range(start, limit, delta), the max(ceil((limit-start)/delta), 0)
// values start + i*delta. Integer dtypes compute exactly in int64 (uint64 in
// uint64); float dtypes in float64, rounded once per element.
func rangeKernel(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 3); err != nil {
		return nil, err
	}
	dt := in[0].DType
	if err := ref.SameDType(dt, in[1], in[2]); err != nil {
		return nil, err
	}
	if dt == ir.Bool || !dt.Valid() {
		return nil, fmt.Errorf("Range does not take %v", dt)
	}
	for i, t := range in[:3] {
		if t.Len() != 1 {
			return nil, fmt.Errorf("input %d must be a scalar, got shape %v", i, t.Shape)
		}
	}
	var count int64
	switch {
	case dt.IsFloat():
		s, l, d := in[0].Float64(0), in[1].Float64(0), in[2].Float64(0)
		if d == 0 || math.IsNaN(s) || math.IsNaN(l) || math.IsNaN(d) {
			return nil, fmt.Errorf("invalid range (%v, %v, %v)", s, l, d)
		}
		c := math.Ceil((l - s) / d)
		if math.IsNaN(c) || c > float64(maxElements) {
			return nil, fmt.Errorf("range (%v, %v, %v) too long", s, l, d)
		}
		count = int64(max(c, 0))
		out := ir.NewTensor(dt, []int64{count})
		for i := int64(0); i < count; i++ {
			out.SetFloat64(int(i), s+float64(i)*d)
		}
		return []*ir.Tensor{out}, nil
	case dt == ir.Uint64:
		s, l, d := in[0].Uint64(0), in[1].Uint64(0), in[2].Uint64(0)
		if d == 0 {
			return nil, fmt.Errorf("range delta is 0")
		}
		if l > s {
			count = int64(min((l-s-1)/d+1, uint64(maxElements)+1))
		}
		if count > maxElements {
			return nil, fmt.Errorf("range too long")
		}
		out := ir.NewTensor(dt, []int64{count})
		for i := int64(0); i < count; i++ {
			out.SetInt64(int(i), int64(s+uint64(i)*d))
		}
		return []*ir.Tensor{out}, nil
	default: // signed integers, and unsigned ones up to 32 bits (exact in int64)
		s, l, d := in[0].Int64(0), in[1].Int64(0), in[2].Int64(0)
		if d == 0 {
			return nil, fmt.Errorf("range delta is 0")
		}
		// Counting in float64 would lose precision for big int64s; use
		// uint64 spans, which cannot overflow for int64 endpoints.
		switch {
		case d > 0 && l > s:
			count = int64(min((uint64(l)-uint64(s)-1)/uint64(d)+1, uint64(maxElements)+1))
		case d < 0 && l < s:
			count = int64(min((uint64(s)-uint64(l)-1)/(uint64(-(d+1))+1)+1, uint64(maxElements)+1))
		}
		if count > maxElements {
			return nil, fmt.Errorf("range (%d, %d, %d) too long", s, l, d)
		}
		out := ir.NewTensor(dt, []int64{count})
		for i := int64(0); i < count; i++ {
			out.SetInt64(int(i), s+i*d)
		}
		return []*ir.Tensor{out}, nil
	}
}

// oneHotKernel: OneHot(indices, depth, values) with attribute axis (default
// -1): a new axis of size depth holds values[1] at the index position and
// values[0] elsewhere. Negative indices count from depth; indices outside
// [-depth, depth) give an all-off row.
func oneHotKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 3); err != nil {
		return nil, err
	}
	it, dt, vals := in[0], in[1], in[2]
	if dt.Len() != 1 {
		return nil, fmt.Errorf("depth must hold one value, got shape %v", dt.Shape)
	}
	if vals.Len() != 2 {
		return nil, fmt.Errorf("values must hold [off, on], got shape %v", vals.Shape)
	}
	if it.DType == ir.Bool || dt.DType == ir.Bool {
		return nil, fmt.Errorf("indices and depth must be numeric")
	}
	depth := dt.Int64(0) // float depths are truncated, as ONNX's reference does
	if depth < 1 || depth > maxElements {
		return nil, fmt.Errorf("invalid depth %d", depth)
	}
	r := len(it.Shape)
	axis := n.AttrInt("axis", -1)
	if axis < -int64(r+1) || axis > int64(r) {
		return nil, fmt.Errorf("axis %d out of range for output rank %d", axis, r+1)
	}
	if axis < 0 {
		axis += int64(r + 1)
	}
	outShape := append(append(append([]int64{}, it.Shape[:axis]...), depth), it.Shape[axis:]...)
	out, err := newOut(vals.DType, outShape)
	if err != nil {
		return nil, err
	}
	for i := 0; i < out.Len(); i++ {
		copyElem(out, i, vals, 0)
	}
	inner := int(prod(it.Shape[axis:]))
	for i := 0; i < it.Len(); i++ {
		v := it.Int64(i)
		if v < -depth || v >= depth {
			continue
		}
		if v < 0 {
			v += depth
		}
		o, p := i/inner, i%inner
		copyElem(out, (o*int(depth)+int(v))*inner+p, vals, 1)
	}
	return []*ir.Tensor{out}, nil
}

// eyeLikeKernel: EyeLike(input), a 2-D tensor of input's shape with ones on
// the k-th diagonal, of attribute dtype (ONNX number; default input's dtype).
func eyeLikeKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	if len(x.Shape) != 2 {
		return nil, fmt.Errorf("input must be 2-D, got %v", x.Shape)
	}
	dt := x.DType
	if n.Has("dtype") {
		var err error
		if dt, err = dtypeFromONNX(n.AttrInt("dtype", 0)); err != nil {
			return nil, err
		}
	}
	rows, cols := x.Shape[0], x.Shape[1]
	k := n.AttrInt("k", 0)
	out := ir.NewTensor(dt, x.Shape)
	for i := int64(0); i < rows; i++ {
		if j := i + k; j >= 0 && j < cols {
			out.SetInt64(int(i*cols+j), 1)
		}
	}
	return []*ir.Tensor{out}, nil
}

// triluKernel: Trilu(input, k?) keeps the upper (attribute upper=1, the
// default: j-i >= k) or lower (j-i <= k) triangle of each matrix in the
// last two dims and zeroes the rest.
func triluKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	r := len(x.Shape)
	if r < 2 {
		return nil, fmt.Errorf("input must have rank >= 2, got %v", x.Shape)
	}
	var k int64
	if kt := opt(in, 1); kt != nil {
		var err error
		if k, err = scalarInt(kt, "k"); err != nil {
			return nil, err
		}
	}
	upper := n.AttrInt("upper", 1) != 0
	rows, cols := x.Shape[r-2], x.Shape[r-1]
	out := ir.NewTensor(x.DType, x.Shape)
	for i := 0; i < x.Len(); i++ {
		row, col := int64(i)/cols%rows, int64(i)%cols
		if d := col - row; (upper && d >= k) || (!upper && d <= k) {
			copyElem(out, i, x, i)
		}
	}
	return []*ir.Tensor{out}, nil
}
