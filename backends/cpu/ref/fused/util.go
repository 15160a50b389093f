package fused

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// opt returns optional input i, or nil.
func opt(in []*ir.Tensor, i int) *ir.Tensor {
	if i < len(in) {
		return in[i]
	}
	return nil
}

// needFloat rejects non-float dtypes as unsupported.
func needFloat(op string, t *ir.Tensor) error {
	if !t.DType.IsFloat() {
		return ref.Unsupported("%s on %v (want f32, f64, f16 or bf16)", op, t.DType)
	}
	return nil
}

// sameFloat checks that every present input has the float dtype of in[0];
// names label the inputs in errors.
func sameFloat(op string, names []string, in []*ir.Tensor) error {
	if err := needFloat(op, in[0]); err != nil {
		return err
	}
	for i, t := range in {
		if t != nil && t.DType != in[0].DType {
			return fmt.Errorf("%s is %v, %s is %v", names[i], t.DType, names[0], in[0].DType)
		}
	}
	return nil
}

// toFloats copies t's elements into a float64 slice (typed loops for f32
// and f64, the generic accessor otherwise).
func toFloats(t *ir.Tensor) []float64 {
	out := make([]float64, t.Len())
	switch t.DType {
	case ir.Float32:
		for i, v := range t.Float32s() {
			out[i] = float64(v)
		}
	case ir.Float64:
		for i := range out {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(t.Data[i*8:]))
		}
	default:
		for i := range out {
			out[i] = t.Float64(i)
		}
	}
	return out
}

// fromFloats builds a tensor of dtype dt from float64 values, rounding each
// once (SetFloat64's rounding; a typed store for f32 rounds the same way).
func fromFloats(dt ir.DType, shape []int64, vals []float64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	switch dt {
	case ir.Float32:
		dst := t.Float32s()
		for i, v := range vals {
			dst[i] = float32(v)
		}
	case ir.Float64:
		for i, v := range vals {
			binary.LittleEndian.PutUint64(t.Data[i*8:], math.Float64bits(v))
		}
	default:
		for i, v := range vals {
			t.SetFloat64(i, v)
		}
	}
	return t
}

// widen returns a Float64 copy of t (exact for every float dtype).
func widen(t *ir.Tensor) *ir.Tensor {
	if t == nil {
		return nil
	}
	return fromFloats(ir.Float64, t.Shape, toFloats(t))
}

// call runs the registered reference kernel of op on in, with the attributes
// attrs, on behalf of node n (whose name it borrows for errors). It is how a
// fused kernel reuses the oracle of an op it contains.
func call(ctx *ref.Context, n *ir.Node, op string, attrs ir.Attrs, in ...*ir.Tensor) (*ir.Tensor, error) {
	k, ok := ref.Lookup(op)
	if !ok {
		return nil, ref.Unsupported("%s needs the %s reference kernel, which is not registered (import backends/cpu)", n.Op, op)
	}
	sub := &ir.Node{Name: n.Name, Op: op, Attrs: attrs, Outputs: []*ir.Value{{Name: n.Name, DType: ir.Float64}}}
	out, err := k(ctx, sub, in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if len(out) != 1 || out[0] == nil {
		return nil, fmt.Errorf("%s kernel returned %d outputs, want 1", op, len(out))
	}
	return out[0], nil
}

// addBroadcast returns y + z under numpy broadcasting, with y of shape ys
// and z a tensor; it also returns the result shape.
func addBroadcast(y []float64, ys []int64, z *ir.Tensor) ([]float64, []int64, error) {
	out, err := ref.BroadcastShapes(ys, z.Shape)
	if err != nil {
		return nil, nil, err
	}
	zs := toFloats(z)
	if slices.Equal(out, ys) && slices.Equal(out, z.Shape) {
		for i := range y {
			y[i] += zs[i]
		}
		return y, out, nil
	}
	res := make([]float64, ir.NumElements(out))
	it := ref.NewIndexer(out, ref.BroadcastStrides(ys, out), ref.BroadcastStrides(z.Shape, out))
	for i := range res {
		res[i] = y[it.Offsets[0]] + zs[it.Offsets[1]]
		it.Next()
	}
	return res, out, nil
}

// broadcastIndex maps each element of shape `to` to p's linear index under
// unidirectional broadcasting of p's shape to `to`.
func broadcastIndex(what string, p []int64, to []int64) ([]int64, error) {
	if len(p) > len(to) {
		return nil, fmt.Errorf("%s has shape %v, which does not broadcast to %v", what, p, to)
	}
	off := len(to) - len(p)
	for i, d := range p {
		if d != 1 && d != to[off+i] {
			return nil, fmt.Errorf("%s has shape %v, which does not broadcast to %v", what, p, to)
		}
	}
	idx := make([]int64, ir.NumElements(to))
	it := ref.NewIndexer(to, ref.BroadcastStrides(p, to))
	for i := range idx {
		idx[i] = it.Offsets[0]
		it.Next()
	}
	return idx, nil
}
