package nn

import (
	"math"
	"testing"

	"github.com/weftrt/weft/ir"
)

func TestMaxPool(t *testing.T) {
	x16 := iota32(1, 1, 1, 4, 4)
	cases := []struct {
		name  string
		attrs []ir.AttrOption
		x     *ir.Tensor
		shape []int64
		want  []float64
		ind   []float64 // nil: not checked
	}{
		{"2d k2 s2", a(ir.Ints("kernel_shape", 2, 2), ir.Ints("strides", 2, 2)), x16, sh(1, 1, 2, 2),
			[]float64{6, 8, 14, 16}, []float64{5, 7, 13, 15}},
		// column-major indices: (h, w) -> h + w*H
		{"2d storage order 1", a(ir.Ints("kernel_shape", 2, 2), ir.Ints("strides", 2, 2), ir.Int("storage_order", 1)), x16, sh(1, 1, 2, 2),
			[]float64{6, 8, 14, 16}, []float64{5, 13, 7, 15}},
		// ONNX doc example: ceil_mode keeps the partial last window.
		{"2d ceil", a(ir.Ints("kernel_shape", 3, 3), ir.Ints("strides", 2, 2), ir.Int("ceil_mode", 1)), x16, sh(1, 1, 2, 2),
			[]float64{11, 12, 15, 16}, []float64{10, 11, 14, 15}},
		{"2d floor", a(ir.Ints("kernel_shape", 3, 3), ir.Ints("strides", 2, 2)), x16, sh(1, 1, 1, 1),
			[]float64{11}, nil},
		{"2d dilations", a(ir.Ints("kernel_shape", 2, 2), ir.Ints("dilations", 2, 2)), x16, sh(1, 1, 2, 2),
			[]float64{11, 12, 15, 16}, []float64{10, 11, 14, 15}},
		{"1d ceil odd", a(ir.Ints("kernel_shape", 2), ir.Ints("strides", 2), ir.Int("ceil_mode", 1)), f32(sh(1, 1, 5), 1, 5, 2, 4, 3), sh(1, 1, 3),
			[]float64{5, 4, 3}, []float64{1, 3, 4}},
		// ceil would give 3 windows, but the third would start in the end padding.
		{"1d ceil drops window in padding", a(ir.Ints("kernel_shape", 2), ir.Ints("strides", 2), ir.Ints("pads", 1, 1), ir.Int("ceil_mode", 1)),
			f32(sh(1, 1, 3), 1, 2, 3), sh(1, 1, 2), []float64{1, 3}, []float64{0, 2}},
		// padding never wins, even over negative values
		{"1d pads negative values", a(ir.Ints("kernel_shape", 2), ir.Ints("pads", 1, 1)), f32(sh(1, 1, 3), -3, -1, -2), sh(1, 1, 4),
			[]float64{-3, -1, -1, -2}, []float64{0, 1, 1, 2}},
		{"1d same upper", a(ir.Ints("kernel_shape", 2), ir.Str("auto_pad", "SAME_UPPER")), f32(sh(1, 1, 4), 1, 2, 3, 4), sh(1, 1, 4),
			[]float64{2, 3, 4, 4}, nil},
		{"1d same lower", a(ir.Ints("kernel_shape", 2), ir.Str("auto_pad", "SAME_LOWER")), f32(sh(1, 1, 4), 1, 2, 3, 4), sh(1, 1, 4),
			[]float64{1, 2, 3, 4}, nil},
		{"1d valid", a(ir.Ints("kernel_shape", 2), ir.Ints("strides", 3), ir.Str("auto_pad", "VALID")), f32(sh(1, 1, 5), 1, 2, 3, 4, 5), sh(1, 1, 2),
			[]float64{2, 5}, nil},
		{"ties pick first", a(ir.Ints("kernel_shape", 3)), f32(sh(1, 1, 3), 7, 7, 7), sh(1, 1, 1), []float64{7}, []float64{0}},
		{"int8", a(ir.Ints("kernel_shape", 2), ir.Ints("strides", 2)), f(ir.Int8, sh(1, 1, 4), -5, -3, -4, -10), sh(1, 1, 2),
			[]float64{-3, -4}, []float64{1, 2}},
		{"uint8 channels", a(ir.Ints("kernel_shape", 2)), f(ir.Uint8, sh(1, 2, 2), 1, 255, 7, 3), sh(1, 2, 1),
			[]float64{255, 7}, []float64{1, 2}},
		{"3d", a(ir.Ints("kernel_shape", 2, 2, 2)), iota32(1, 1, 1, 2, 2, 2), sh(1, 1, 1, 1, 1), []float64{8}, []float64{7}},
		// max at (d=1, h=0, w=0): row-major 4, column-major d + h*D + w*D*H = 1.
		{"3d storage order 1", a(ir.Ints("kernel_shape", 2, 2, 2), ir.Int("storage_order", 1)),
			f32(sh(1, 1, 2, 2, 2), 0, 0, 0, 0, 9, 0, 0, 0), sh(1, 1, 1, 1, 1), []float64{9}, []float64{1}},
		{"f16", a(ir.Ints("kernel_shape", 2)), f(ir.Float16, sh(1, 1, 2), 0.5, -1), sh(1, 1, 1), []float64{0.5}, nil},
		{"f64 batch", a(ir.Ints("kernel_shape", 2)), f(ir.Float64, sh(2, 1, 2), 0.5, -1, 3, 4), sh(2, 1, 1), []float64{0.5, 4}, []float64{0, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, "MaxPool", c.attrs, 2, c.x)
			expect(t, out[0], c.x.DType, c.shape, 0, c.want...)
			if c.ind != nil {
				expect(t, out[1], ir.Int64, c.shape, 0, c.ind...)
			}
			one := run(t, "MaxPool", c.attrs, 1, c.x)
			expect(t, one[0], c.x.DType, c.shape, 0, c.want...)
		})
	}
	expectErr(t, false, "MaxPool", nil, 1, x16)
	expectErr(t, false, "MaxPool", a(ir.Ints("kernel_shape", 2)), 1, x16)
	expectErr(t, false, "MaxPool", a(ir.Ints("kernel_shape", 2, 2), ir.Int("storage_order", 2)), 1, x16)
	expectErr(t, false, "MaxPool", a(ir.Ints("kernel_shape", 5, 5)), 1, x16)
	expectErr(t, false, "MaxPool", a(ir.Ints("kernel_shape", 1), ir.Ints("pads", 1, 1)), 1, f32(sh(1, 1, 2)))
	expectErr(t, false, "MaxPool", a(ir.Ints("kernel_shape", 2)), 1, f32(sh(4, 4)))
	expectErr(t, true, "MaxPool", a(ir.Ints("kernel_shape", 2)), 1, f(ir.Int32, sh(1, 1, 4)))
}

