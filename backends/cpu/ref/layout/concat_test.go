package layout

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

type shapedVals struct {
	shape []int64
	vals  []float64
}

func TestConcat(t *testing.T) {
	cases := []struct {
		name   string
		axis   int64
		inputs []shapedVals
		want   shapedVals
	}{
		{"axis -1", -1, []shapedVals{{sh(2, 2), seq(4)}, {sh(2, 1), []float64{4, 5}}},
			shapedVals{sh(2, 3), []float64{0, 1, 4, 2, 3, 5}}},
		{"axis 0", 0, []shapedVals{{sh(1, 2), []float64{0, 1}}, {sh(2, 2), []float64{2, 3, 4, 5}}},
			shapedVals{sh(3, 2), seq(6)}},
		{"three 1-D", 0, []shapedVals{{sh(1), []float64{3}}, {sh(2), []float64{1, 2}}, {sh(1), []float64{0}}},
			shapedVals{sh(4), []float64{3, 1, 2, 0}}},
		{"zero-sized part", 1, []shapedVals{{sh(2, 0), nil}, {sh(2, 2), []float64{7, 8, 9, 10}}},
			shapedVals{sh(2, 2), []float64{7, 8, 9, 10}}},
		{"single", 0, []shapedVals{{sh(2), []float64{5, 6}}}, shapedVals{sh(2), []float64{5, 6}}},
	}
	for _, c := range cases {
		for _, dt := range allDTypes {
			var in []*ir.Tensor
			for _, s := range c.inputs {
				in = append(in, tens(dt, s.shape, s.vals...))
			}
			got := run1(t, "Concat", attrs(ir.Int("axis", c.axis)), in...)
			requireTensor(t, tens(dt, c.want.shape, c.want.vals...), got, "%s/%v", c.name, dt)
		}
	}
	bad := []struct {
		name string
		axis int64
		in   []*ir.Tensor
	}{
		{"dim mismatch", 0, []*ir.Tensor{f32(sh(1, 2), 1, 2), f32(sh(1, 3), 1, 2, 3)}},
		{"dtype mismatch", 0, []*ir.Tensor{f32(sh(1), 1), i64(sh(1), 1)}},
		{"rank mismatch", 0, []*ir.Tensor{f32(sh(1), 1), f32(sh(1, 1), 1)}},
		{"scalars", 0, []*ir.Tensor{f32(sh(), 1), f32(sh(), 1)}},
		{"axis", 2, []*ir.Tensor{f32(sh(1, 1), 1), f32(sh(1, 1), 1)}},
		{"no inputs", 0, nil},
	}
	for _, c := range bad {
		_, err := runOp("Concat", attrs(ir.Int("axis", c.axis)), 1, c.in...)
		require.Error(t, err, c.name)
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		name  string
		a     ir.Attrs
		x     shapedVals
		split *ir.Tensor
		want  []shapedVals
	}{
		{"split input axis 1", attrs(ir.Int("axis", 1)), shapedVals{sh(2, 5), seq(10)}, i64(sh(2), 2, 3),
			[]shapedVals{{sh(2, 2), []float64{0, 1, 5, 6}}, {sh(2, 3), []float64{2, 3, 4, 7, 8, 9}}}},
		{"uneven by outputs", nil, shapedVals{sh(7), seq(7)}, nil,
			[]shapedVals{{sh(3), []float64{0, 1, 2}}, {sh(3), []float64{3, 4, 5}}, {sh(1), []float64{6}}}},
		{"num_outputs empty last", attrs(ir.Int("num_outputs", 4)), shapedVals{sh(6), seq(6)}, nil,
			[]shapedVals{{sh(2), []float64{0, 1}}, {sh(2), []float64{2, 3}}, {sh(2), []float64{4, 5}}, {sh(0), nil}}},
		{"zero part", nil, shapedVals{sh(2), []float64{4, 5}}, i64(sh(2), 0, 2),
			[]shapedVals{{sh(0), nil}, {sh(2), []float64{4, 5}}}},
		{"negative axis even", attrs(ir.Int("axis", -2)), shapedVals{sh(4, 1), seq(4)}, nil,
			[]shapedVals{{sh(2, 1), []float64{0, 1}}, {sh(2, 1), []float64{2, 3}}}},
		{"i32 split", nil, shapedVals{sh(3, 1), seq(3)}, i32(sh(2), 1, 2),
			[]shapedVals{{sh(1, 1), []float64{0}}, {sh(2, 1), []float64{1, 2}}}},
	}
	for _, c := range cases {
		for _, dt := range allDTypes {
			out, err := runOp("Split", c.a, len(c.want), tens(dt, c.x.shape, c.x.vals...), c.split)
			require.NoError(t, err, "%s/%v", c.name, dt)
			for i, w := range c.want {
				requireTensor(t, tens(dt, w.shape, w.vals...), out[i], "%s/%v output %d", c.name, dt, i)
			}
		}
	}
	bad := []struct {
		name  string
		a     ir.Attrs
		nOut  int
		x     *ir.Tensor
		split *ir.Tensor
	}{
		{"sum", nil, 2, f32(sh(4), seq(4)...), i64(sh(2), 1, 2)},
		{"negative", nil, 2, f32(sh(2), seq(2)...), i64(sh(2), 3, -1)},
		{"length", nil, 3, f32(sh(3), seq(3)...), i64(sh(2), 1, 2)},
		{"5 into 4", nil, 4, f32(sh(5), seq(5)...), nil},
		{"num_outputs mismatch", attrs(ir.Int("num_outputs", 3)), 2, f32(sh(6), seq(6)...), nil},
		{"scalar", nil, 1, f32(sh(), 1), nil},
		{"axis", attrs(ir.Int("axis", 1)), 1, f32(sh(2), 1, 2), nil},
	}
	for _, c := range bad {
		_, err := runOp("Split", c.a, c.nOut, c.x, c.split)
		require.Error(t, err, c.name)
	}
}

