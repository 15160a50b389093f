package layout

import (
	"fmt"
	"sort"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Ops that order elements: TopK and Unique. Comparisons go through cmpElem
// (by dtype class; NaN sorts above every number and equals NaN).
func init() {
	ref.Register("TopK", topKKernel)
	ref.Register("Unique", uniqueKernel)
}

// topKKernel: TopK(X, K) along attribute axis (default -1): the K largest
// (largest=1, default) or smallest values and their i64 indices. Ties go to
// the lower index first. Results are always sorted, which also satisfies
// sorted=0 (whose order ONNX leaves open).
func topKKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x := in[0]
	if len(x.Shape) == 0 {
		return nil, fmt.Errorf("input must have rank >= 1")
	}
	if len(n.Outputs) > 2 {
		return nil, fmt.Errorf("TopK has 2 outputs, node declares %d", len(n.Outputs))
	}
	axis, err := ref.NormAxis(n.AttrInt("axis", -1), len(x.Shape))
	if err != nil {
		return nil, err
	}
	k, err := scalarInt(in[1], "K")
	if err != nil {
		return nil, err
	}
	outer, dim, inner := splitAt(x.Shape, axis)
	if k < 0 || k > int64(dim) {
		return nil, fmt.Errorf("K = %d out of range for axis of size %d", k, dim)
	}
	largest := n.AttrInt("largest", 1) != 0
	outShape := append([]int64{}, x.Shape...)
	outShape[axis] = k
	vals := ir.NewTensor(x.DType, outShape)
	idxs := ir.NewTensor(ir.Int64, outShape)
	order := make([]int, dim)
	kk := int(k)
	for o := 0; o < outer; o++ {
		for p := 0; p < inner; p++ {
			at := func(j int) int { return (o*dim+j)*inner + p }
			for j := range order {
				order[j] = j
			}
			sort.SliceStable(order, func(a, b int) bool {
				c := cmpElem(x, at(order[a]), x, at(order[b]))
				if largest {
					return c > 0
				}
				return c < 0
			})
			for j := 0; j < kk; j++ {
				dst := (o*kk+j)*inner + p
				copyElem(vals, dst, x, at(order[j]))
				idxs.SetInt64(dst, int64(order[j]))
			}
		}
	}
	return []*ir.Tensor{vals, idxs}[:len(n.Outputs)], nil
}

// uniqueKernel: Unique(X) with attributes sorted (default 1) and axis
// (optional: absent flattens X). Outputs, of which the node may declare a
// prefix: Y (the unique elements or slices along axis, ascending when
// sorted, else in order of first occurrence), indices (first occurrence of
// each in X), inverse_indices (for each element or slice of X, its position
// in Y) and counts.
func uniqueKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	src := view(x, []int64{int64(x.Len())})
	axis := 0
	if n.Has("axis") {
		if len(x.Shape) == 0 {
			return nil, fmt.Errorf("axis given for a scalar input")
		}
		var err error
		if axis, err = ref.NormAxis(n.AttrInt("axis", 0), len(x.Shape)); err != nil {
			return nil, err
		}
		src = x
	}
	outer, dim, inner := splitAt(src.Shape, axis)
	// cmpSlices orders the slices a and b along axis lexicographically.
	cmpSlices := func(a, b int) int {
		for o := 0; o < outer; o++ {
			for p := 0; p < inner; p++ {
				if c := cmpElem(src, (o*dim+a)*inner+p, src, (o*dim+b)*inner+p); c != 0 {
					return c
				}
			}
		}
		return 0
	}
	order := make([]int, dim)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return cmpSlices(order[a], order[b]) < 0 })
	// Groups of equal slices, each led by its first occurrence (stable sort).
	var firsts []int
	group := make([]int, dim) // slice -> group number in sorted order
	for j, s := range order {
		if j == 0 || cmpSlices(order[j-1], s) != 0 {
			firsts = append(firsts, s)
		}
		group[s] = len(firsts) - 1
	}
	// rank maps a group number to its position in Y.
	rank := make([]int, len(firsts))
	for g := range rank {
		rank[g] = g
	}
	if n.AttrInt("sorted", 1) == 0 {
		byFirst := make([]int, len(firsts))
		for g := range byFirst {
			byFirst[g] = g
		}
		sort.Slice(byFirst, func(a, b int) bool { return firsts[byFirst[a]] < firsts[byFirst[b]] })
		for pos, g := range byFirst {
			rank[g] = pos
		}
	}
	u := len(firsts)
	yShape := append([]int64{}, src.Shape...)
	yShape[axis] = int64(u)
	y := ir.NewTensor(x.DType, yShape)
	indices := ir.NewTensor(ir.Int64, []int64{int64(u)})
	inverse := ir.NewTensor(ir.Int64, []int64{int64(dim)})
	counts := ir.NewTensor(ir.Int64, []int64{int64(u)})
	for g, s := range firsts {
		pos := rank[g]
		for o := 0; o < outer; o++ {
			copyElems(y, (o*u+pos)*inner, src, (o*dim+s)*inner, inner)
		}
		indices.SetInt64(pos, int64(s))
	}
	for s := 0; s < dim; s++ {
		pos := rank[group[s]]
		inverse.SetInt64(s, int64(pos))
		counts.SetInt64(pos, counts.Int64(pos)+1)
	}
	all := []*ir.Tensor{y, indices, inverse, counts}
	if len(n.Outputs) > len(all) {
		return nil, fmt.Errorf("Unique has at most 4 outputs, node declares %d", len(n.Outputs))
	}
	return all[:len(n.Outputs)], nil
}
