package control

import (
	"fmt"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// truth reads a condition tensor: a bool tensor holding exactly one element.
func truth(t *ir.Tensor, what string) (bool, error) {
	if t == nil {
		return false, fmt.Errorf("%s is absent", what)
	}
	if t.DType != ir.Bool {
		return false, fmt.Errorf("%s is %v, want bool", what, t.DType)
	}
	if t.Len() != 1 {
		return false, fmt.Errorf("%s has shape %v, want a single element", what, t.Shape)
	}
	return t.Bool(0), nil
}

// boolScalar returns a fresh rank-0 bool tensor.
func boolScalar(b bool) *ir.Tensor {
	v := 0.0
	if b {
		v = 1
	}
	return ref.Scalar(ir.Bool, v)
}

// cloneAll deep-copies tensors: a body may hand back its own inputs or
// outer-scope values, and a kernel must return tensors it owns.
func cloneAll(ts []*ir.Tensor) []*ir.Tensor {
	out := make([]*ir.Tensor, len(ts))
	for i, t := range ts {
		out[i] = t.Clone()
	}
	return out
}

// stack joins equally shaped slices into one tensor with a new axis of
// length len(slices) inserted at position axis (0 <= axis <= rank). Slice t
// lands at position t along the new axis, or len-1-t when reverse is set.
// The slices are copied, never aliased.
func stack(parts []*ir.Tensor, axis int, reverse bool) (*ir.Tensor, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("stack: no parts")
	}
	first := parts[0]
	if axis < 0 || axis > len(first.Shape) {
		return nil, fmt.Errorf("stack axis %d out of range for rank %d", axis, len(first.Shape))
	}
	for i, s := range parts {
		if s.DType != first.DType || !slices.Equal(s.Shape, first.Shape) {
			return nil, fmt.Errorf("iteration %d produced %v, iteration 0 produced %v", i, s, first)
		}
	}
	n := int64(len(parts))
	shape := make([]int64, 0, len(first.Shape)+1)
	shape = append(shape, first.Shape[:axis]...)
	shape = append(shape, n)
	shape = append(shape, first.Shape[axis:]...)
	out := ir.NewTensor(first.DType, shape)
	outer := ir.NumElements(first.Shape[:axis])
	inner := ir.NumElements(first.Shape[axis:]) * int64(first.DType.Size())
	for t, s := range parts {
		p := int64(t)
		if reverse {
			p = n - 1 - p
		}
		for o := int64(0); o < outer; o++ {
			copy(out.Data[(o*n+p)*inner:(o*n+p+1)*inner], s.Data[o*inner:(o+1)*inner])
		}
	}
	return out, nil
}

// sliceAt returns a fresh copy of x at position p along axis, with that
// axis removed.
func sliceAt(x *ir.Tensor, axis int, p int64) *ir.Tensor {
	shape := make([]int64, 0, len(x.Shape)-1)
	shape = append(shape, x.Shape[:axis]...)
	shape = append(shape, x.Shape[axis+1:]...)
	out := ir.NewTensor(x.DType, shape)
	n := x.Shape[axis]
	outer := ir.NumElements(x.Shape[:axis])
	inner := ir.NumElements(x.Shape[axis+1:]) * int64(x.DType.Size())
	for o := int64(0); o < outer; o++ {
		copy(out.Data[o*inner:(o+1)*inner], x.Data[(o*n+p)*inner:(o*n+p+1)*inner])
	}
	return out
}

// emptyStack builds the stacked form of zero iterations of body output v:
// a tensor with a 0-length axis inserted at axis. It needs v's declared
// dtype and static shape, since no iteration ran to show them.
func emptyStack(v *ir.Value, axis int) (*ir.Tensor, error) {
	if v == nil || !v.DType.Valid() || !v.Shape.Static() {
		return nil, ref.Unsupported("zero iterations: the body's scan output %v has no static declared type", v)
	}
	dims := v.Shape.Ints()
	if axis < 0 || axis > len(dims) {
		return nil, fmt.Errorf("scan output axis %d out of range for rank %d", axis, len(dims))
	}
	shape := append(append(append([]int64{}, dims[:axis]...), 0), dims[axis:]...)
	return ir.NewTensor(v.DType, shape), nil
}
