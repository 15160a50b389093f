package passes

import (
	"fmt"
	"math"
	"slices"

	"github.com/weftrt/weft/ir"
)

// Ops that move data around without arithmetic: reshapes, transposes,
// concatenation, slicing, padding and broadcasting.

func init() {
	register(reshapeOp, "Reshape")
	register(transposeOp, "Transpose")
	register(concatOp, "Concat")
	register(splitOp, "Split")
	register(sliceOp, "Slice")
	register(squeezeOp, "Squeeze")
	register(unsqueezeOp, "Unsqueeze")
	register(flattenOp, "Flatten")
	register(expandOp, "Expand")
	register(tileOp, "Tile")
	register(padOp, "Pad")
}

// symbolCount tallies the unknown dims of a shape: a known product, a
// multiset of symbols, and the number of anonymous unknowns.
func symbolCount(ds []ir.Dim) (prod int64, syms map[string]int, anon int) {
	prod, syms = 1, map[string]int{}
	for _, d := range ds {
		switch {
		case d.Known():
			prod *= d.Size
		case d.Sym != "":
			syms[d.Sym]++
		default:
			anon++
		}
	}
	return
}

func reshapeOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	target, ok := s.values(n.In(1))
	if !ok || n.In(1).DType.IsFloat() {
		if v := n.In(1); v != nil && len(v.Shape) == 1 && v.Shape[0].Known() {
			return []typ{x.withShape(unknownShape(int(v.Shape[0].Size)))}, nil
		}
		return []typ{x.withShape(nil)}, nil
	}
	allowzero := n.AttrInt("allowzero", 0) != 0
	out := make(ir.Shape, len(target))
	infer := -1
	for i, e := range target {
		switch {
		case !e.known:
			out[i] = ir.Dim{Size: -1, Sym: e.sym}
		case e.i == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("Reshape target has more than one -1")
			}
			infer = i
			out[i] = unk
		case e.i == 0 && !allowzero:
			switch {
			case x.sh == nil:
				out[i] = unk
			case i >= len(x.sh):
				return nil, fmt.Errorf("Reshape target has 0 at index %d beyond input rank %d", i, len(x.sh))
			default:
				out[i] = x.sh[i]
			}
		case e.i < 0:
			return nil, fmt.Errorf("Reshape target has invalid dim %d", e.i)
		default:
			out[i] = dim(e.i)
		}
	}
	if x.sh == nil {
		return []typ{x.withShape(out)}, nil
	}
	pin, sin, ain := symbolCount(x.sh)
	rest := slices.Delete(slices.Clone(out), max(infer, 0), max(infer+1, 0))
	pout, sout, aout := symbolCount(rest)
	if ain > 0 || aout > 0 {
		return []typ{x.withShape(out)}, nil
	}
	for sym, c := range sout {
		if sin[sym] < c {
			return []typ{x.withShape(out)}, nil // not provably equal: leave unknown
		}
		sin[sym] -= c
	}
	var left []string
	for sym, c := range sin {
		for ; c > 0; c-- {
			left = append(left, sym)
		}
	}
	switch {
	case infer < 0 && len(left) == 0 && pin != pout:
		return nil, fmt.Errorf("Reshape of [%v] (%d elements) to [%v] (%d)", x.sh, pin, out, pout)
	case infer >= 0 && len(left) == 0 && pout != 0:
		if pin%pout != 0 {
			return nil, fmt.Errorf("Reshape of [%v] to [%v]: %d elements do not divide by %d", x.sh, out, pin, pout)
		}
		out[infer] = dim(pin / pout)
	case infer >= 0 && len(left) == 1 && pin == pout && pout != 0:
		out[infer] = ir.Sym(left[0])
	}
	return []typ{x.withShape(out)}, nil
}

func transposeOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	perm := n.AttrInts("perm", nil)
	if x.sh == nil {
		if perm != nil {
			return []typ{x.withShape(unknownShape(len(perm)))}, nil
		}
		return []typ{x}, nil
	}
	r := len(x.sh)
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != r {
		return nil, fmt.Errorf("Transpose perm %v for rank %d", perm, r)
	}
	p, err := normAxes(perm, r)
	if err != nil {
		return nil, fmt.Errorf("Transpose perm: %w", err)
	}
	out := make(ir.Shape, r)
	for i, a := range p {
		out[i] = x.sh[a]
	}
	return []typ{x.withShape(out)}, nil
}

