package vision

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// The cases marked "numpy" were computed with a standalone numpy
// transcription of the ONNX reference interpolation (literal neighbour
// search), the others by hand.
func TestResize(t *testing.T) {
	x44 := f32([]int64{1, 1, 4, 4}, seq(16)...)
	x22 := f32([]int64{1, 1, 2, 2}, seq(4)...)
	scales := func(v ...float64) *ir.Tensor { return f32([]int64{int64(len(v))}, v...) }
	tests := []struct {
		name  string
		attrs ir.Attrs
		ins   []*ir.Tensor
		shape []int64
		want  []float64
	}{
		// half_pixel, nearest: output y maps to (y+0.5)/2-0.5 = -0.25, 0.25, 0.75, 1.25.
		{"nearest up 2x", nil, []*ir.Tensor{x22, nil, scales(1, 1, 2, 2)}, []int64{1, 1, 4, 4},
			[]float64{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}},
		// linear, half_pixel: columns at -0.25 (edge: 1), 0.25, 0.75, 1.25 (edge: 2).
		{"linear up 2x", ir.Attrs{"mode": str("linear")}, []*ir.Tensor{x22, nil, scales(1, 1, 1, 2)}, []int64{1, 1, 2, 4},
			[]float64{1, 1.25, 1.75, 2, 3, 3.25, 3.75, 4}},
		// asymmetric: x/2 = 0, 0.5, 1, 1.5 -> 1, 1.5, 2, 2 (edge).
		{"linear asymmetric", ir.Attrs{"mode": str("linear"), "coordinate_transformation_mode": str("asymmetric")},
			[]*ir.Tensor{x22, nil, scales(1, 1, 1, 2)}, []int64{1, 1, 2, 4}, []float64{1, 1.5, 2, 2, 3, 3.5, 4, 4}},
		// align_corners with sizes 3: x*(2-1)/(3-1) = 0, 0.5, 1.
		{"linear align_corners sizes", ir.Attrs{"mode": str("linear"), "coordinate_transformation_mode": str("align_corners")},
			[]*ir.Tensor{x22, nil, nil, i64s(1, 1, 3, 3)}, []int64{1, 1, 3, 3}, []float64{1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}},
		// nearest ceil / floor on asymmetric x/2 = 0, 0.5, 1, 1.5.
		{"nearest ceil", ir.Attrs{"coordinate_transformation_mode": str("asymmetric"), "nearest_mode": str("ceil")},
			[]*ir.Tensor{f32([]int64{3}, 10, 20, 30), nil, scales(2)}, []int64{6}, []float64{10, 20, 20, 30, 30, 30}},
		{"nearest floor", ir.Attrs{"coordinate_transformation_mode": str("asymmetric"), "nearest_mode": str("floor")},
			[]*ir.Tensor{f32([]int64{3}, 10, 20, 30), nil, scales(2)}, []int64{6}, []float64{10, 10, 20, 20, 30, 30}},
		{"nearest round_prefer_ceil", ir.Attrs{"coordinate_transformation_mode": str("asymmetric"), "nearest_mode": str("round_prefer_ceil")},
			[]*ir.Tensor{f32([]int64{3}, 10, 20, 30), nil, scales(2)}, []int64{6}, []float64{10, 20, 20, 30, 30, 30}},
		{"nearest round_prefer_floor", ir.Attrs{"coordinate_transformation_mode": str("asymmetric")},
			[]*ir.Tensor{f32([]int64{3}, 10, 20, 30), nil, scales(2)}, []int64{6}, []float64{10, 10, 20, 20, 30, 30}},
		// pytorch_half_pixel maps a length-1 output to 0 (not -0.5): cubic
		// weights there are exactly 1 on index 0.
		{"pytorch_half_pixel to length 1", ir.Attrs{"mode": str("cubic"), "coordinate_transformation_mode": str("pytorch_half_pixel")},
			[]*ir.Tensor{f32([]int64{3}, 1, 4, 2), nil, nil, i64s(1)}, []int64{1}, []float64{1}},
		// numpy
		{"cubic 1-D up", ir.Attrs{"mode": str("cubic")}, []*ir.Tensor{f32([]int64{3}, 1, 4, 2), nil, scales(2)}, []int64{6},
			[]float64{0.68359375, 1.75, 3.53125, 3.86328125, 2.55859375, 1.7890625}},
		{"linear antialias", ir.Attrs{"mode": str("linear"), "antialias": intAttr(1)}, []*ir.Tensor{x44, nil, scales(1, 1, 0.6, 0.6)},
			[]int64{1, 1, 2, 2}, []float64{2.875, 4.5, 9.375, 11}},
		{"cubic antialias", ir.Attrs{"mode": str("cubic"), "antialias": intAttr(1)}, []*ir.Tensor{x44, nil, scales(1, 1, 0.6, 0.6)},
			[]int64{1, 1, 2, 2}, []float64{2.5180722891566183, 4.285886402753867, 9.589328743545613, 11.357142857142863}},
		{"cubic antialias A=-0.5 exclude_outside", ir.Attrs{"mode": str("cubic"), "antialias": intAttr(1), "cubic_coeff_a": flt(-0.5), "exclude_outside": intAttr(1)},
			[]*ir.Tensor{x44, nil, nil, i64s(1, 1, 3, 3)}, []int64{1, 1, 3, 3},
			[]float64{1.9496567505720817, 3.2597254004576657, 4.5697940503432495, 7.189931350114416, 8.5, 9.810068649885585, 12.430205949656752, 13.740274599542339, 15.050343249427922}},
		{"axes and not_larger", ir.Attrs{"axes": ints(3, 2), "keep_aspect_ratio_policy": str("not_larger")},
			[]*ir.Tensor{x44, nil, nil, i64s(3, 2)}, []int64{1, 1, 2, 2}, []float64{1, 3, 9, 11}},
		{"not_smaller", ir.Attrs{"mode": str("linear"), "keep_aspect_ratio_policy": str("not_smaller")},
			[]*ir.Tensor{f32([]int64{4, 4}, seq(16)...), nil, nil, i64s(2, 3)}, []int64{3, 3},
			[]float64{1.833333333333333, 3.1666666666666665, 4.5, 7.166666666666666, 8.5, 9.833333333333334, 12.5, 13.833333333333334, 15.166666666666668}},
		{"half_pixel_symmetric", ir.Attrs{"mode": str("linear"), "coordinate_transformation_mode": str("half_pixel_symmetric")},
			[]*ir.Tensor{f32([]int64{4, 4}, seq(16)...), nil, scales(0.7, 1)}, []int64{2, 4},
			[]float64{4.142857142857142, 5.142857142857142, 6.142857142857142, 7.142857142857142, 9.857142857142858, 10.857142857142858, 11.857142857142858, 12.857142857142858}},
		{"tf_crop_and_resize with extrapolation", ir.Attrs{"mode": str("linear"), "coordinate_transformation_mode": str("tf_crop_and_resize"), "extrapolation_value": flt(-1)},
			[]*ir.Tensor{f32([]int64{4, 4}, seq(16)...), f32([]int64{4}, 0.4, 0.6, 0.6, 1.4), nil, i64s(3, 3)}, []int64{3, 3},
			[]float64{7.6, 8.8, -1, 8.8, 10, -1, 10, 11.2, -1}},
		{"3-D linear", ir.Attrs{"mode": str("linear")}, []*ir.Tensor{f32([]int64{2, 2, 2}, 0, 1, 2, 3, 4, 5, 6, 7), nil, scales(1.5, 1, 2)},
			[]int64{3, 2, 4}, []float64{0, 0.25, 0.75, 1, 2, 2.25, 2.75, 3, 2, 2.25, 2.75, 3, 4, 4.25, 4.75, 5, 4, 4.25, 4.75, 5, 6, 6.25, 6.75, 7}},
		// Empty roi and scales tensors (opset 11 style) count as absent.
		// 2 -> 1 maps to 0.5, which round_prefer_floor sends to index 0.
		{"empty optional inputs", nil, []*ir.Tensor{x22, ir.NewTensor(ir.Float32, []int64{0}), ir.NewTensor(ir.Float32, []int64{0}), i64s(1, 1, 1, 1)},
			[]int64{1, 1, 1, 1}, []float64{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runOp(t, "Resize", tc.attrs, 1, tc.ins...)
			require.NoError(t, err)
			require.Equal(t, tc.ins[0].DType, out[0].DType)
			near(t, tc.want, tc.shape, out[0])
		})
	}
}

