package layout

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Ops that read elements at computed positions: Gather, GatherElements,
// GatherND, Compress and NonZero.
func init() {
	ref.Register("Gather", gatherKernel)
	ref.Register("GatherElements", gatherElementsKernel)
	ref.Register("GatherND", gatherNDKernel)
	ref.Register("Compress", compressKernel)
	ref.Register("NonZero", nonZeroKernel)
}

// gatherKernel: Gather(data, indices) along attribute axis. The output
// shape is data[:axis] + indices + data[axis+1:].
func gatherKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x := in[0]
	if len(x.Shape) == 0 {
		return nil, fmt.Errorf("cannot gather from a scalar")
	}
	axis, err := ref.NormAxis(n.AttrInt("axis", 0), len(x.Shape))
	if err != nil {
		return nil, err
	}
	idx, err := intValues(in[1], "indices")
	if err != nil {
		return nil, err
	}
	outer, dim, inner := splitAt(x.Shape, axis)
	for i, v := range idx {
		if idx[i], err = normIndex(v, int64(dim)); err != nil {
			return nil, err
		}
	}
	outShape := append(append(append([]int64{}, x.Shape[:axis]...), in[1].Shape...), x.Shape[axis+1:]...)
	out := ir.NewTensor(x.DType, outShape)
	k := len(idx)
	for o := 0; o < outer; o++ {
		for j, v := range idx {
			copyElems(out, (o*k+j)*inner, x, (o*dim+int(v))*inner, inner)
		}
	}
	return []*ir.Tensor{out}, nil
}

// gatherElementsKernel: GatherElements(data, indices) along attribute axis:
// out[p] = data[p with p[axis] replaced by indices[p]].
func gatherElementsKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x, it := in[0], in[1]
	axis, err := elementsAxis(n, x, it, "indices")
	if err != nil {
		return nil, err
	}
	idx, err := intValues(it, "indices")
	if err != nil {
		return nil, err
	}
	out := ir.NewTensor(x.DType, it.Shape)
	st := ref.Strides(x.Shape)
	pos := make([]int64, len(it.Shape))
	for i, v := range idx {
		unravel(int64(i), it.Shape, pos)
		if pos[axis], err = normIndex(v, x.Shape[axis]); err != nil {
			return nil, err
		}
		copyElem(out, i, x, int(dot(pos, st)))
	}
	return []*ir.Tensor{out}, nil
}

// elementsAxis checks the shapes of GatherElements/ScatterElements: the
// index tensor has data's rank and no larger dims off the axis.
func elementsAxis(n *ir.Node, x, idx *ir.Tensor, what string) (int, error) {
	r := len(x.Shape)
	if r == 0 {
		return 0, fmt.Errorf("data must have rank >= 1")
	}
	axis, err := ref.NormAxis(n.AttrInt("axis", 0), r)
	if err != nil {
		return 0, err
	}
	if len(idx.Shape) != r {
		return 0, fmt.Errorf("%s has rank %d, data %d", what, len(idx.Shape), r)
	}
	for d := range idx.Shape {
		if d != axis && idx.Shape[d] > x.Shape[d] {
			return 0, fmt.Errorf("%s shape %v exceeds data shape %v on axis %d", what, idx.Shape, x.Shape, d)
		}
	}
	return axis, nil
}

// ndLayout describes GatherND/ScatterND addressing: indices [..., k] select
// slices of data at the first b (batch) + k dims.
type ndLayout struct {
	batch   int     // batch_dims
	k       int     // length of an index tuple
	tuples  int     // number of index tuples (prod(indices.Shape[:-1]))
	perB    int     // index tuples per batch entry
	slice   int     // elements per selected slice (prod(data.Shape[b+k:]))
	bStride int     // data elements per batch entry
	strides []int64 // data strides
}

