package ref

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// Strides returns row-major element strides for shape.
func Strides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// BroadcastShapes applies numpy-style multidirectional broadcasting.
func BroadcastShapes(shapes ...[]int64) ([]int64, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make([]int64, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			o := &out[off+i]
			switch {
			case d == *o || d == 1:
			case *o == 1:
				*o = d
			default:
				return nil, fmt.Errorf("shapes %v are not broadcastable", shapes)
			}
		}
	}
	return out, nil
}

// BroadcastStrides returns strides that map an index in out (a broadcast of
// in) to in's linear index: 0 for broadcast dims.
func BroadcastStrides(in, out []int64) []int64 {
	st := Strides(in)
	bs := make([]int64, len(out))
	off := len(out) - len(in)
	for i := range in {
		if in[i] != 1 {
			bs[off+i] = st[i]
		}
	}
	return bs
}

// Indexer walks the multi-index of a shape in row-major order and keeps a
// linear offset for each of several stride sets (e.g. broadcast inputs).
type Indexer struct {
	shape   []int64
	idx     []int64
	strides [][]int64
	Offsets []int64
}

// NewIndexer starts at index 0 of shape with one offset per stride set.
func NewIndexer(shape []int64, strides ...[]int64) *Indexer {
	return &Indexer{shape: shape, idx: make([]int64, len(shape)), strides: strides, Offsets: make([]int64, len(strides))}
}

// Next advances to the next index.
func (it *Indexer) Next() {
	for d := len(it.shape) - 1; d >= 0; d-- {
		it.idx[d]++
		for k, st := range it.strides {
			it.Offsets[k] += st[d]
		}
		if it.idx[d] < it.shape[d] {
			return
		}
		for k, st := range it.strides {
			it.Offsets[k] -= st[d] * it.shape[d]
		}
		it.idx[d] = 0
	}
}

// Index is the current multi-index (do not modify).
func (it *Indexer) Index() []int64 { return it.idx }

// NormAxis maps a possibly negative axis into [0, rank).
func NormAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// NormAxes normalizes a list of axes and rejects duplicates.
func NormAxes(axes []int64, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := map[int]bool{}
	for i, a := range axes {
		ax, err := NormAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[ax] {
			return nil, fmt.Errorf("axis %d repeated in %v", a, axes)
		}
		seen[ax] = true
		out[i] = ax
	}
	return out, nil
}

// SameDType returns an error unless every non-nil input has dtype dt.
func SameDType(dt ir.DType, in ...*ir.Tensor) error {
	for i, t := range in {
		if t != nil && t.DType != dt {
			return fmt.Errorf("input %d is %v, want %v", i, t.DType, dt)
		}
	}
	return nil
}

// Need returns an error when any of the listed inputs is absent.
func Need(in []*ir.Tensor, idx ...int) error {
	for _, i := range idx {
		if i >= len(in) || in[i] == nil {
			return fmt.Errorf("missing required input %d", i)
		}
	}
	return nil
}

// Scalar builds a rank-0 tensor of dtype dt holding v.
func Scalar(dt ir.DType, v float64) *ir.Tensor {
	t := ir.NewTensor(dt, nil)
	t.SetFloat64(0, v)
	return t
}