func TestResizeDTypes(t *testing.T) {
	// linear 2x along the last axis of [[10, 20]]: 10, 12.5, 17.5, 20;
	// integer outputs truncate: 10, 12, 17, 20.
	for _, tc := range []struct {
		dt   ir.DType
		want []float64
	}{
		{ir.Float64, []float64{10, 12.5, 17.5, 20}},
		{ir.Float16, []float64{10, 12.5, 17.5, 20}},
		{ir.BFloat16, []float64{10, 12.5, 17.5, 20}},
		{ir.Uint8, []float64{10, 12, 17, 20}},
		{ir.Int8, []float64{10, 12, 17, 20}},
		{ir.Int32, []float64{10, 12, 17, 20}},
		{ir.Int64, []float64{10, 12, 17, 20}},
	} {
		x := ir.FromFloat64(tc.dt, []int64{1, 2}, []float64{10, 20})
		out, err := runOp(t, "Resize", ir.Attrs{"mode": str("linear")}, 1, x, nil, f32([]int64{2}, 1, 2))
		require.NoError(t, err, "%v", tc.dt)
		require.Equal(t, tc.dt, out[0].DType)
		near(t, tc.want, []int64{1, 4}, out[0])
	}
}

func TestResizeErrors(t *testing.T) {
	x := f32([]int64{1, 2}, 1, 2)
	sc := f32([]int64{2}, 1, 2)
	tests := []struct {
		name        string
		attrs       ir.Attrs
		ins         []*ir.Tensor
		unsupported bool
	}{
		{"no scales or sizes", nil, []*ir.Tensor{x}, false},
		{"both scales and sizes", nil, []*ir.Tensor{x, nil, sc, i64s(1, 4)}, false},
		{"scales length", nil, []*ir.Tensor{x, nil, f32([]int64{1}, 2)}, false},
		{"zero scale", nil, []*ir.Tensor{x, nil, f32([]int64{2}, 1, 0)}, false},
		{"negative size", nil, []*ir.Tensor{x, nil, nil, i64s(1, -1)}, false},
		{"sizes not integer", nil, []*ir.Tensor{x, nil, nil, f32([]int64{2}, 1, 4)}, false},
		{"bad axes", ir.Attrs{"axes": ints(2)}, []*ir.Tensor{x, nil, f32([]int64{1}, 2)}, false},
		{"tf_crop_and_resize without roi", ir.Attrs{"coordinate_transformation_mode": str("tf_crop_and_resize")}, []*ir.Tensor{x, nil, sc}, false},
		{"roi length", ir.Attrs{"coordinate_transformation_mode": str("tf_crop_and_resize")}, []*ir.Tensor{x, f32([]int64{2}, 0, 1), sc}, false},
		{"mode", ir.Attrs{"mode": str("area")}, []*ir.Tensor{x, nil, sc}, true},
		{"coordinate mode", ir.Attrs{"coordinate_transformation_mode": str("weird")}, []*ir.Tensor{x, nil, sc}, true},
		{"nearest_mode", ir.Attrs{"nearest_mode": str("nearest_even")}, []*ir.Tensor{x, nil, sc}, true},
		{"antialias nearest", ir.Attrs{"antialias": intAttr(1)}, []*ir.Tensor{x, nil, sc}, true},
		{"policy", ir.Attrs{"keep_aspect_ratio_policy": str("fit")}, []*ir.Tensor{x, nil, nil, i64s(1, 4)}, true},
		{"bool input", nil, []*ir.Tensor{ir.NewTensor(ir.Bool, []int64{1, 2}), nil, sc}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runOp(t, "Resize", tc.attrs, 1, tc.ins...)
			require.Error(t, err)
			require.Equal(t, tc.unsupported, errors.Is(err, ir.ErrUnsupported), "%v", err)
		})
	}
}