func concatOp(_ *state, n *ir.Node) ([]typ, error) {
	var dt ir.DType
	var rank = -1
	for _, v := range n.Inputs {
		if v == nil {
			continue
		}
		if !dt.Valid() {
			dt = v.DType
		}
		if v.Shape != nil {
			if rank >= 0 && len(v.Shape) != rank {
				return nil, fmt.Errorf("Concat inputs of rank %d and %d", rank, len(v.Shape))
			}
			rank = len(v.Shape)
		}
	}
	if rank < 0 {
		return []typ{{dt, nil}}, nil
	}
	ax, err := normAxis(n.AttrInt("axis", 0), rank)
	if err != nil {
		return nil, err
	}
	out := unknownShape(rank)
	sum := dim(0)
	for k, v := range n.Inputs {
		if v == nil {
			continue
		}
		if v.Shape == nil {
			sum = unk
			continue
		}
		for i, d := range v.Shape {
			if i == ax {
				sum = dimAdd(sum, d)
				continue
			}
			if k == 0 {
				out[i] = d
			} else if out[i], err = unifyDim(out[i], d); err != nil {
				return nil, fmt.Errorf("Concat input %d, axis %d: %w", k, i, err)
			}
		}
	}
	out[ax] = sum
	return []typ{{dt, out}}, nil
}

func splitOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	k := len(n.Outputs)
	if k == 0 {
		return nil, nil
	}
	out := make([]typ, k)
	for i := range out {
		out[i] = x.withShape(nil)
	}
	if x.sh == nil {
		return out, nil
	}
	ax, err := normAxis(n.AttrInt("axis", 0), len(x.sh))
	if err != nil {
		return nil, err
	}
	d := x.sh[ax]
	sizes := make([]ir.Dim, k)
	for i := range sizes {
		sizes[i] = unk
	}
	if sp := n.In(1); sp != nil && shapeLen(sp) != 0 {
		if v, ok := s.ints(sp); ok {
			if len(v) != k {
				return nil, fmt.Errorf("Split into %d outputs with split %v", k, v)
			}
			sum := int64(0)
			for i, c := range v {
				if c < 0 {
					return nil, fmt.Errorf("Split has negative size in %v", v)
				}
				sizes[i] = dim(c)
				sum += c
			}
			if d.Known() && sum != d.Size {
				return nil, fmt.Errorf("Split sizes %v do not add up to dim %d", v, d.Size)
			}
		}
	} else if d.Known() {
		switch {
		case d.Size%int64(k) == 0:
			for i := range sizes {
				sizes[i] = dim(d.Size / int64(k))
			}
		case n.Has("num_outputs"):
			// opset 18: all chunks ceil(d/k), the last one smaller.
			c := ceilDiv(d.Size, int64(k))
			if c*int64(k-1) > d.Size {
				return nil, fmt.Errorf("Split of dim %d into %d outputs", d.Size, k)
			}
			for i := range sizes {
				sizes[i] = dim(c)
			}
			sizes[k-1] = dim(d.Size - c*int64(k-1))
		}
	}
	for i := range out {
		sh := x.sh.Clone()
		sh[ax] = sizes[i]
		out[i] = x.withShape(sh)
	}
	return out, nil
}

// sliceRange is one axis of a Slice, after clamping.
type sliceRange struct{ start, end, step, count int64 }

