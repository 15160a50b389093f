package nn

import (
	"math"
	"testing"

	"github.com/weftrt/weft/ir"
)

func TestMaxUnpool(t *testing.T) {
	x := f32(sh(1, 1, 2, 2), 1, 2, 3, 4)
	ind := f(ir.Int64, sh(1, 1, 2, 2), 5, 7, 13, 15)
	k2s2 := a(ir.Ints("kernel_shape", 2, 2), ir.Ints("strides", 2, 2))
	out := run(t, "MaxUnpool", k2s2, 1, x, ind)
	expect(t, out[0], ir.Float32, sh(1, 1, 4, 4), 0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4)
	// With output_shape the indices still address the inferred 4x4 shape,
	// which lands in the top-left corner of the 5x5 output (ONNX doc example).
	out = run(t, "MaxUnpool", k2s2, 1, x, ind, f(ir.Int64, sh(4), 1, 1, 5, 5))
	want := make([]float64, 25)
	want[6], want[8], want[16], want[18] = 1, 2, 3, 4
	expect(t, out[0], ir.Float32, sh(1, 1, 5, 5), 0, want...)
	// output_shape ignores pads: inferred 1-D size (2-1)*2 + 2 = 4, output 5.
	out = run(t, "MaxUnpool", a(ir.Ints("kernel_shape", 2), ir.Ints("strides", 2), ir.Ints("pads", 1, 1)), 1,
		f32(sh(1, 1, 2), 7, 8), f(ir.Int64, sh(1, 1, 2), 0, 3), f(ir.Int64, sh(3), 1, 1, 5))
	expect(t, out[0], ir.Float32, sh(1, 1, 5), 0, 7, 0, 0, 8, 0)
	expectErr(t, false, "MaxUnpool", k2s2, 1, x, ind, f(ir.Int64, sh(4), 1, 1, 3, 5))
	// pads shrink the default shape: (2-1)*2 + 3 - 1 - 0 = 4; 1-D, two channels.
	out = run(t, "MaxUnpool", a(ir.Ints("kernel_shape", 3), ir.Ints("strides", 2), ir.Ints("pads", 1, 0)), 1,
		f(ir.Float64, sh(1, 2, 2), 1, 2, 3, 4), f(ir.Int64, sh(1, 2, 2), 0, 3, 5, 6))
	expect(t, out[0], ir.Float64, sh(1, 2, 4), 0, 1, 0, 0, 2, 0, 3, 4, 0)
	expectErr(t, false, "MaxUnpool", k2s2, 1, x, f(ir.Int64, sh(1, 1, 2, 2), 5, 7, 13, 16))
	expectErr(t, false, "MaxUnpool", k2s2, 1, x, f(ir.Int64, sh(1, 1, 2, 2), -1, 7, 13, 15))
	expectErr(t, false, "MaxUnpool", k2s2, 1, x, f(ir.Int32, sh(1, 1, 2, 2)))
	expectErr(t, false, "MaxUnpool", k2s2, 1, x, ind, f(ir.Int64, sh(2), 4, 4))
	expectErr(t, false, "MaxUnpool", a(ir.Ints("kernel_shape", 2)), 1, x, ind)
}

func TestMaxUnpoolInvertsMaxPool(t *testing.T) {
	x := f32(sh(1, 2, 2, 4), 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3)
	attrs := a(ir.Ints("kernel_shape", 2, 2), ir.Ints("strides", 2, 2))
	p := run(t, "MaxPool", attrs, 2, x)
	out := run(t, "MaxUnpool", attrs, 1, p[0], p[1])
	// every pooled maximum lands back where it came from, the rest is zero
	want := []float64{0, 0, 0, 0, 0, 9, 0, 6, 0, 0, 0, 0, 9, 0, 9, 0}
	expect(t, out[0], ir.Float32, sh(1, 2, 2, 4), 0, want...)
}

func TestMaxRoiPool(t *testing.T) {
	x := iota32(1, 1, 1, 4, 4)
	cases := []struct {
		name   string
		attrs  []ir.AttrOption
		rois   *ir.Tensor
		shape  []int64
		want   []float64
		errStr bool
	}{
		{"whole", a(ir.Ints("pooled_shape", 2, 2)), f32(sh(1, 5), 0, 0, 0, 3, 3), sh(1, 1, 2, 2), []float64{6, 8, 14, 16}, false},
		{"scaled", a(ir.Ints("pooled_shape", 2, 2), ir.Float("spatial_scale", 0.5)), f32(sh(1, 5), 0, 0, 0, 6, 6), sh(1, 1, 2, 2),
			[]float64{6, 8, 14, 16}, false},
		// 3x3 roi in 2x2 bins of 1.5: rows/cols {0,1} and {1,2}
		{"overlapping bins", a(ir.Ints("pooled_shape", 2, 2)), f32(sh(1, 5), 0, 0, 0, 2, 2), sh(1, 1, 2, 2), []float64{6, 7, 10, 11}, false},
		{"two rois", a(ir.Ints("pooled_shape", 1, 1)), f32(sh(2, 5), 0, 1, 1, 2, 2, 0, 0.5, 0, 0.5, 0), sh(2, 1, 1, 1),
			[]float64{11, 2}, false},
		// roi partly outside: bins past the input are empty (0)
		{"outside", a(ir.Ints("pooled_shape", 1, 2)), f32(sh(1, 5), 0, 3, 3, 6, 3), sh(1, 1, 1, 2), []float64{16, 0}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, "MaxRoiPool", c.attrs, 1, x, c.rois)
			expect(t, out[0], ir.Float32, c.shape, 0, c.want...)
		})
	}
	expectErr(t, false, "MaxRoiPool", a(ir.Ints("pooled_shape", 1, 1)), 1, x, f32(sh(1, 5), 1, 0, 0, 1, 1))
	expectErr(t, false, "MaxRoiPool", a(ir.Ints("pooled_shape", 1, 1)), 1, x, f32(sh(1, 4)))
	expectErr(t, false, "MaxRoiPool", nil, 1, x, f32(sh(1, 5)))
}

func TestLpNormalization(t *testing.T) {
	x := f32(sh(2, 2), 3, 4, 0, 5)
	out := run(t, "LpNormalization", nil, 1, x)
	expect(t, out[0], ir.Float32, sh(2, 2), 1e-6, 0.6, 0.8, 0, 1)
	out = run(t, "LpNormalization", a(ir.Int("axis", 0)), 1, x)
	r := math.Sqrt(41)
	expect(t, out[0], ir.Float32, sh(2, 2), 1e-6, 1, 4/r, 0, 5/r)
	out = run(t, "LpNormalization", a(ir.Int("p", 1), ir.Int("axis", 1)), 1, f(ir.Float64, sh(2, 2), 3, -4, 0, 5))
	expect(t, out[0], ir.Float64, sh(2, 2), 1e-12, 3.0/7, -4.0/7, 0, 1)
	out = run(t, "LpNormalization", a(ir.Int("axis", 1)), 1, f32(sh(1, 2, 2), 3, 0, 4, 0))
	expect(t, out[0], ir.Float32, sh(1, 2, 2), 1e-6, 0.6, math.NaN(), 0.8, math.NaN())
	expectErr(t, false, "LpNormalization", a(ir.Int("p", 3)), 1, x)
	expectErr(t, false, "LpNormalization", a(ir.Int("axis", 2)), 1, x)
	expectErr(t, true, "LpNormalization", nil, 1, f(ir.Int32, sh(2)))
}
