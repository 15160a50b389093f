package vulkan

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

// This file plans the ops that move data without arithmetic: Reshape and
// its kin (whole-tensor copies), Concat, Slice and Gather, all on the
// strided-copy and gather shaders. Their shape, axes and slice bounds must
// be constants.

// dataValues returns the values of n that its shaders read or write, the
// ones checkTypes holds to f32. The other inputs are integer operands the
// planner reads as constants (shapes, axes, slice bounds) or, for Gather,
// indices the shader reads as integers; those are checked here.
func dataValues(n *ir.Node) ([]*ir.Value, error) {
	all := append(append([]*ir.Value{}, n.Inputs...), n.Outputs...)
	data := func(vs ...*ir.Value) []*ir.Value { return append(vs, n.Outputs...) }
	consts := func(from int) error {
		for i := from; i < len(n.Inputs); i++ {
			if v := n.Inputs[i]; v != nil && !v.IsConst() {
				return unsupported(n, "input %d (%v) is not a constant", i, v)
			}
		}
		return nil
	}
	switch n.Op {
	case "Reshape", "Squeeze", "Unsqueeze", "Slice", "ReduceMean", "ReduceSum":
		if len(n.Inputs) == 0 {
			return all, nil
		}
		return data(n.Inputs[0]), consts(1)
	case "Gather":
		if len(n.Inputs) != 2 || n.Inputs[1] == nil {
			return all, nil
		}
		if dt := n.Inputs[1].DType; dt != ir.Int64 && dt != ir.Int32 {
			return nil, unsupported(n, "indices of dtype %v", dt)
		}
		return data(n.Inputs[0]), nil
	case "QMatMul": // W is block-quantized, checked by planQMatMul
		if len(n.Inputs) < 2 {
			return all, nil
		}
		return data(n.Inputs[0]), nil
	case "RotaryEmbedding": // position_ids are i64, checked by planRope
		if len(n.Inputs) != 4 || n.Inputs[3] == nil {
			return nil, unsupported(n, "position_ids absent")
		}
		return data(n.Inputs[0], n.Inputs[1], n.Inputs[2]), nil
	}
	return all, nil
}

// constInts reads input i of n, a constant integer tensor; ok is false
// when the input is absent.
func constInts(n *ir.Node, i int) (vals []int64, ok bool, err error) {
	v := n.In(i)
	if v == nil {
		return nil, false, nil
	}
	if !v.IsConst() || v.Const == nil {
		return nil, false, unsupported(n, "input %d is not a constant", i)
	}
	t := v.Const
	if t.DType != ir.Int64 && t.DType != ir.Int32 {
		return nil, false, fmt.Errorf("vulkan: %v: input %d is %v, want an integer tensor", n, i, t.DType)
	}
	vals = make([]int64, t.Len())
	for k := range vals {
		vals[k] = t.Int64(k)
	}
	return vals, true, nil
}

// stridedCopy is one dispatch of the strided shader: for every coordinate c
// of shape, y[dy + Σ c·sy] = x[dx + Σ c·sx].
func stridedCopy(n *ir.Node, lim limits, x, y *ir.Value, shape, sx, sy []int64, dx, dy int64) (dispatch, error) {
	if len(shape) > elemRank {
		return dispatch{}, unsupported(n, "rank %d > %d", len(shape), elemRank)
	}
	total := uint64(ir.NumElements(shape))
	g, err := groups1D(n, (total+elemGroup-1)/elemGroup, lim)
	if err != nil {
		return dispatch{}, err
	}
	if dx < math.MinInt32 || dx > math.MaxInt32 {
		return dispatch{}, unsupported(n, "offset %d does not fit the shader's 32-bit index", dx)
	}
	push := []uint32{uint32(total), uint32(int32(dx)), uint32(dy)}
	push = append(push, alignRight(shape, elemRank, 1)...)
	push = append(push, alignRight(sx, elemRank, 0)...)
	push = append(push, alignRight(sy, elemRank, 0)...)
	return dispatch{shader: "strided", args: []*ir.Value{x, y}, push: push, groups: g}, nil
}

// planCopy covers the ops whose output holds the input's elements in the
// same order: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transfer.
func planCopy(n *ir.Node, lim limits) ([]dispatch, error) {
	maxIn := 1
	if n.Op == "Reshape" || n.Op == "Squeeze" || n.Op == "Unsqueeze" {
		maxIn = 2
	}
	if err := needIO(n, 1, maxIn); err != nil {
		return nil, err
	}
	x, y := n.Inputs[0], n.Outputs[0]
	ne := x.Shape.NumElements()
	if y.Shape.NumElements() != ne {
		return nil, fmt.Errorf("vulkan: %v: %v elements in, %v out", n, ne, y.Shape.NumElements())
	}
	d, err := stridedCopy(n, lim, x, y, []int64{ne}, []int64{1}, []int64{1}, 0, 0)
	if err != nil {
		return nil, err
	}
	return []dispatch{d}, nil
}