func TestTile(t *testing.T) {
	runMoveCases(t, "Tile", []moveCase{
		{name: "both axes", shape: sh(1, 2), extra: []*ir.Tensor{i64(sh(2), 2, 3)}, wantSh: sh(2, 6),
			want: []float64{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}},
		{name: "inner axis", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(2), 1, 2)}, wantSh: sh(2, 4),
			want: []float64{0, 1, 0, 1, 2, 3, 2, 3}},
		{name: "1-D", shape: sh(3), extra: []*ir.Tensor{i32(sh(1), 2)}, wantSh: sh(6), want: []float64{0, 1, 2, 0, 1, 2}},
		{name: "zero repeat", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(2), 0, 1)}, wantSh: sh(0, 2), want: nil},
		{name: "zero dim", shape: sh(0, 2), extra: []*ir.Tensor{i64(sh(2), 3, 1)}, wantSh: sh(0, 2), want: nil},
		{name: "scalar", shape: sh(), data: []float64{5}, extra: []*ir.Tensor{i64(sh(0))}, wantSh: sh(), want: []float64{5}},
		{name: "length", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(1), 2)}, wantErr: true},
		{name: "negative", shape: sh(2), extra: []*ir.Tensor{i64(sh(1), -1)}, wantErr: true},
		{name: "huge", shape: sh(2), extra: []*ir.Tensor{i64(sh(1), 1<<40)}, wantErr: true},
	})
}

func TestExpand(t *testing.T) {
	runMoveCases(t, "Expand", []moveCase{
		{name: "grow rank", shape: sh(3, 1), extra: []*ir.Tensor{i64(sh(3), 2, 1, 4)}, wantSh: sh(2, 3, 4),
			want: []float64{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}},
		{name: "bidirectional", shape: sh(2, 1), extra: []*ir.Tensor{i64(sh(1), 3)}, wantSh: sh(2, 3),
			want: []float64{0, 0, 0, 1, 1, 1}},
		{name: "shape smaller", shape: sh(3), extra: []*ir.Tensor{i64(sh(1), 1)}, wantSh: sh(3), want: seq(3)},
		{name: "scalar", shape: sh(), data: []float64{7}, extra: []*ir.Tensor{i32(sh(2), 2, 1)}, wantSh: sh(2, 1),
			want: []float64{7, 7}},
		{name: "to zero", shape: sh(1), extra: []*ir.Tensor{i64(sh(1), 0)}, wantSh: sh(0), want: nil},
		{name: "incompatible", shape: sh(3), extra: []*ir.Tensor{i64(sh(1), 2)}, wantErr: true},
		{name: "negative", shape: sh(1), extra: []*ir.Tensor{i64(sh(1), -1)}, wantErr: true},
	})
}
