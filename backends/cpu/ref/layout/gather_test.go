package layout

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func TestGather(t *testing.T) {
	ax := func(a int64) ir.Attrs { return attrs(ir.Int("axis", a)) }
	runMoveCases(t, "Gather", []moveCase{
		{name: "axis 0 negative index", shape: sh(3, 2), extra: []*ir.Tensor{i64(sh(2), 2, -3)},
			wantSh: sh(2, 2), want: []float64{4, 5, 0, 1}},
		{name: "axis 1 2-D indices i32", attrs: ax(1), shape: sh(3, 2), extra: []*ir.Tensor{i32(sh(2, 2), 1, 0, -1, 1)},
			wantSh: sh(3, 2, 2), want: []float64{1, 0, 1, 1, 3, 2, 3, 3, 5, 4, 5, 5}},
		{name: "scalar index", shape: sh(3, 2), extra: []*ir.Tensor{i64(sh(), 1)}, wantSh: sh(2), want: []float64{2, 3}},
		{name: "axis -1 scalar index", attrs: ax(-1), shape: sh(3, 2), extra: []*ir.Tensor{i64(sh(), 1)},
			wantSh: sh(3), want: []float64{1, 3, 5}},
		{name: "no indices", shape: sh(3, 2), extra: []*ir.Tensor{i64(sh(0))}, wantSh: sh(0, 2), want: nil},
		{name: "zero-sized data", shape: sh(0, 2), extra: []*ir.Tensor{i64(sh(0))}, wantSh: sh(0, 2), want: nil},
		{name: "index into empty", shape: sh(0, 2), extra: []*ir.Tensor{i64(sh(1), 0)}, wantErr: true},
		{name: "index too big", shape: sh(3, 2), extra: []*ir.Tensor{i64(sh(1), 3)}, wantErr: true},
		{name: "index too small", shape: sh(3, 2), extra: []*ir.Tensor{i64(sh(1), -4)}, wantErr: true},
		{name: "float index", shape: sh(3, 2), extra: []*ir.Tensor{f32(sh(1), 0)}, wantErr: true},
		{name: "axis", attrs: ax(2), shape: sh(3, 2), extra: []*ir.Tensor{i64(sh(1), 0)}, wantErr: true},
		{name: "scalar data", shape: sh(), data: []float64{1}, extra: []*ir.Tensor{i64(sh(), 0)}, wantErr: true},
	})
}

func TestGatherElements(t *testing.T) {
	runMoveCases(t, "GatherElements", []moveCase{
		{name: "axis 0", shape: sh(3, 3), extra: []*ir.Tensor{i64(sh(2, 3), 1, 2, 0, 2, 0, -1)},
			wantSh: sh(2, 3), want: []float64{3, 7, 2, 6, 1, 8}},
		{name: "axis -1 i32", attrs: attrs(ir.Int("axis", -1)), shape: sh(3, 3), extra: []*ir.Tensor{i32(sh(3, 2), 0, 0, 1, 0, 2, 1)},
			wantSh: sh(3, 2), want: []float64{0, 0, 4, 3, 8, 7}},
		{name: "empty", shape: sh(3, 3), extra: []*ir.Tensor{i64(sh(0, 3))}, wantSh: sh(0, 3), want: nil},
		{name: "out of range", shape: sh(3, 3), extra: []*ir.Tensor{i64(sh(1, 1), 3)}, wantErr: true},
		{name: "rank", shape: sh(3, 3), extra: []*ir.Tensor{i64(sh(1), 0)}, wantErr: true},
		{name: "too wide", shape: sh(3, 1), extra: []*ir.Tensor{i64(sh(1, 2), 0, 0)}, wantErr: true},
	})
}

