package vision

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func TestRoiAlign(t *testing.T) {
	x := f32([]int64{2, 1, 2, 2}, 1, 2, 3, 4, 10, 20, 30, 40)
	legacy := str("output_half_pixel")
	tests := []struct {
		name  string
		attrs ir.Attrs
		rois  []float64
		batch []int64
		shape []int64
		want  []float64
	}{
		// One sample at the roi centre (0.5, 0.5): the mean of the 4 pixels.
		{"legacy centre", ir.Attrs{"coordinate_transformation_mode": legacy, "sampling_ratio": intAttr(1)},
			[]float64{0, 0, 1, 1}, []int64{0}, []int64{1, 1, 1, 1}, []float64{2.5}},
		// 2x2 samples at 0.25/0.75 give 1.75, 2.25, 2.75, 3.25: mean 2.5.
		{"legacy avg 2x2 samples", ir.Attrs{"coordinate_transformation_mode": legacy, "sampling_ratio": intAttr(2)},
			[]float64{0, 0, 1, 1}, []int64{0}, []int64{1, 1, 1, 1}, []float64{2.5}},
		// max of the weighted corners w·v over all samples: 0.75·0.75·4 = 2.25.
		{"legacy max", ir.Attrs{"coordinate_transformation_mode": legacy, "sampling_ratio": intAttr(2), "mode": str("max")},
			[]float64{0, 0, 1, 1}, []int64{0}, []int64{1, 1, 1, 1}, []float64{2.25}},
		// half_pixel shifts the roi by -0.5: the single sample lands on pixel (0, 0).
		{"half_pixel", ir.Attrs{"sampling_ratio": intAttr(1)},
			[]float64{0, 0, 1, 1}, []int64{0}, []int64{1, 1, 1, 1}, []float64{1}},
		// spatial_scale 0.5 maps (0,0,4,2) to (0,0,2,1); two bins of 1x1 with
		// samples at (0.5, 0.5) -> 2.5 and (0.5, 1.5) -> clamped to column 1 -> 3.
		{"scale and clamp", ir.Attrs{"coordinate_transformation_mode": legacy, "sampling_ratio": intAttr(1), "spatial_scale": flt(0.5), "output_width": intAttr(2)},
			[]float64{0, 0, 4, 2}, []int64{0}, []int64{1, 1, 1, 2}, []float64{2.5, 3}},
		// adaptive sampling (ratio 0): ceil(1/1) = 1 sample per bin.
		{"batch index and adaptive sampling", ir.Attrs{"coordinate_transformation_mode": legacy},
			[]float64{0, 0, 1, 1}, []int64{1}, []int64{1, 1, 1, 1}, []float64{25}},
		// A sample more than a pixel outside the image counts as 0.
		{"outside", ir.Attrs{"sampling_ratio": intAttr(1)},
			[]float64{4, 4, 6, 6}, []int64{0}, []int64{1, 1, 1, 1}, []float64{0}},
		{"two rois", ir.Attrs{"coordinate_transformation_mode": legacy, "sampling_ratio": intAttr(1)},
			[]float64{0, 0, 1, 1, 0, 0, 1, 1}, []int64{0, 1}, []int64{2, 1, 1, 1}, []float64{2.5, 25}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nr := int64(len(tc.batch))
			out, err := runOp(t, "RoiAlign", tc.attrs, 1, x, f32([]int64{nr, 4}, tc.rois...), i64s(tc.batch...))
			require.NoError(t, err)
			near(t, tc.want, tc.shape, out[0])
		})
	}
}

// TestRoiAlignOutputHalfPixel: what the importer sets for RoiAlign before
// opset 16 (which had no coordinate_transformation_mode).
func TestRoiAlignOutputHalfPixel(t *testing.T) {
	g := ir.NewGraph("g")
	g.Opsets = map[string]int64{"": 10}
	x := f32([]int64{1, 1, 2, 2}, 1, 2, 3, 4)
	ins := []*ir.Tensor{x, f32([]int64{1, 4}, 0, 0, 1, 1), i64s(0)}
	env := backends.NewEnv(nil)
	var vals []*ir.Value
	for _, t := range ins {
		v := g.AddInput("", t.DType, ir.ShapeOf(t.Shape))
		env.Set(v, t)
		vals = append(vals, v)
	}
	n := g.AddNode("RoiAlign", "", vals, 1, ir.Attrs{"sampling_ratio": intAttr(1),
		"coordinate_transformation_mode": {Kind: ir.AttrString, Str: "output_half_pixel"}})
	require.NoError(t, ref.RunNode(&ref.Context{Env: env}, n))
	near(t, []float64{2.5}, []int64{1, 1, 1, 1}, env.Get(n.Outputs[0])) // half_pixel would give 1
}

func TestRoiAlignErrors(t *testing.T) {
	x := f32([]int64{1, 1, 2, 2}, 1, 2, 3, 4)
	rois := f32([]int64{1, 4}, 0, 0, 1, 1)
	tests := []struct {
		name        string
		attrs       ir.Attrs
		ins         []*ir.Tensor
		unsupported bool
	}{
		{"batch index out of range", nil, []*ir.Tensor{x, rois, i64s(1)}, false},
		{"rois shape", nil, []*ir.Tensor{x, f32([]int64{1, 3}, 0, 0, 1), i64s(0)}, false},
		{"batch_indices length", nil, []*ir.Tensor{x, rois, i64s(0, 0)}, false},
		{"X rank", nil, []*ir.Tensor{f32([]int64{2, 2}, 1, 2, 3, 4), rois, i64s(0)}, false},
		{"output size", ir.Attrs{"output_height": intAttr(0)}, []*ir.Tensor{x, rois, i64s(0)}, false},
		{"mode", ir.Attrs{"mode": str("sum")}, []*ir.Tensor{x, rois, i64s(0)}, true},
		{"coordinate mode", ir.Attrs{"coordinate_transformation_mode": str("corner")}, []*ir.Tensor{x, rois, i64s(0)}, true},
		{"integer X", nil, []*ir.Tensor{ir.FromInt64([]int64{1, 1, 1, 1}, []int64{1}), rois, i64s(0)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runOp(t, "RoiAlign", tc.attrs, 1, tc.ins...)
			require.Error(t, err)
			require.Equal(t, tc.unsupported, errors.Is(err, ir.ErrUnsupported), "%v", err)
		})
	}
}