func TestAveragePool(t *testing.T) {
	x5 := f32(sh(1, 1, 5), 1, 2, 3, 4, 5)
	cases := []struct {
		name  string
		attrs []ir.AttrOption
		x     *ir.Tensor
		shape []int64
		want  []float64
	}{
		{"pads exclude", a(ir.Ints("kernel_shape", 3), ir.Ints("pads", 1, 1)), x5, sh(1, 1, 5), []float64{1.5, 2, 3, 4, 4.5}},
		{"pads include", a(ir.Ints("kernel_shape", 3), ir.Ints("pads", 1, 1), ir.Int("count_include_pad", 1)), x5, sh(1, 1, 5),
			[]float64{1, 2, 3, 4, 3}},
		{"ceil", a(ir.Ints("kernel_shape", 2), ir.Ints("strides", 2), ir.Int("ceil_mode", 1)), x5, sh(1, 1, 3), []float64{1.5, 3.5, 5}},
		// the part of a ceil window past the end padding is not counted
		{"ceil include pad", a(ir.Ints("kernel_shape", 2), ir.Ints("strides", 2), ir.Int("ceil_mode", 1), ir.Int("count_include_pad", 1)),
			x5, sh(1, 1, 3), []float64{1.5, 3.5, 5}},
		{"dilations", a(ir.Ints("kernel_shape", 2), ir.Ints("dilations", 2)), x5, sh(1, 1, 3), []float64{2, 3, 4}},
		{"same upper", a(ir.Ints("kernel_shape", 2), ir.Str("auto_pad", "SAME_UPPER")), f32(sh(1, 1, 3), 1, 2, 4), sh(1, 1, 3),
			[]float64{1.5, 3, 4}},
		{"same lower include pad", a(ir.Ints("kernel_shape", 2), ir.Str("auto_pad", "SAME_LOWER"), ir.Int("count_include_pad", 1)),
			f32(sh(1, 1, 3), 1, 2, 4), sh(1, 1, 3), []float64{0.5, 1.5, 3}},
		{"2d", a(ir.Ints("kernel_shape", 2, 2)), iota32(1, 1, 1, 3, 3), sh(1, 1, 2, 2), []float64{3, 4, 6, 7}},
		{"2d strides pads", a(ir.Ints("kernel_shape", 2, 2), ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 0, 0)), iota32(1, 1, 1, 3, 3),
			sh(1, 1, 2, 2), []float64{1, 2.5, 5.5, 7}},
		{"3d", a(ir.Ints("kernel_shape", 2, 2, 2)), iota32(1, 1, 2, 2, 2, 2), sh(1, 2, 1, 1, 1), []float64{4.5, 12.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, "AveragePool", c.attrs, 1, c.x)
			expect(t, out[0], ir.Float32, c.shape, 1e-6, c.want...)
		})
	}
	for _, dt := range []ir.DType{ir.Float64, ir.Float16} {
		out := run(t, "AveragePool", a(ir.Ints("kernel_shape", 2)), 1, f(dt, sh(1, 1, 3), 1, 2, 4))
		expect(t, out[0], dt, sh(1, 1, 2), 1e-6, 1.5, 3)
	}
	expectErr(t, true, "AveragePool", a(ir.Ints("kernel_shape", 2)), 1, f(ir.Uint8, sh(1, 1, 3)))
	expectErr(t, false, "AveragePool", a(ir.Ints("kernel_shape", 1), ir.Ints("pads", 1, 0)), 1, x5)
}

