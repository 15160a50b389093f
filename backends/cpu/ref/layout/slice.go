package layout

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Ops that read a strided window of their input: Slice and ReverseSequence.
func init() {
	ref.Register("Slice", sliceKernel)
	ref.Register("ReverseSequence", reverseSequenceKernel)
}

// sliceRange normalizes one axis of a Slice: it returns the first source
// index and the output length for dim d, start, end and step (step != 0).
// Negative start/end count from the back; then start is clamped to [0, d]
// (step > 0) or [0, d-1] (step < 0) and end to [0, d] or [-1, d-1]. The
// clamping also tames INT64_MAX/INT64_MIN sentinels.
func sliceRange(d, start, end, step int64) (first, count int64) {
	if start < 0 {
		start += d
	}
	if end < 0 {
		end += d
	}
	if step > 0 {
		start = min(max(start, 0), d)
		end = min(max(end, 0), d)
		if end > start {
			count = (end-start-1)/step + 1 // no overflow for huge steps
		}
	} else {
		start = min(max(start, 0), d-1)
		end = min(max(end, -1), d-1)
		switch span := start - end; {
		case span <= 0:
		case step <= -span: // also avoids negating INT64_MIN
			count = 1
		default:
			count = (span-1)/(-step) + 1
		}
	}
	return start, count
}

// sliceKernel: Slice(data, starts, ends, axes?, steps?).
func sliceKernel(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 3); err != nil {
		return nil, err
	}
	x := in[0]
	r := len(x.Shape)
	starts, err := shapeValues(in[1], "starts")
	if err != nil {
		return nil, err
	}
	ends, err := shapeValues(in[2], "ends")
	if err != nil {
		return nil, err
	}
	if len(ends) != len(starts) {
		return nil, fmt.Errorf("starts has %d entries, ends %d", len(starts), len(ends))
	}
	axes := make([]int64, len(starts))
	for i := range axes {
		axes[i] = int64(i)
	}
	if a := opt(in, 3); a != nil {
		if axes, err = shapeValues(a, "axes"); err != nil {
			return nil, err
		}
	}
	steps := make([]int64, len(starts))
	for i := range steps {
		steps[i] = 1
	}
	if s := opt(in, 4); s != nil {
		if steps, err = shapeValues(s, "steps"); err != nil {
			return nil, err
		}
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		return nil, fmt.Errorf("starts, ends, axes, steps have %d, %d, %d, %d entries",
			len(starts), len(ends), len(axes), len(steps))
	}
	norm, err := ref.NormAxes(axes, r)
	if err != nil {
		return nil, err
	}
	first := make([]int64, r)
	step := make([]int64, r)
	outShape := append([]int64{}, x.Shape...)
	for i := range step {
		step[i] = 1
	}
	for i, ax := range norm {
		if steps[i] == 0 {
			return nil, fmt.Errorf("slice step 0 on axis %d", ax)
		}
		first[ax], outShape[ax] = sliceRange(x.Shape[ax], starts[i], ends[i], steps[i])
		step[ax] = steps[i]
	}
	out := ir.NewTensor(x.DType, outShape)
	if out.Len() == 0 {
		return []*ir.Tensor{out}, nil
	}
	st := ref.Strides(x.Shape)
	base := dot(first, st)
	for d := range st {
		st[d] *= step[d]
	}
	it := ref.NewIndexer(outShape, st)
	for i := 0; i < out.Len(); i++ {
		copyElem(out, i, x, int(base+it.Offsets[0]))
		it.Next()
	}
	return []*ir.Tensor{out}, nil
}

// reverseSequenceKernel: ReverseSequence(input, sequence_lens) reverses the
// first sequence_lens[b] entries along time_axis for each batch entry b.
func reverseSequenceKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x := in[0]
	if len(x.Shape) < 2 {
		return nil, fmt.Errorf("input must have rank >= 2, got %v", x.Shape)
	}
	bAxis, tAxis := n.AttrInt("batch_axis", 1), n.AttrInt("time_axis", 0)
	if !((bAxis == 0 && tAxis == 1) || (bAxis == 1 && tAxis == 0)) {
		return nil, fmt.Errorf("batch_axis %d and time_axis %d must be 0 and 1 in some order", bAxis, tAxis)
	}
	lens, err := shapeValues(in[1], "sequence_lens")
	if err != nil {
		return nil, err
	}
	batch, steps := x.Shape[bAxis], x.Shape[tAxis]
	if int64(len(lens)) != batch {
		return nil, fmt.Errorf("sequence_lens has %d entries for batch %d", len(lens), batch)
	}
	for _, l := range lens {
		if l < 0 || l > steps {
			return nil, fmt.Errorf("sequence length %d out of range [0, %d]", l, steps)
		}
	}
	out := ir.NewTensor(x.DType, x.Shape)
	st := ref.Strides(x.Shape)
	idx := make([]int64, len(x.Shape))
	for i := 0; i < out.Len(); i++ {
		unravel(int64(i), x.Shape, idx)
		t := idx[tAxis]
		if l := lens[idx[bAxis]]; t < l {
			idx[tAxis] = l - 1 - t
		}
		copyElem(out, i, x, int(dot(idx, st)))
	}
	return []*ir.Tensor{out}, nil
}
