package layout

import (
	"fmt"
	"math"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Ops that write updates into a copy of their data: ScatterElements and
// ScatterND, each with an optional reduction (none, add, mul, max, min).
// Updates are applied in the row-major order of the index tensor, so with
// reduction none a repeated index keeps the last update.
func init() {
	ref.Register("ScatterElements", scatterElementsKernel)
	ref.Register("ScatterND", scatterNDKernel)
}

// combiner writes upd[ui] into out[oi], reducing with the value already
// there.
type combiner func(out *ir.Tensor, oi int, upd *ir.Tensor, ui int)

// reducer returns the combiner for a reduction attribute and dtype: float
// dtypes compute in float64 (exact for one operation before rounding),
// unsigned integers in uint64, the rest in int64, all wrapping to width.
func reducer(reduction string, dt ir.DType) (combiner, error) {
	if reduction == "none" {
		return func(out *ir.Tensor, oi int, upd *ir.Tensor, ui int) { copyElem(out, oi, upd, ui) }, nil
	}
	switch reduction {
	case "add", "mul", "max", "min":
	default:
		return nil, ref.Unsupported("reduction %q", reduction)
	}
	switch {
	case dt.IsFloat():
		f := map[string]func(a, b float64) float64{
			"add": func(a, b float64) float64 { return a + b },
			"mul": func(a, b float64) float64 { return a * b },
			"max": math.Max,
			"min": math.Min,
		}[reduction]
		return func(out *ir.Tensor, oi int, upd *ir.Tensor, ui int) {
			out.SetFloat64(oi, f(out.Float64(oi), upd.Float64(ui)))
		}, nil
	case dt.IsUnsigned():
		f := map[string]func(a, b uint64) uint64{
			"add": func(a, b uint64) uint64 { return a + b },
			"mul": func(a, b uint64) uint64 { return a * b },
			"max": func(a, b uint64) uint64 { return max(a, b) },
			"min": func(a, b uint64) uint64 { return min(a, b) },
		}[reduction]
		return func(out *ir.Tensor, oi int, upd *ir.Tensor, ui int) {
			out.SetInt64(oi, int64(f(out.Uint64(oi), upd.Uint64(ui))))
		}, nil
	default: // signed integers and bool (add acts as or, mul as and)
		f := map[string]func(a, b int64) int64{
			"add": func(a, b int64) int64 { return a + b },
			"mul": func(a, b int64) int64 { return a * b },
			"max": func(a, b int64) int64 { return max(a, b) },
			"min": func(a, b int64) int64 { return min(a, b) },
		}[reduction]
		return func(out *ir.Tensor, oi int, upd *ir.Tensor, ui int) {
			out.SetInt64(oi, f(out.Int64(oi), upd.Int64(ui)))
		}, nil
	}
}

// scatterElementsKernel: ScatterElements(data, indices, updates) along
// attribute axis: out[p with p[axis] = indices[p]] (op)= updates[p].
func scatterElementsKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 3); err != nil {
		return nil, err
	}
	x, it, upd := in[0], in[1], in[2]
	if err := ref.SameDType(x.DType, upd); err != nil {
		return nil, err
	}
	if !slices.Equal(it.Shape, upd.Shape) {
		return nil, fmt.Errorf("indices %v and updates %v differ in shape", it.Shape, upd.Shape)
	}
	axis, err := elementsAxis(n, x, it, "indices")
	if err != nil {
		return nil, err
	}
	comb, err := reducer(n.AttrString("reduction", "none"), x.DType)
	if err != nil {
		return nil, err
	}
	idx, err := intValues(it, "indices")
	if err != nil {
		return nil, err
	}
	out := x.Clone()
	st := ref.Strides(x.Shape)
	pos := make([]int64, len(it.Shape))
	for i, v := range idx {
		unravel(int64(i), it.Shape, pos)
		if pos[axis], err = normIndex(v, x.Shape[axis]); err != nil {
			return nil, err
		}
		comb(out, int(dot(pos, st)), upd, i)
	}
	return []*ir.Tensor{out}, nil
}

// scatterNDKernel: ScatterND(data, indices, updates): each index tuple of
// indices [..., k] addresses a slice data[t...] of shape data.Shape[k:],
// which receives the matching slice of updates (shape indices.Shape[:-1] +
// data.Shape[k:]).
func scatterNDKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 3); err != nil {
		return nil, err
	}
	x, it, upd := in[0], in[1], in[2]
	if err := ref.SameDType(x.DType, upd); err != nil {
		return nil, err
	}
	l, err := newNDLayout(x, it, 0)
	if err != nil {
		return nil, err
	}
	want := append(append([]int64{}, it.Shape[:len(it.Shape)-1]...), x.Shape[l.k:]...)
	if !slices.Equal(upd.Shape, want) {
		return nil, fmt.Errorf("updates have shape %v, want %v", upd.Shape, want)
	}
	comb, err := reducer(n.AttrString("reduction", "none"), x.DType)
	if err != nil {
		return nil, err
	}
	idx, err := intValues(it, "indices")
	if err != nil {
		return nil, err
	}
	out := x.Clone()
	for t := 0; t < l.tuples; t++ {
		off, err := l.offset(x, idx, t)
		if err != nil {
			return nil, err
		}
		for j := 0; j < l.slice; j++ {
			comb(out, off+j, upd, t*l.slice+j)
		}
	}
	return []*ir.Tensor{out}, nil
}
