package layout

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func TestPad(t *testing.T) {
	cases := []struct {
		name   string
		mode   string
		x      shapedVals
		pads   []int64
		value  *float64 // constant_value, in the dtype under test
		axes   *ir.Tensor
		want   shapedVals
		errUns bool // expect ir.ErrUnsupported
		err    bool
	}{
		{name: "constant value", x: shapedVals{sh(2, 3), seq(6)}, pads: []int64{0, 1, 1, 0}, value: ptr(9),
			want: shapedVals{sh(3, 4), []float64{9, 0, 1, 2, 9, 3, 4, 5, 9, 9, 9, 9}}},
		{name: "constant default zero", mode: "constant", x: shapedVals{sh(1, 2), []float64{5, 6}}, pads: []int64{1, 0, 0, 1},
			want: shapedVals{sh(2, 3), []float64{0, 0, 0, 5, 6, 0}}},
		{name: "reflect", mode: "reflect", x: shapedVals{sh(2, 3), seq(6)}, pads: []int64{0, 2, 0, 2},
			want: shapedVals{sh(2, 7), []float64{2, 1, 0, 1, 2, 1, 0, 5, 4, 3, 4, 5, 4, 3}}},
		{name: "reflect beyond dim", mode: "reflect", x: shapedVals{sh(3), seq(3)}, pads: []int64{5, 5},
			want: shapedVals{sh(13), []float64{1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1}}},
		{name: "reflect size 1", mode: "reflect", x: shapedVals{sh(1), []float64{7}}, pads: []int64{2, 2},
			want: shapedVals{sh(5), []float64{7, 7, 7, 7, 7}}},
		{name: "edge", mode: "edge", x: shapedVals{sh(3), seq(3)}, pads: []int64{1, 2},
			want: shapedVals{sh(6), []float64{0, 0, 1, 2, 2, 2}}},
		{name: "wrap", mode: "wrap", x: shapedVals{sh(2, 3), seq(6)}, pads: []int64{0, 2, 0, 1},
			want: shapedVals{sh(2, 6), []float64{1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3}}},
		{name: "wrap beyond dim", mode: "wrap", x: shapedVals{sh(3), seq(3)}, pads: []int64{5, 5},
			want: shapedVals{sh(13), []float64{1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1}}},
		{name: "negative crops", x: shapedVals{sh(2, 3), seq(6)}, pads: []int64{0, -1, 0, 1}, value: ptr(7),
			want: shapedVals{sh(2, 3), []float64{1, 2, 7, 4, 5, 7}}},
		{name: "crop then reflect", mode: "reflect", x: shapedVals{sh(4), seq(4)}, pads: []int64{-1, 2},
			want: shapedVals{sh(5), []float64{1, 2, 3, 2, 1}}},
		{name: "axes", x: shapedVals{sh(2, 3), []float64{1, 2, 3, 4, 5, 6}}, pads: []int64{1, 1}, axes: i64(sh(1), -1),
			want: shapedVals{sh(2, 5), []float64{0, 1, 2, 3, 0, 0, 4, 5, 6, 0}}},
		{name: "zero-sized constant", x: shapedVals{sh(0, 2), nil}, pads: []int64{1, 0, 0, 0}, value: ptr(3),
			want: shapedVals{sh(1, 2), []float64{3, 3}}},
		{name: "edge on empty", mode: "edge", x: shapedVals{sh(0), nil}, pads: []int64{1, 1}, err: true},
		{name: "pads length", x: shapedVals{sh(2), seq(2)}, pads: []int64{1}, err: true},
		{name: "crop too much", x: shapedVals{sh(2), seq(2)}, pads: []int64{-2, -1}, err: true},
		{name: "bad mode", mode: "mirror", x: shapedVals{sh(2), seq(2)}, pads: []int64{1, 1}, errUns: true},
	}
	for _, c := range cases {
		for _, dt := range allDTypes {
			a := attrs()
			if c.mode != "" {
				a = attrs(ir.Str("mode", c.mode))
			}
			var cv *ir.Tensor
			if c.value != nil {
				cv = tens(dt, sh(), *c.value)
			}
			out, err := runOp("Pad", a, 1, tens(dt, c.x.shape, c.x.vals...), i64(sh(int64(len(c.pads))), c.pads...), cv, c.axes)
			switch {
			case c.errUns:
				require.True(t, errors.Is(err, ir.ErrUnsupported), "%s/%v: %v", c.name, dt, err)
			case c.err:
				require.Error(t, err, "%s/%v", c.name, dt)
			default:
				require.NoError(t, err, "%s/%v", c.name, dt)
				requireTensor(t, tens(dt, c.want.shape, c.want.vals...), out[0], "%s/%v", c.name, dt)
			}
		}
	}
	_, err := runOp("Pad", nil, 1, f32(sh(2), 1, 2), i64(sh(2), 1, 1), i64(sh(), 0))
	require.Error(t, err, "constant_value dtype must match data")
}

func ptr(v float64) *float64 { return &v }

func TestCenterCropPad(t *testing.T) {
	runMoveCases(t, "CenterCropPad", []moveCase{
		{name: "crop both", shape: sh(4, 5), extra: []*ir.Tensor{i64(sh(2), 2, 3)}, wantSh: sh(2, 3),
			want: []float64{6, 7, 8, 11, 12, 13}},
		{name: "pad both", shape: sh(2, 3), data: []float64{1, 2, 3, 4, 5, 6}, extra: []*ir.Tensor{i64(sh(2), 3, 5)},
			wantSh: sh(3, 5), want: []float64{0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0, 0}},
		{name: "crop odd, axes -1", attrs: attrs(ir.Ints("axes", -1)), shape: sh(2, 4), extra: []*ir.Tensor{i64(sh(1), 3)},
			wantSh: sh(2, 3), want: []float64{0, 1, 2, 4, 5, 6}},
		{name: "pad odd, axes 0", attrs: attrs(ir.Ints("axes", 0)), shape: sh(1, 2), data: []float64{5, 6},
			extra: []*ir.Tensor{i32(sh(1), 4)}, wantSh: sh(4, 2), want: []float64{0, 0, 5, 6, 0, 0, 0, 0}},
		{name: "crop and pad", shape: sh(3, 1), data: []float64{1, 2, 3}, extra: []*ir.Tensor{i64(sh(2), 1, 3)},
			wantSh: sh(1, 3), want: []float64{0, 2, 0}},
		{name: "to zero", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(2), 0, 2)}, wantSh: sh(0, 2), want: nil},
		{name: "shape length", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(1), 1)}, wantErr: true},
		{name: "negative target", shape: sh(2), extra: []*ir.Tensor{i64(sh(1), -1)}, wantErr: true},
	})
}