func TestLpPool(t *testing.T) {
	x := f32(sh(1, 1, 4), 3, 4, 0, -5)
	out := run(t, "LpPool", a(ir.Ints("kernel_shape", 2), ir.Ints("strides", 2)), 1, x)
	expect(t, out[0], ir.Float32, sh(1, 1, 2), 1e-6, 5, 5)
	out = run(t, "LpPool", a(ir.Ints("kernel_shape", 2), ir.Ints("strides", 2), ir.Int("p", 1)), 1, x)
	expect(t, out[0], ir.Float32, sh(1, 1, 2), 1e-6, 7, 5)
	out = run(t, "LpPool", a(ir.Ints("kernel_shape", 2), ir.Ints("pads", 1, 1), ir.Int("p", 3)), 1, f32(sh(1, 1, 2), 1, 2))
	expect(t, out[0], ir.Float32, sh(1, 1, 3), 1e-6, 1, math.Cbrt(9), 2)
	out = run(t, "LpPool", a(ir.Ints("kernel_shape", 2, 2)), 1, f(ir.Float64, sh(1, 1, 2, 2), 1, 2, 2, 4))
	expect(t, out[0], ir.Float64, sh(1, 1, 1, 1), 1e-12, 5)
	expectErr(t, false, "LpPool", a(ir.Ints("kernel_shape", 2), ir.Int("p", 0)), 1, x)
}

func TestGlobalPools(t *testing.T) {
	x := f32(sh(1, 2, 2, 2), 1, 2, 3, 4, -1, -2, -3, -4)
	out := run(t, "GlobalAveragePool", nil, 1, x)
	expect(t, out[0], ir.Float32, sh(1, 2, 1, 1), 1e-6, 2.5, -2.5)
	out = run(t, "GlobalMaxPool", nil, 1, x)
	expect(t, out[0], ir.Float32, sh(1, 2, 1, 1), 0, 4, -1)
	out = run(t, "GlobalLpPool", nil, 1, x)
	expect(t, out[0], ir.Float32, sh(1, 2, 1, 1), 1e-6, math.Sqrt(30), math.Sqrt(30))
	out = run(t, "GlobalLpPool", a(ir.Int("p", 1)), 1, x)
	expect(t, out[0], ir.Float32, sh(1, 2, 1, 1), 1e-6, 10, 10)
	out = run(t, "GlobalMaxPool", nil, 1, f(ir.Float16, sh(2, 1, 3), 1, 3, 2, -1, -3, -2))
	expect(t, out[0], ir.Float16, sh(2, 1, 1), 0, 3, -1)
	out = run(t, "GlobalAveragePool", nil, 1, f(ir.Float64, sh(1, 1, 1, 1, 3), 1, 2, 6))
	expect(t, out[0], ir.Float64, sh(1, 1, 1, 1, 1), 1e-12, 3)
	expectErr(t, false, "GlobalAveragePool", nil, 1, f32(sh(2, 2)))
	expectErr(t, true, "GlobalMaxPool", nil, 1, f(ir.Int8, sh(1, 1, 2)))
}
