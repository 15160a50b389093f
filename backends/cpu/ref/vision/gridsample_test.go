package vision

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestGridSample(t *testing.T) {
	x22 := f32([]int64{1, 1, 2, 2}, 1, 2, 3, 4)
	x15 := f32([]int64{1, 1, 1, 5}, 1, 2, 3, 4, 5)
	// grid points are (x, y) pairs.
	grid := func(pts ...float64) *ir.Tensor { return f32([]int64{1, 1, int64(len(pts) / 2), 2}, pts...) }
	tests := []struct {
		name  string
		attrs ir.Attrs
		x, g  *ir.Tensor
		want  []float64
	}{
		// align_corners: ±1 are the corner pixel centres; 0 is the middle.
		{"bilinear align_corners", ir.Attrs{"align_corners": intAttr(1)}, x22, grid(-1, -1, 1, 1, 0, 0, 1, -1),
			[]float64{1, 4, 2.5, 2}},
		// Without: -1 is the outer edge (-0.5 px), half of each tap outside.
		{"bilinear zeros", nil, x22, grid(0, 0, -1, -1), []float64{2.5, 0.25}},
		{"bilinear border", ir.Attrs{"padding_mode": str("border")}, x22, grid(0, 0, -1, -1, 3, 0), []float64{2.5, 1, 3}},
		{"bilinear reflection", ir.Attrs{"padding_mode": str("reflection")}, x22, grid(-1, -1, 2, -0.5), []float64{1, 1.5}},
		{"linear (opset 20 name)", ir.Attrs{"mode": str("linear")}, x22, grid(0, 0), []float64{2.5}},
		// nearest: x = 0.7 -> 1, y = 0.3 -> 0; an exact .5 rounds to even.
		{"nearest", ir.Attrs{"mode": str("nearest")}, x22, grid(0.2, -0.2, 0, 0), []float64{2, 1}},
		// bicubic at x = 0.25 px (grid -0.875 over 5 columns, aligned), row 0:
		// weights c(1.25), c(0.25), c(0.75), c(1.75) over taps -1..2.
		{"bicubic zeros", ir.Attrs{"mode": str("bicubic"), "align_corners": intAttr(1)}, x15, grid(-0.875, 0), []float64{1.296875}},
		{"bicubic border", ir.Attrs{"mode": str("bicubic"), "align_corners": intAttr(1), "padding_mode": str("border")}, x15, grid(-0.875, 0), []float64{1.19140625}},
		{"cubic reflection", ir.Attrs{"mode": str("cubic"), "align_corners": intAttr(1), "padding_mode": str("reflection")}, x15, grid(-0.875, 0), []float64{1.0859375}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runOp(t, "GridSample", tc.attrs, 1, tc.x, tc.g)
			require.NoError(t, err)
			near(t, tc.want, []int64{1, 1, 1, int64(len(tc.want))}, out[0])
		})
	}
}

func TestGridSampleShapesAndDims(t *testing.T) {
	// Two channels, a 2x1 output grid: both channels sample the same points.
	x := f32([]int64{1, 2, 2, 2}, 1, 2, 3, 4, 10, 20, 30, 40)
	g := f32([]int64{1, 2, 1, 2}, -1, -1, 1, 1)
	out, err := runOp(t, "GridSample", ir.Attrs{"align_corners": intAttr(1)}, 1, x, g)
	require.NoError(t, err)
	near(t, []float64{1, 4, 10, 40}, []int64{1, 2, 2, 1}, out[0])

	// 3-D nearest rounds half away from zero (x = 0.5 -> 1), 2-D to even (-> 0).
	x3 := f32([]int64{1, 1, 1, 1, 2}, 1, 2)
	g3 := f32([]int64{1, 1, 1, 1, 3}, 0, 0, 0)
	out, err = runOp(t, "GridSample", ir.Attrs{"mode": str("nearest")}, 1, x3, g3)
	require.NoError(t, err)
	near(t, []float64{2}, []int64{1, 1, 1, 1, 1}, out[0])
	out, err = runOp(t, "GridSample", ir.Attrs{"mode": str("nearest")}, 1, f32([]int64{1, 1, 1, 2}, 1, 2), f32([]int64{1, 1, 1, 2}, 0, 0))
	require.NoError(t, err)
	near(t, []float64{1}, []int64{1, 1, 1, 1}, out[0])

	// f64 data, f16 grid.
	out, err = runOp(t, "GridSample", nil, 1, ir.FromFloat64(ir.Float64, []int64{1, 1, 2, 2}, []float64{1, 2, 3, 4}),
		ir.FromFloat64(ir.Float16, []int64{1, 1, 1, 2}, []float64{0, 0}))
	require.NoError(t, err)
	require.Equal(t, ir.Float64, out[0].DType)
	near(t, []float64{2.5}, []int64{1, 1, 1, 1}, out[0])
}

func TestGridSampleErrors(t *testing.T) {
	x := f32([]int64{1, 1, 2, 2}, 1, 2, 3, 4)
	g := f32([]int64{1, 1, 1, 2}, 0, 0)
	tests := []struct {
		name        string
		attrs       ir.Attrs
		x, g        *ir.Tensor
		unsupported bool
	}{
		{"grid last dim", nil, x, f32([]int64{1, 1, 1, 3}, 0, 0, 0), false},
		{"grid batch", nil, x, f32([]int64{2, 1, 1, 2}, 0, 0, 0, 0), false},
		{"grid rank", nil, x, f32([]int64{1, 2}, 0, 0), false},
		{"X rank", nil, f32([]int64{2}, 1, 2), g, false},
		{"integer grid", nil, x, ir.FromInt64([]int64{1, 1, 1, 2}, []int64{0, 0}), false},
		{"mode", ir.Attrs{"mode": str("area")}, x, g, true},
		{"padding", ir.Attrs{"padding_mode": str("wrap")}, x, g, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runOp(t, "GridSample", tc.attrs, 1, tc.x, tc.g)
			require.Error(t, err)
			require.Equal(t, tc.unsupported, errors.Is(err, ir.ErrUnsupported), "%v", err)
		})
	}
}