func planConcat(n *ir.Node, lim limits) ([]dispatch, error) {
	if len(n.Inputs) == 0 || len(n.Outputs) != 1 {
		return nil, unsupported(n, "%d inputs and %d outputs", len(n.Inputs), len(n.Outputs))
	}
	out := n.Outputs[0].Shape.Ints()
	axis, err := normAxis(n, n.AttrInt("axis", 0), len(out), false)
	if err != nil {
		return nil, err
	}
	cs := contiguousStrides(out)
	var ds []dispatch
	off := int64(0)
	for i, x := range n.Inputs {
		if x == nil {
			return nil, unsupported(n, "input %d is absent", i)
		}
		in := x.Shape.Ints()
		if len(in) != len(out) {
			return nil, fmt.Errorf("vulkan: %v: input %d has rank %d, the output %d", n, i, len(in), len(out))
		}
		d, err := stridedCopy(n, lim, x, n.Outputs[0], in, contiguousStrides(in), cs, 0, off*cs[axis])
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
		off += in[axis]
	}
	if off != out[axis] {
		return nil, fmt.Errorf("vulkan: %v: inputs add up to %d along axis %d, the output has %d", n, off, axis, out[axis])
	}
	return ds, nil
}

func planSlice(n *ir.Node, lim limits) ([]dispatch, error) {
	if err := needIO(n, 3, 5); err != nil {
		return nil, err
	}
	in, out := n.Inputs[0].Shape.Ints(), n.Outputs[0].Shape.Ints()
	r := len(in)
	if len(out) != r {
		return nil, fmt.Errorf("vulkan: %v: input rank %d, output rank %d", n, r, len(out))
	}
	starts, _, err := constInts(n, 1)
	if err != nil {
		return nil, err
	}
	ends, _, err := constInts(n, 2)
	if err != nil {
		return nil, err
	}
	axes, hasAxes, err := constInts(n, 3)
	if err != nil {
		return nil, err
	}
	steps, hasSteps, err := constInts(n, 4)
	if err != nil {
		return nil, err
	}
	if !hasAxes {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	if !hasSteps {
		for range starts {
			steps = append(steps, 1)
		}
	}
	if len(ends) != len(starts) || len(axes) != len(starts) || len(steps) != len(starts) {
		return nil, fmt.Errorf("vulkan: %v: starts, ends, axes and steps differ in length", n)
	}
	start, step := make([]int64, r), make([]int64, r)
	for d := range step {
		step[d] = 1
	}
	seen := make([]bool, r)
	for k, a := range axes {
		ax, err := normAxis(n, a, r, false)
		if err != nil {
			return nil, err
		}
		if seen[ax] {
			return nil, fmt.Errorf("vulkan: %v: axis %d repeats", n, ax)
		}
		seen[ax] = true
		dim, s, e, st := in[ax], starts[k], ends[k], steps[k]
		if st == 0 {
			return nil, fmt.Errorf("vulkan: %v: step 0", n)
		}
		clamp := func(v, lo, hi int64) int64 { return min(max(v, lo), hi) }
		if s < 0 {
			s += dim
		}
		if e < 0 {
			e += dim
		}
		var count int64
		if st > 0 {
			s, e = clamp(s, 0, dim), clamp(e, 0, dim)
			count = max(0, (e-s+st-1)/st)
		} else {
			s, e = clamp(s, 0, dim-1), clamp(e, -1, dim-1)
			count = max(0, (s-e-st-1)/(-st))
		}
		if count != out[ax] {
			return nil, fmt.Errorf("vulkan: %v: axis %d slices %d elements, the output has %d", n, ax, count, out[ax])
		}
		start[ax], step[ax] = s, st
	}
	cs := contiguousStrides(in)
	sx := make([]int64, r)
	dx := int64(0)
	for d := range sx {
		sx[d] = cs[d] * step[d]
		dx += start[d] * cs[d]
	}
	d, err := stridedCopy(n, lim, n.Inputs[0], n.Outputs[0], out, sx, contiguousStrides(out), dx, 0)
	if err != nil {
		return nil, err
	}
	return []dispatch{d}, nil
}

// planGather covers Gather along axis 0 (embedding lookups): Y[i..., :] =
// T[idx[i...], :].
func planGather(n *ir.Node, lim limits) ([]dispatch, error) {
	if err := needIO(n, 2, 2); err != nil {
		return nil, err
	}
	t, idx := n.Inputs[0], n.Inputs[1]
	ts := t.Shape.Ints()
	if len(ts) == 0 {
		return nil, fmt.Errorf("vulkan: %v: a scalar table", n)
	}
	if a, err := normAxis(n, n.AttrInt("axis", 0), len(ts), false); err != nil {
		return nil, err
	} else if a != 0 {
		return nil, unsupported(n, "axis %d (only axis 0)", a)
	}
	if !idx.Shape.Static() {
		return nil, unsupported(n, "indices of dynamic shape")
	}
	rows, cols := ts[0], ir.NumElements(ts[1:])
	ni := idx.Shape.NumElements()
	if ni == 0 {
		return nil, unsupported(n, "no indices")
	}
	if rows > math.MaxInt32 || ni > math.MaxUint32/2 {
		return nil, unsupported(n, "a table of %d rows or %d indices is too large", rows, ni)
	}
	if n.Outputs[0].Shape.NumElements() != ni*cols {
		return nil, fmt.Errorf("vulkan: %v: output %v is not %d indices × %d", n, n.Outputs[0].Shape, ni, cols)
	}
	total := uint64(ni * cols)
	g, err := groups1D(n, (total+elemGroup-1)/elemGroup, lim)
	if err != nil {
		return nil, err
	}
	wide := uint32(0)
	if idx.DType == ir.Int64 {
		wide = 1
	}
	if idx.IsConst() && idx.Const != nil {
		if err := checkIndices(n, idx.Const, rows); err != nil {
			return nil, err
		}
	}
	push := []uint32{uint32(total), uint32(rows), uint32(cols), wide}
	return []dispatch{{shader: "gather", args: []*ir.Value{t, idx, n.Outputs[0]}, push: push, groups: g, index: idx, bound: rows}}, nil
}

// checkIndices reports an index outside [-bound, bound).
func checkIndices(n *ir.Node, t *ir.Tensor, bound int64) error {
	for k := 0; k < t.Len(); k++ {
		if v := t.Int64(k); v < -bound || v >= bound {
			return fmt.Errorf("vulkan: %v: index %d at position %d is out of range [%d, %d)", n, v, k, -bound, bound)
		}
	}
	return nil
}

// planFused plans the body of a Fused node (a chain of elementwise ops) one
// body node at a time: body inputs are the node's inputs, body outputs its
// outputs, body intermediates live in the partition's arena and body
// constants are uploaded with the partition's.
func planFused(n *ir.Node, q Quirks, lim limits) ([]dispatch, error) {
	body := n.AttrGraph("body")
	if body == nil {
		return nil, fmt.Errorf("vulkan: %v: no body graph", n)
	}
	if len(body.Inputs) != len(n.Inputs) || len(body.Outputs) != len(n.Outputs) {
		return nil, fmt.Errorf("vulkan: %v: body has %d inputs and %d outputs, the node %d and %d",
			n, len(body.Inputs), len(body.Outputs), len(n.Inputs), len(n.Outputs))
	}
	if len(body.OuterRefs()) > 0 {
		return nil, unsupported(n, "a body that reads outer values")
	}
	sub := map[*ir.Value]*ir.Value{}
	for i, v := range body.Inputs {
		if n.Inputs[i] == nil {
			return nil, unsupported(n, "input %d is absent", i)
		}
		sub[v] = n.Inputs[i]
	}
	for i, v := range body.Outputs {
		if v.Producer == nil || v.Graph != body || sub[v] != nil {
			return nil, unsupported(n, "body output %d is not computed by a body node, or repeats", i)
		}
		if v.Shape.NumElements() != n.Outputs[i].Shape.NumElements() || v.DType != n.Outputs[i].DType {
			return nil, fmt.Errorf("vulkan: %v: body output %d is %v[%v], the node's %v[%v]", n, i, v.DType, v.Shape, n.Outputs[i].DType, n.Outputs[i].Shape)
		}
		sub[v] = n.Outputs[i]
	}
	var ds []dispatch
	for _, bn := range body.Nodes {
		bds, err := planNode(bn, q, lim)
		if err != nil {
			return nil, fmt.Errorf("vulkan: Fused body node %v: %w", bn, err)
		}
		for _, d := range bds {
			args := make([]*ir.Value, len(d.args))
			for i, v := range d.args {
				args[i] = v
				if s, ok := sub[v]; ok {
					args[i] = s
				}
			}
			d.args = args
			ds = append(ds, d)
		}
	}
	return ds, nil
}
