package layout

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func TestSlice(t *testing.T) {
	const maxI, minI = math.MaxInt64, math.MinInt64
	one := func(v int64) *ir.Tensor { return i64(sh(1), v) }
	runMoveCases(t, "Slice", []moveCase{
		{name: "2-D window", shape: sh(3, 4), extra: []*ir.Tensor{i64(sh(2), 0, 1), i64(sh(2), 2, 3)},
			wantSh: sh(2, 2), want: []float64{1, 2, 5, 6}},
		{name: "reverse last axis", shape: sh(3, 4), extra: []*ir.Tensor{one(-1), one(minI), one(-1), one(-1)},
			wantSh: sh(3, 4), want: []float64{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}},
		{name: "to INT64_MAX", shape: sh(3, 4), extra: []*ir.Tensor{one(1), one(maxI), one(0)},
			wantSh: sh(2, 4), want: []float64{4, 5, 6, 7, 8, 9, 10, 11}},
		{name: "step 2", shape: sh(7), extra: []*ir.Tensor{one(1), one(6), nil, one(2)},
			wantSh: sh(3), want: []float64{1, 3, 5}},
		{name: "step -2", shape: sh(7), extra: []*ir.Tensor{one(6), one(0), nil, one(-2)},
			wantSh: sh(3), want: []float64{6, 4, 2}},
		{name: "odd step -3 i32", shape: sh(7), extra: []*ir.Tensor{i32(sh(1), -1), i32(sh(1), -8), i32(sh(1), 0), i32(sh(1), -3)},
			wantSh: sh(3), want: []float64{6, 3, 0}},
		{name: "past the end", shape: sh(7), extra: []*ir.Tensor{one(10), one(20)}, wantSh: sh(0), want: nil},
		{name: "backwards with positive step", shape: sh(7), extra: []*ir.Tensor{one(5), one(2)}, wantSh: sh(0), want: nil},
		// The spec clamps a negative-step start into [0, dim-1], so a start
		// far below -dim still selects element 0.
		{name: "negative clamp", shape: sh(7), extra: []*ir.Tensor{one(-100), one(-200), nil, one(-2)},
			wantSh: sh(1), want: []float64{0}},
		{name: "step INT64_MIN", shape: sh(3), extra: []*ir.Tensor{one(-1), one(minI), nil, one(minI)},
			wantSh: sh(1), want: []float64{2}},
		{name: "step INT64_MAX", shape: sh(3), extra: []*ir.Tensor{one(0), one(maxI), nil, one(maxI)},
			wantSh: sh(1), want: []float64{0}},
		{name: "zero-sized dim", shape: sh(0, 3), extra: []*ir.Tensor{one(1), one(3), one(1)},
			wantSh: sh(0, 2), want: nil},
		{name: "axes negative 3-D", shape: sh(2, 3, 2), extra: []*ir.Tensor{i64(sh(2), 1, 1), i64(sh(2), 3, 2), i64(sh(2), -2, 0)},
			wantSh: sh(1, 2, 2), want: []float64{8, 9, 10, 11}},
		{name: "step 0", shape: sh(3), extra: []*ir.Tensor{one(0), one(3), nil, one(0)}, wantErr: true},
		{name: "length mismatch", shape: sh(3), extra: []*ir.Tensor{one(0), i64(sh(2), 1, 2)}, wantErr: true},
		{name: "repeated axis", shape: sh(3, 3), extra: []*ir.Tensor{i64(sh(2), 0, 0), i64(sh(2), 1, 1), i64(sh(2), 0, -2)}, wantErr: true},
		{name: "axis out of range", shape: sh(3), extra: []*ir.Tensor{one(0), one(1), one(1)}, wantErr: true},
		{name: "float starts", shape: sh(3), extra: []*ir.Tensor{f32(sh(1), 0), one(1)}, wantErr: true},
	})
}

func TestReverseSequence(t *testing.T) {
	runMoveCases(t, "ReverseSequence", []moveCase{
		{name: "time major", shape: sh(4, 2), extra: []*ir.Tensor{i64(sh(2), 3, 1)},
			wantSh: sh(4, 2), want: []float64{4, 1, 2, 3, 0, 5, 6, 7}},
		{name: "batch major", attrs: attrs(ir.Int("batch_axis", 0), ir.Int("time_axis", 1)), shape: sh(2, 3),
			extra: []*ir.Tensor{i32(sh(2), 2, 0)}, wantSh: sh(2, 3), want: []float64{1, 0, 2, 3, 4, 5}},
		{name: "rank 3", attrs: attrs(ir.Int("batch_axis", 0), ir.Int("time_axis", 1)), shape: sh(2, 3, 2),
			extra: []*ir.Tensor{i64(sh(2), 3, 1)}, wantSh: sh(2, 3, 2),
			want: []float64{4, 5, 2, 3, 0, 1, 6, 7, 8, 9, 10, 11}},
		{name: "zero time", shape: sh(0, 2), extra: []*ir.Tensor{i64(sh(2), 0, 0)}, wantSh: sh(0, 2), want: nil},
		{name: "too long", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(2), 3, 1)}, wantErr: true},
		{name: "negative", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(2), -1, 1)}, wantErr: true},
		{name: "lens count", shape: sh(2, 3), extra: []*ir.Tensor{i64(sh(2), 1, 1)}, wantErr: true},
		{name: "same axes", attrs: attrs(ir.Int("batch_axis", 0)), shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(2), 1, 1)}, wantErr: true},
		{name: "rank 1", shape: sh(2), extra: []*ir.Tensor{i64(sh(1), 1)}, wantErr: true},
	})
	_, err := runOp("ReverseSequence", nil, 1, f32(sh(2, 1), 1, 2), nil)
	require.Error(t, err)
}