func TestGatherND(t *testing.T) {
	bd := func(b int64) ir.Attrs { return attrs(ir.Int("batch_dims", b)) }
	runMoveCases(t, "GatherND", []moveCase{
		{name: "elements", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(2, 2), 0, 0, 1, 1)}, wantSh: sh(2), want: []float64{0, 3}},
		{name: "rows", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(2, 1), 1, 0)}, wantSh: sh(2, 2), want: []float64{2, 3, 0, 1}},
		{name: "3-D", shape: sh(2, 2, 2), extra: []*ir.Tensor{i64(sh(2, 1, 2), 0, 1, 1, 0)},
			wantSh: sh(2, 1, 2), want: []float64{2, 3, 4, 5}},
		{name: "batch 1 rows", attrs: bd(1), shape: sh(2, 2, 2), extra: []*ir.Tensor{i64(sh(2, 1), 1, 0)},
			wantSh: sh(2, 2), want: []float64{2, 3, 4, 5}},
		{name: "batch 1 elements i32", attrs: bd(1), shape: sh(2, 2, 2), extra: []*ir.Tensor{i32(sh(2, 2), 0, 1, 1, 1)},
			wantSh: sh(2), want: []float64{1, 7}},
		{name: "negative", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(1, 2), -1, -2)}, wantSh: sh(1), want: []float64{2}},
		{name: "no tuples", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(0, 1))}, wantSh: sh(0, 2), want: nil},
		{name: "tuple too long", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(1, 3), 0, 0, 0)}, wantErr: true},
		{name: "out of range", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(1, 2), 0, 2)}, wantErr: true},
		{name: "batch mismatch", attrs: bd(1), shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(3, 1), 0, 0, 0)}, wantErr: true},
		{name: "batch too big", attrs: bd(2), shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(2, 1), 0, 0)}, wantErr: true},
		{name: "scalar indices", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(), 0)}, wantErr: true},
	})
}

func TestCompress(t *testing.T) {
	cond := func(v ...float64) *ir.Tensor { return tens(ir.Bool, sh(int64(len(v))), v...) }
	ax := func(a int64) ir.Attrs { return attrs(ir.Int("axis", a)) }
	runMoveCases(t, "Compress", []moveCase{
		{name: "axis 0", attrs: ax(0), shape: sh(3, 2), extra: []*ir.Tensor{cond(0, 1, 1)}, wantSh: sh(2, 2), want: []float64{2, 3, 4, 5}},
		{name: "axis 1 short", attrs: ax(1), shape: sh(3, 2), extra: []*ir.Tensor{cond(1)}, wantSh: sh(3, 1), want: []float64{0, 2, 4}},
		{name: "flattened", shape: sh(3, 2), extra: []*ir.Tensor{cond(0, 1, 0, 0, 1)}, wantSh: sh(2), want: []float64{1, 4}},
		{name: "none kept", attrs: ax(-1), shape: sh(3, 2), extra: []*ir.Tensor{cond()}, wantSh: sh(3, 0), want: nil},
		{name: "long but false", attrs: ax(0), shape: sh(3, 2), extra: []*ir.Tensor{cond(1, 0, 0, 0)}, wantSh: sh(1, 2), want: []float64{0, 1}},
		{name: "true beyond dim", attrs: ax(0), shape: sh(3, 2), extra: []*ir.Tensor{cond(0, 0, 0, 1)}, wantErr: true},
		{name: "2-D condition", shape: sh(2), extra: []*ir.Tensor{tens(ir.Bool, sh(1, 1), 1)}, wantErr: true},
		{name: "axis", attrs: ax(2), shape: sh(3, 2), extra: []*ir.Tensor{cond(1)}, wantErr: true},
	})
}

func TestNonZero(t *testing.T) {
	for _, dt := range allDTypes {
		got := run1(t, "NonZero", nil, tens(dt, sh(2, 3), 0, 3, 0, 5, 1, 0))
		requireTensor(t, i64(sh(2, 3), 0, 1, 1, 1, 0, 1), got, dt)
		requireTensor(t, i64(sh(1, 1), 0), run1(t, "NonZero", nil, tens(dt, sh(), 5)), "scalar", dt)
		requireTensor(t, i64(sh(1, 0)), run1(t, "NonZero", nil, tens(dt, sh(), 0)), "zero scalar", dt)
		requireTensor(t, i64(sh(2, 0)), run1(t, "NonZero", nil, tens(dt, sh(0, 2))), "empty", dt)
	}
	x := f32(sh(3), 0, 0, 0.5)
	x.SetFloat64(0, math.Copysign(0, -1))
	x.SetFloat64(1, math.NaN())
	requireTensor(t, i64(sh(1, 2), 1, 2), run1(t, "NonZero", nil, x), "-0 is zero, NaN is not")
	out, err := runOp("NonZero", nil, 1, f32(sh(1, 1, 2), 1, 1))
	require.NoError(t, err)
	requireTensor(t, i64(sh(3, 2), 0, 0, 0, 0, 0, 1), out[0])
}