// sliceParams reads the known starts, ends, axes (normalized) and steps of
// a Slice node.
func (s *state) sliceParams(n *ir.Node, rank int) (starts, ends []int64, axes []int, steps []int64, ok bool, err error) {
	starts, ok1 := s.ints(n.In(1))
	ends, ok2 := s.ints(n.In(2))
	if !ok1 || !ok2 {
		return nil, nil, nil, nil, false, nil
	}
	if len(starts) != len(ends) {
		return nil, nil, nil, nil, false, fmt.Errorf("Slice has %d starts and %d ends", len(starts), len(ends))
	}
	ax := make([]int64, len(starts))
	for i := range ax {
		ax[i] = int64(i)
	}
	if v := n.In(3); v != nil {
		if ax, ok = s.ints(v); !ok {
			return nil, nil, nil, nil, false, nil
		}
	}
	steps = make([]int64, len(starts))
	for i := range steps {
		steps[i] = 1
	}
	if v := n.In(4); v != nil {
		if steps, ok = s.ints(v); !ok {
			return nil, nil, nil, nil, false, nil
		}
	}
	if len(ax) != len(starts) || len(steps) != len(starts) {
		return nil, nil, nil, nil, false, fmt.Errorf("Slice parameter lengths differ")
	}
	if axes, err = normAxes(ax, rank); err != nil {
		return nil, nil, nil, nil, false, fmt.Errorf("Slice axes: %w", err)
	}
	for _, st := range steps {
		if st == 0 {
			return nil, nil, nil, nil, false, fmt.Errorf("Slice step 0")
		}
	}
	return starts, ends, axes, steps, true, nil
}

// clampSlice applies ONNX Slice clamping to one axis of size d.
func clampSlice(start, end, step, d int64) sliceRange {
	if start < 0 {
		start += d
	}
	if end < 0 {
		end += d
	}
	var count int64
	if step > 0 {
		start, end = min(max(start, 0), d), min(max(end, 0), d)
		if end > start {
			count = (end - start + step - 1) / step
		}
	} else {
		start, end = min(max(start, 0), d-1), min(max(end, -1), d-1)
		if start > end {
			count = (start - end - step - 1) / -step
		}
	}
	return sliceRange{start, end, step, count}
}

// sliceRanges returns the clamped range of every axis of a static shape.
func (s *state) sliceRanges(n *ir.Node, sh ir.Shape) ([]sliceRange, bool) {
	starts, ends, axes, steps, ok, err := s.sliceParams(n, len(sh))
	if !ok || err != nil || !sh.Static() {
		return nil, false
	}
	r := make([]sliceRange, len(sh))
	for i, d := range sh {
		r[i] = sliceRange{0, d.Size, 1, d.Size}
	}
	for i, a := range axes {
		r[a] = clampSlice(starts[i], ends[i], steps[i], sh[a].Size)
	}
	return r, true
}

func sliceOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x}, nil
	}
	starts, ends, axes, steps, ok, err := s.sliceParams(n, len(x.sh))
	if err != nil {
		return nil, err
	}
	out := x.sh.Clone()
	if !ok {
		// Which axes are sliced is unknown unless axes is known.
		if v := n.In(3); v != nil {
			if ax, ok := s.ints(v); ok {
				if a, err := normAxes(ax, len(out)); err == nil {
					for _, i := range a {
						out[i] = unk
					}
					return []typ{x.withShape(out)}, nil
				}
			}
		}
		return []typ{x.withShape(unknownShape(len(out)))}, nil
	}
	for i, a := range axes {
		d := out[a]
		switch {
		case d.Known():
			out[a] = dim(clampSlice(starts[i], ends[i], steps[i], d.Size).count)
		case starts[i] == 0 && steps[i] == 1 && ends[i] >= math.MaxInt32,
			starts[i] == -1 && steps[i] == -1 && ends[i] <= math.MinInt32:
			// x[0:INT_MAX] and x[-1:INT_MIN:-1] of any size cover the whole axis.
		default:
			out[a] = unk
		}
	}
	return []typ{x.withShape(out)}, nil
}

func squeezeOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x}, nil
	}
	if a := n.In(1); a != nil {
		ax, ok := s.ints(a)
		if !ok {
			return []typ{x.withShape(nil)}, nil
		}
		if len(ax) == 0 {
			// Runtimes disagree on empty axes (all 1-dims, or none); only
			// a shape without 1-dims gives the same answer both ways.
			for _, d := range x.sh {
				if !d.Known() || d.Size == 1 {
					return []typ{x.withShape(nil)}, nil
				}
			}
			return []typ{x}, nil
		}
		axes, err := normAxes(ax, len(x.sh))
		if err != nil {
			return nil, fmt.Errorf("Squeeze axes: %w", err)
		}
		var out ir.Shape = ir.Shape{}
		for i, d := range x.sh {
			if slices.Contains(axes, i) {
				if d.Known() && d.Size != 1 {
					return nil, fmt.Errorf("Squeeze of axis %d of size %d", i, d.Size)
				}
				continue
			}
			out = append(out, d)
		}
		return []typ{x.withShape(out)}, nil
	}
	out := ir.Shape{}
	for _, d := range x.sh {
		if !d.Known() {
			return []typ{x.withShape(nil)}, nil // might or might not be 1
		}
		if d.Size != 1 {
			out = append(out, d)
		}
	}
	return []typ{x.withShape(out)}, nil
}

func unsqueezeOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	ax, ok := s.ints(n.In(1))
	if x.sh == nil || !ok {
		return []typ{x.withShape(nil)}, nil
	}
	r := len(x.sh) + len(ax)
	axes, err := normAxes(ax, r)
	if err != nil {
		return nil, fmt.Errorf("Unsqueeze axes: %w", err)
	}
	out := make(ir.Shape, 0, r)
	j := 0
	for i := 0; i < r; i++ {
		if slices.Contains(axes, i) {
			out = append(out, dim(1))
		} else {
			out = append(out, x.sh[j])
			j++
		}
	}
	return []typ{x.withShape(out)}, nil
}

func flattenOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x.withShape(unknownShape(2))}, nil
	}
	r := int64(len(x.sh))
	axis := n.AttrInt("axis", 1)
	if axis < -r || axis > r {
		return nil, fmt.Errorf("Flatten axis %d out of range for rank %d", axis, r)
	}
	if axis < 0 {
		axis += r
	}
	return []typ{x.withShape(ir.Shape{prodDims(x.sh[:axis]), prodDims(x.sh[axis:])})}, nil
}

// shapeLen returns the static length of a 1-D value, or -1.
func shapeLen(v *ir.Value) int {
	if v == nil || len(v.Shape) != 1 || !v.Shape[0].Known() {
		return -1
	}
	return int(v.Shape[0].Size)
}

func expandOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	target, ok := s.dimValues(n.In(1))
	if !ok {
		k := shapeLen(n.In(1))
		if k < 0 {
			return []typ{x.withShape(nil)}, nil
		}
		// Each target dim is 1 or matches: known dims of x > 1 survive.
		target = unknownShape(k)
	}
	sh, err := broadcastShapes(x.sh, target)
	if err != nil {
		return nil, fmt.Errorf("Expand: %w", err)
	}
	if sh == nil {
		return []typ{x.withShape(nil)}, nil
	}
	return []typ{x.withShape(sh)}, nil
}

func tileOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x}, nil
	}
	rep, ok := s.ints(n.In(1))
	if !ok {
		return []typ{x.withShape(unknownShape(len(x.sh)))}, nil
	}
	if len(rep) != len(x.sh) {
		return nil, fmt.Errorf("Tile repeats %v for rank %d", rep, len(x.sh))
	}
	out := make(ir.Shape, len(x.sh))
	for i, d := range x.sh {
		if rep[i] < 0 {
			return nil, fmt.Errorf("Tile repeats %v has a negative entry", rep)
		}
		out[i] = dimMul(d, dim(rep[i]))
	}
	return []typ{x.withShape(out)}, nil
}

func padOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x}, nil
	}
	r := len(x.sh)
	pads, ok := s.ints(n.In(1))
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if a := n.In(3); a != nil {
		ax, ok2 := s.ints(a)
		if !ok2 {
			return []typ{x.withShape(unknownShape(r))}, nil
		}
		var err error
		if axes, err = normAxes(ax, r); err != nil {
			return nil, fmt.Errorf("Pad axes: %w", err)
		}
	}
	if !ok {
		out := x.sh.Clone()
		for _, a := range axes {
			out[a] = unk
		}
		return []typ{x.withShape(out)}, nil
	}
	if len(pads) != 2*len(axes) {
		return nil, fmt.Errorf("Pad has %d pads for %d axes", len(pads), len(axes))
	}
	out := x.sh.Clone()
	for i, a := range axes {
		p := pads[i] + pads[i+len(axes)]
		switch {
		case out[a].Known():
			if out[a].Size+p < 0 {
				return nil, fmt.Errorf("Pad makes axis %d negative", a)
			}
			out[a] = dim(out[a].Size + p)
		case p != 0:
			out[a] = unk
		}
	}
	return []typ{x.withShape(out)}, nil
}