// newNDLayout validates the shapes of data and indices for batch dims b.
func newNDLayout(x, indices *ir.Tensor, b int) (*ndLayout, error) {
	r, q := len(x.Shape), len(indices.Shape)
	if q < 1 {
		return nil, fmt.Errorf("indices must have rank >= 1")
	}
	if b < 0 || b >= q || b >= r {
		return nil, fmt.Errorf("batch_dims %d invalid for data rank %d and indices rank %d", b, r, q)
	}
	for d := 0; d < b; d++ {
		if x.Shape[d] != indices.Shape[d] {
			return nil, fmt.Errorf("batch dim %d: data %v and indices %v differ", d, x.Shape, indices.Shape)
		}
	}
	k := int(indices.Shape[q-1])
	if k < 1 || k > r-b {
		return nil, fmt.Errorf("index tuples of length %d for data rank %d with %d batch dims", k, r, b)
	}
	l := &ndLayout{
		batch:   b,
		k:       k,
		tuples:  int(prod(indices.Shape[:q-1])),
		slice:   int(prod(x.Shape[b+k:])),
		bStride: int(prod(x.Shape[b:])),
		strides: ref.Strides(x.Shape),
	}
	if nb := int(prod(indices.Shape[:b])); nb > 0 {
		l.perB = l.tuples / nb
	}
	return l, nil
}

// offset returns the data element offset of the slice addressed by tuple t.
func (l *ndLayout) offset(x *ir.Tensor, idx []int64, t int) (int, error) {
	off := 0
	if l.perB > 0 {
		off = t / l.perB * l.bStride
	}
	for j := 0; j < l.k; j++ {
		d := l.batch + j
		v, err := normIndex(idx[t*l.k+j], x.Shape[d])
		if err != nil {
			return 0, err
		}
		off += int(v * l.strides[d])
	}
	return off, nil
}

// gatherNDKernel: GatherND(data, indices) with attribute batch_dims. The
// output shape is indices.Shape[:-1] + data.Shape[batch_dims+k:].
func gatherNDKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x, it := in[0], in[1]
	l, err := newNDLayout(x, it, int(n.AttrInt("batch_dims", 0)))
	if err != nil {
		return nil, err
	}
	idx, err := intValues(it, "indices")
	if err != nil {
		return nil, err
	}
	outShape := append(append([]int64{}, it.Shape[:len(it.Shape)-1]...), x.Shape[l.batch+l.k:]...)
	out := ir.NewTensor(x.DType, outShape)
	for t := 0; t < l.tuples; t++ {
		off, err := l.offset(x, idx, t)
		if err != nil {
			return nil, err
		}
		copyElems(out, t*l.slice, x, off, l.slice)
	}
	return []*ir.Tensor{out}, nil
}

// compressKernel: Compress(input, condition) keeps the slices along axis
// (or the elements of the flattened input when axis is absent) whose
// condition entry is true. condition may be shorter than the axis.
func compressKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x, cond := in[0], in[1]
	if len(cond.Shape) != 1 {
		return nil, fmt.Errorf("condition must be 1-D, got %v", cond.Shape)
	}
	src := x
	axis := 0
	if n.Has("axis") {
		if len(x.Shape) == 0 {
			return nil, fmt.Errorf("cannot compress a scalar along an axis")
		}
		var err error
		if axis, err = ref.NormAxis(n.AttrInt("axis", 0), len(x.Shape)); err != nil {
			return nil, err
		}
	} else {
		src = view(x, []int64{int64(x.Len())})
	}
	outer, dim, inner := splitAt(src.Shape, axis)
	var keep []int
	for i := 0; i < cond.Len(); i++ {
		if cond.Bool(i) {
			if i >= dim {
				return nil, fmt.Errorf("condition selects index %d beyond dim %d", i, dim)
			}
			keep = append(keep, i)
		}
	}
	outShape := append([]int64{}, src.Shape...)
	outShape[axis] = int64(len(keep))
	out := ir.NewTensor(x.DType, outShape)
	for o := 0; o < outer; o++ {
		for j, k := range keep {
			copyElems(out, (o*len(keep)+j)*inner, src, (o*dim+k)*inner, inner)
		}
	}
	return []*ir.Tensor{out}, nil
}

// nonZeroKernel: NonZero(X), the indices of the non-zero elements as an i64
// tensor [rank, n] in row-major order. Like numpy, a scalar counts as 1-D.
func nonZeroKernel(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	shape := x.Shape
	if len(shape) == 0 {
		shape = []int64{1}
	}
	r := len(shape)
	var hits []int
	for i := 0; i < x.Len(); i++ {
		if x.Bool(i) {
			hits = append(hits, i)
		}
	}
	out := ir.NewTensor(ir.Int64, []int64{int64(r), int64(len(hits))})
	pos := make([]int64, r)
	for j, h := range hits {
		unravel(int64(h), shape, pos)
		for d, v := range pos {
			out.SetInt64(d*len(hits)+j, v)
		}
	}
	return []*ir.Tensor{out}, nil
}
