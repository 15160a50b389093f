package layout

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func TestReshape(t *testing.T) {
	runMoveCases(t, "Reshape", []moveCase{
		{name: "infer", shape: sh(2, 3), extra: []*ir.Tensor{i64(sh(2), 3, -1)}, wantSh: sh(3, 2), want: seq(6)},
		{name: "copy zero", shape: sh(2, 3, 1), extra: []*ir.Tensor{i64(sh(2), 0, -1)}, wantSh: sh(2, 3), want: seq(6)},
		{name: "i32 shape", shape: sh(6), extra: []*ir.Tensor{i32(sh(3), 1, 2, 3)}, wantSh: sh(1, 2, 3), want: seq(6)},
		{name: "to scalar", shape: sh(1, 1), data: []float64{7}, extra: []*ir.Tensor{i64(sh(0))}, wantSh: sh(), want: []float64{7}},
		{name: "allowzero", attrs: attrs(ir.Int("allowzero", 1)), shape: sh(0, 3), extra: []*ir.Tensor{i64(sh(2), 3, 0)}, wantSh: sh(3, 0), want: nil},
		{name: "zero copies dim", shape: sh(0, 3), extra: []*ir.Tensor{i64(sh(2), 0, 3)}, wantSh: sh(0, 3), want: nil},
		{name: "count mismatch", shape: sh(2, 3), extra: []*ir.Tensor{i64(sh(2), 4, 2)}, wantErr: true},
		{name: "two -1", shape: sh(2, 3), extra: []*ir.Tensor{i64(sh(2), -1, -1)}, wantErr: true},
		{name: "dim -2", shape: sh(2, 3), extra: []*ir.Tensor{i64(sh(2), -2, 3)}, wantErr: true},
		{name: "zero beyond rank", shape: sh(6), extra: []*ir.Tensor{i64(sh(2), 6, 0)}, wantErr: true},
		{name: "infer with zero", attrs: attrs(ir.Int("allowzero", 1)), shape: sh(0, 3), extra: []*ir.Tensor{i64(sh(2), 0, -1)}, wantErr: true},
		{name: "float shape", shape: sh(2), extra: []*ir.Tensor{f32(sh(1), 2)}, wantErr: true},
	})
}

func TestFlatten(t *testing.T) {
	runMoveCases(t, "Flatten", []moveCase{
		{name: "default axis", shape: sh(2, 3, 4), wantSh: sh(2, 12), want: seq(24)},
		{name: "axis 0", attrs: attrs(ir.Int("axis", 0)), shape: sh(2, 3), wantSh: sh(1, 6), want: seq(6)},
		{name: "axis rank", attrs: attrs(ir.Int("axis", 2)), shape: sh(2, 3), wantSh: sh(6, 1), want: seq(6)},
		{name: "negative axis", attrs: attrs(ir.Int("axis", -1)), shape: sh(2, 3, 5), wantSh: sh(6, 5), want: seq(30)},
		{name: "zero dim", attrs: attrs(ir.Int("axis", 1)), shape: sh(0, 3), wantSh: sh(0, 3), want: nil},
		{name: "axis too big", attrs: attrs(ir.Int("axis", 3)), shape: sh(2, 3), wantErr: true},
		{name: "axis too small", attrs: attrs(ir.Int("axis", -3)), shape: sh(2, 3), wantErr: true},
	})
}

func TestSqueeze(t *testing.T) {
	runMoveCases(t, "Squeeze", []moveCase{
		{name: "all ones", shape: sh(1, 3, 1, 2), wantSh: sh(3, 2), want: seq(6)},
		{name: "listed", shape: sh(1, 3, 1, 2), extra: []*ir.Tensor{i64(sh(1), -2)}, wantSh: sh(1, 3, 2), want: seq(6)},
		{name: "to scalar", shape: sh(1, 1), data: []float64{5}, wantSh: sh(), want: []float64{5}},
		{name: "zero dim kept", shape: sh(0, 1), wantSh: sh(0), want: nil},
		{name: "not one", shape: sh(2, 3), extra: []*ir.Tensor{i64(sh(1), 0)}, wantErr: true},
		{name: "out of range", shape: sh(1, 3), extra: []*ir.Tensor{i64(sh(1), 2)}, wantErr: true},
		{name: "repeated", shape: sh(1, 3), extra: []*ir.Tensor{i64(sh(2), 0, -2)}, wantErr: true},
	})
}

func TestUnsqueeze(t *testing.T) {
	runMoveCases(t, "Unsqueeze", []moveCase{
		{name: "front and back", shape: sh(3, 2), extra: []*ir.Tensor{i64(sh(2), 0, 3)}, wantSh: sh(1, 3, 2, 1), want: seq(6)},
		{name: "negative unsorted", shape: sh(3, 2), extra: []*ir.Tensor{i64(sh(2), -1, 1)}, wantSh: sh(3, 1, 2, 1), want: seq(6)},
		{name: "scalar", shape: sh(), data: []float64{9}, extra: []*ir.Tensor{i64(sh(1), 0)}, wantSh: sh(1), want: []float64{9}},
		{name: "zero dim", shape: sh(0), extra: []*ir.Tensor{i64(sh(1), 1)}, wantSh: sh(0, 1), want: nil},
		{name: "out of range", shape: sh(3), extra: []*ir.Tensor{i64(sh(1), 2)}, wantErr: true},
		{name: "duplicate", shape: sh(3), extra: []*ir.Tensor{i64(sh(2), 0, -3)}, wantErr: true},
	})
	_, err := runOp("Unsqueeze", nil, 1, f32(sh(2), 1, 2), nil)
	require.Error(t, err, "axes is required")
}

func TestShapeAndSize(t *testing.T) {
	x := f32(sh(2, 0, 4, 5))
	cases := []struct {
		name string
		a    ir.Attrs
		want []int64
	}{
		{"all", nil, []int64{2, 0, 4, 5}},
		{"start", attrs(ir.Int("start", 1)), []int64{0, 4, 5}},
		{"negative start", attrs(ir.Int("start", -1)), []int64{5}},
		{"end", attrs(ir.Int("end", 2)), []int64{2, 0}},
		{"negative end", attrs(ir.Int("start", 1), ir.Int("end", -1)), []int64{0, 4}},
		{"clamped", attrs(ir.Int("start", -10), ir.Int("end", 10)), []int64{2, 0, 4, 5}},
		{"empty", attrs(ir.Int("start", 3), ir.Int("end", 1)), []int64{}},
	}
	for _, c := range cases {
		requireTensor(t, i64(sh(int64(len(c.want))), c.want...), run1(t, "Shape", c.a, x), c.name)
	}
	requireTensor(t, i64(sh(0)), run1(t, "Shape", nil, f32(sh(), 1)), "scalar")
	requireTensor(t, i64(sh(), 0), run1(t, "Size", nil, x), "zero-sized")
	requireTensor(t, i64(sh(), 6), run1(t, "Size", nil, tens(ir.Bool, sh(3, 2), seq(6)...)), "bool")
	requireTensor(t, i64(sh(), 1), run1(t, "Size", nil, f32(sh(), 1)), "scalar")
}
