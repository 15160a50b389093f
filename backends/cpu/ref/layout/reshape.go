package layout

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Ops that only change a tensor's shape (the data is copied unchanged) and
// ops that report a shape.
func init() {
	ref.Register("Reshape", reshapeKernel)
	ref.Register("Flatten", flattenKernel)
	ref.Register("Squeeze", squeezeKernel)
	ref.Register("Unsqueeze", unsqueezeKernel)
	ref.Register("Shape", shapeKernel)
	ref.Register("Size", sizeKernel)
}

// reshapeKernel: Reshape(data, shape). A 0 in shape copies the input dim
// (unless allowzero=1, when it means a zero dim); one -1 is inferred.
func reshapeKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x := in[0]
	spec, err := shapeValues(in[1], "shape")
	if err != nil {
		return nil, err
	}
	out, err := reshapeTarget(x.Shape, spec, n.AttrInt("allowzero", 0) != 0)
	if err != nil {
		return nil, err
	}
	return []*ir.Tensor{reshaped(x, out)}, nil
}

// reshapeTarget resolves a Reshape shape spec against the input shape.
func reshapeTarget(inShape, spec []int64, allowZero bool) ([]int64, error) {
	out := make([]int64, len(spec))
	infer := -1
	known := int64(1)
	for i, d := range spec {
		switch {
		case d == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("shape %v has more than one -1", spec)
			}
			infer = i
			continue
		case d < -1 || d > maxElements:
			return nil, fmt.Errorf("invalid dim %d in shape %v", d, spec)
		case d == 0 && !allowZero:
			if i >= len(inShape) {
				return nil, fmt.Errorf("shape %v copies dim %d of rank-%d input", spec, i, len(inShape))
			}
			d = inShape[i]
		}
		out[i] = d
		if d != 0 && known > maxElements/d {
			return nil, fmt.Errorf("shape %v has too many elements", spec)
		}
		known *= d
	}
	total := prod(inShape)
	if infer < 0 {
		if _, err := checkedNumel(out); err != nil {
			return nil, err
		}
	}
	if infer >= 0 {
		if known == 0 || total%known != 0 {
			return nil, fmt.Errorf("cannot infer -1 in shape %v for input shape %v", spec, inShape)
		}
		out[infer] = total / known
	} else if known != total {
		return nil, fmt.Errorf("cannot reshape %v (%d elements) to %v", inShape, total, out)
	}
	return out, nil
}

// flattenKernel: Flatten(input) to 2-D [prod(dims[:axis]), prod(dims[axis:])].
func flattenKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	r := int64(len(x.Shape))
	axis := n.AttrInt("axis", 1)
	if axis < -r || axis > r {
		return nil, fmt.Errorf("axis %d out of range for rank %d", axis, r)
	}
	if axis < 0 {
		axis += r
	}
	return []*ir.Tensor{reshaped(x, []int64{prod(x.Shape[:axis]), prod(x.Shape[axis:])})}, nil
}

// squeezeKernel: Squeeze(data, axes?) removes the listed size-1 dims, or
// every size-1 dim when axes is absent.
func squeezeKernel(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	drop := make([]bool, len(x.Shape))
	if a := opt(in, 1); a != nil {
		axes, err := shapeValues(a, "axes")
		if err != nil {
			return nil, err
		}
		norm, err := ref.NormAxes(axes, len(x.Shape))
		if err != nil {
			return nil, err
		}
		for _, ax := range norm {
			if x.Shape[ax] != 1 {
				return nil, fmt.Errorf("cannot squeeze axis %d of size %d", ax, x.Shape[ax])
			}
			drop[ax] = true
		}
	} else {
		for i, d := range x.Shape {
			drop[i] = d == 1
		}
	}
	out := []int64{}
	for i, d := range x.Shape {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return []*ir.Tensor{reshaped(x, out)}, nil
}

// unsqueezeKernel: Unsqueeze(data, axes) inserts size-1 dims at the listed
// positions of the output.
func unsqueezeKernel(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x := in[0]
	axes, err := shapeValues(in[1], "axes")
	if err != nil {
		return nil, err
	}
	r := len(x.Shape) + len(axes)
	norm, err := ref.NormAxes(axes, r)
	if err != nil {
		return nil, err
	}
	ins := make([]bool, r)
	for _, ax := range norm {
		ins[ax] = true
	}
	out := make([]int64, r)
	k := 0
	for i := range out {
		if ins[i] {
			out[i] = 1
		} else {
			out[i] = x.Shape[k]
			k++
		}
	}
	return []*ir.Tensor{reshaped(x, out)}, nil
}

// shapeKernel: Shape(data) as a 1-D i64 tensor, restricted to the dims
// [start, end) (negative values count from the back; both are clamped).
func shapeKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	dims := in[0].Shape
	r := int64(len(dims))
	clamp := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return min(max(v, 0), r)
	}
	start := clamp(n.AttrInt("start", 0))
	end := clamp(n.AttrInt("end", r))
	if end < start {
		end = start
	}
	return []*ir.Tensor{ir.FromInt64([]int64{end - start}, dims[start:end])}, nil
}

// sizeKernel: Size(data), the element count as an i64 scalar.
func sizeKernel(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	return []*ir.Tensor{ir.FromInt64(nil, []int64{int64(in[0].Len())})}, nil
}
