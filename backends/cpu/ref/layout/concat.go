package layout

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Ops that join, cut or repeat tensors along axes.
func init() {
	ref.Register("Concat", concatKernel)
	ref.Register("Split", splitKernel)
	ref.Register("Tile", tileKernel)
	ref.Register("Expand", expandKernel)
}

// concatKernel: Concat(inputs...) along attribute axis. All inputs share
// dtype and rank and agree on every dim but axis.
func concatKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("concat needs at least one input")
	}
	if err := need(in, len(in)); err != nil {
		return nil, err
	}
	first := in[0]
	r := len(first.Shape)
	if r == 0 {
		return nil, fmt.Errorf("cannot concatenate scalars")
	}
	axis, err := ref.NormAxis(n.AttrInt("axis", 0), r)
	if err != nil {
		return nil, err
	}
	if err := ref.SameDType(first.DType, in...); err != nil {
		return nil, err
	}
	outShape := append([]int64{}, first.Shape...)
	outShape[axis] = 0
	for i, t := range in {
		if len(t.Shape) != r {
			return nil, fmt.Errorf("input %d has rank %d, want %d", i, len(t.Shape), r)
		}
		for d := range t.Shape {
			if d != axis && t.Shape[d] != first.Shape[d] {
				return nil, fmt.Errorf("input %d has shape %v, incompatible with %v on axis %d", i, t.Shape, first.Shape, axis)
			}
		}
		outShape[axis] += t.Shape[axis]
	}
	out := ir.NewTensor(first.DType, outShape)
	outer, total, inner := splitAt(outShape, axis)
	pos := 0 // start of the current input along axis
	for _, t := range in {
		dim := int(t.Shape[axis])
		for o := 0; o < outer; o++ {
			copyElems(out, (o*total+pos)*inner, t, o*dim*inner, dim*inner)
		}
		pos += dim
	}
	return []*ir.Tensor{out}, nil
}

// splitSizes decides the chunk lengths of Split: the split input when given,
// otherwise num_outputs (or the number of outputs) chunks of ceil(dim/k)
// with a smaller last chunk.
func splitSizes(n *ir.Node, in []*ir.Tensor, dim int64) ([]int64, error) {
	k := int64(len(n.Outputs))
	if s := opt(in, 1); s != nil {
		sizes, err := shapeValues(s, "split")
		if err != nil {
			return nil, err
		}
		if int64(len(sizes)) != k {
			return nil, fmt.Errorf("split has %d entries for %d outputs", len(sizes), k)
		}
		sum := int64(0)
		for _, v := range sizes {
			if v < 0 || v > dim {
				return nil, fmt.Errorf("negative split size in %v", sizes)
			}
			sum += v
		}
		if sum != dim {
			return nil, fmt.Errorf("split %v sums to %d, want dim %d", sizes, sum, dim)
		}
		return sizes, nil
	}
	if n.Has("num_outputs") {
		if no := n.AttrInt("num_outputs", 0); no != k {
			return nil, fmt.Errorf("num_outputs is %d but the node has %d outputs", no, k)
		}
	}
	if k <= 0 {
		return nil, fmt.Errorf("split needs at least one output")
	}
	chunk := (dim + k - 1) / k
	sizes := make([]int64, k)
	for i := range sizes {
		sizes[i] = chunk
	}
	// The last chunk takes what is left; ceil-sized chunks may leave too
	// little for it (5 into 4 outputs), or exactly nothing (6 into 4: 2,2,2,0).
	sizes[k-1] = dim - chunk*(k-1)
	if sizes[k-1] < 0 {
		return nil, fmt.Errorf("cannot split dim %d into %d outputs of size %d", dim, k, chunk)
	}
	return sizes, nil
}

// splitKernel: Split(input, split?) along attribute axis into len(n.Outputs)
// pieces.
func splitKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	if len(x.Shape) == 0 {
		return nil, fmt.Errorf("cannot split a scalar")
	}
	axis, err := ref.NormAxis(n.AttrInt("axis", 0), len(x.Shape))
	if err != nil {
		return nil, err
	}
	sizes, err := splitSizes(n, in, x.Shape[axis])
	if err != nil {
		return nil, err
	}
	outer, total, inner := splitAt(x.Shape, axis)
	outs := make([]*ir.Tensor, len(sizes))
	pos := 0
	for i, sz := range sizes {
		shape := append([]int64{}, x.Shape...)
		shape[axis] = sz
		t := ir.NewTensor(x.DType, shape)
		dim := int(sz)
		for o := 0; o < outer; o++ {
			copyElems(t, o*dim*inner, x, (o*total+pos)*inner, dim*inner)
		}
		pos += dim
		outs[i] = t
	}
	return outs, nil
}

// tileKernel: Tile(input, repeats), out[i] = in[i mod dims] with
// out dims = in dims * repeats.
func tileKernel(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x := in[0]
	reps, err := shapeValues(in[1], "repeats")
	if err != nil {
		return nil, err
	}
	r := len(x.Shape)
	if len(reps) != r {
		return nil, fmt.Errorf("repeats has %d entries for rank %d", len(reps), r)
	}
	outShape := make([]int64, r)
	for i, rep := range reps {
		if rep < 0 || (rep > 0 && x.Shape[i] > maxElements/rep) {
			return nil, fmt.Errorf("invalid repeat %d for dim %d", rep, x.Shape[i])
		}
		outShape[i] = x.Shape[i] * rep
	}
	out, err := newOut(x.DType, outShape)
	if err != nil {
		return nil, err
	}
	st := ref.Strides(x.Shape)
	idx := make([]int64, r)
	for i := 0; i < out.Len(); i++ {
		unravel(int64(i), outShape, idx)
		src := int64(0)
		for d := range idx {
			src += (idx[d] % x.Shape[d]) * st[d]
		}
		copyElem(out, i, x, int(src))
	}
	return []*ir.Tensor{out}, nil
}

// expandKernel: Expand(input, shape), numpy broadcasting of the input
// against shape in both directions.
func expandKernel(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x := in[0]
	shape, err := shapeValues(in[1], "shape")
	if err != nil {
		return nil, err
	}
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dim in shape %v", shape)
		}
	}
	outShape, err := ref.BroadcastShapes(x.Shape, shape)
	if err != nil {
		return nil, err
	}
	out, err := newOut(x.DType, outShape)
	if err != nil {
		return nil, err
	}
	return []*ir.Tensor{broadcastTo(x, out)}, nil
}

// broadcastTo fills out (whose shape x broadcasts to) with x's elements.
func broadcastTo(x, out *ir.Tensor) *ir.Tensor {
	n := out.Len()
	if n == 0 {
		return out
	}
	it := ref.NewIndexer(out.Shape, ref.BroadcastStrides(x.Shape, out.Shape))
	for i := 0; i < n; i++ {
		copyElem(out, i, x, int(it.Offsets[0]))
		it.Next()
	}
	return out
}
