package nn

import (
	"testing"

	"github.com/weftrt/weft/ir"
)

func TestConvTranspose(t *testing.T) {
	x1 := f32(sh(1, 1, 2), 1, 2)
	w1 := f32(sh(1, 1, 3), 1, 10, 100)
	// Full 1-D result with stride 2: [1,10,100] + 2·[1,10,100] shifted by 2.
	cases := []struct {
		name  string
		attrs []ir.AttrOption
		in    []*ir.Tensor
		shape []int64
		want  []float64
	}{
		{"1d stride", a(ir.Ints("strides", 2)), []*ir.Tensor{x1, w1}, sh(1, 1, 5), []float64{1, 10, 102, 20, 200}},
		{"1d pads", a(ir.Ints("strides", 2), ir.Ints("pads", 1, 1)), []*ir.Tensor{x1, w1}, sh(1, 1, 3), []float64{10, 102, 20}},
		{"1d output_padding", a(ir.Ints("strides", 2), ir.Ints("output_padding", 1)), []*ir.Tensor{x1, w1}, sh(1, 1, 6),
			[]float64{1, 10, 102, 20, 200, 0}},
		{"1d output_shape larger", a(ir.Ints("strides", 2), ir.Ints("output_shape", 6)), []*ir.Tensor{x1, w1}, sh(1, 1, 6),
			[]float64{1, 10, 102, 20, 200, 0}},
		{"1d output_shape smaller", a(ir.Ints("strides", 2), ir.Ints("output_shape", 4)), []*ir.Tensor{x1, w1}, sh(1, 1, 4),
			[]float64{10, 102, 20, 200}},
		{"1d output_shape with N C", a(ir.Ints("strides", 2), ir.Ints("output_shape", 1, 1, 4)), []*ir.Tensor{x1, w1}, sh(1, 1, 4),
			[]float64{10, 102, 20, 200}},
		{"1d same upper", a(ir.Ints("strides", 2), ir.Str("auto_pad", "SAME_UPPER")), []*ir.Tensor{x1, w1}, sh(1, 1, 4),
			[]float64{1, 10, 102, 20}},
		{"1d same lower", a(ir.Ints("strides", 2), ir.Str("auto_pad", "SAME_LOWER")), []*ir.Tensor{x1, w1}, sh(1, 1, 4),
			[]float64{10, 102, 20, 200}},
		{"1d dilation", a(ir.Ints("dilations", 2)), []*ir.Tensor{x1, f32(sh(1, 1, 2), 1, 10)}, sh(1, 1, 4),
			[]float64{1, 2, 10, 20}},
		{"1d group bias", a(ir.Int("group", 2)), []*ir.Tensor{f32(sh(1, 2, 1), 1, 2), f32(sh(2, 1, 2), 1, 1, 3, 4), f32(sh(2), 0.5, -1)},
			sh(1, 2, 2), []float64{1.5, 1.5, 5, 7}},
		{"1d channels sum", nil, []*ir.Tensor{f32(sh(1, 2, 1), 1, 2), f32(sh(2, 1, 2), 1, 1, 3, 4)},
			sh(1, 1, 2), []float64{7, 9}},
		// ONNX operator doc example: 3x3 input 0..8, 3x3 ones kernel, two output channels.
		{"2d", nil, []*ir.Tensor{iota32(0, 1, 1, 3, 3), f32(sh(1, 2, 3, 3), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)},
			sh(1, 2, 5, 5), append(convT2d(), convT2d()...)},
		{"3d", nil, []*ir.Tensor{f32(sh(1, 1, 1, 1, 2), 1, 2), f32(sh(1, 1, 1, 1, 2), 1, 1)}, sh(1, 1, 1, 1, 3), []float64{1, 3, 2}},
		{"2d stride pads batch", a(ir.Ints("strides", 2, 1), ir.Ints("pads", 0, 1, 1, 0)),
			[]*ir.Tensor{f32(sh(2, 1, 2, 1), 1, 2, 3, 4), f32(sh(1, 1, 2, 2), 1, 2, 3, 4)},
			// full per batch: rows 2*i+kh, cols kw (1 col in, 2 kernel cols) -> 4x2, crop row 3, col 0
			sh(2, 1, 3, 1), []float64{2, 4, 4, 6, 12, 8}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, "ConvTranspose", c.attrs, 1, c.in...)
			expect(t, out[0], ir.Float32, c.shape, 1e-4, c.want...)
		})
	}
	for _, dt := range []ir.DType{ir.Float64, ir.Float16} {
		out := run(t, "ConvTranspose", nil, 1, f(dt, sh(1, 1, 2), 1, 2), f(dt, sh(1, 1, 2), 0.5, 0.25))
		expect(t, out[0], dt, sh(1, 1, 3), 1e-6, 0.5, 1.25, 0.5)
	}
	expectErr(t, false, "ConvTranspose", nil, 1, x1, f32(sh(2, 1, 3)))
	expectErr(t, false, "ConvTranspose", a(ir.Int("group", 2)), 1, x1, w1)
	expectErr(t, false, "ConvTranspose", nil, 1, x1, w1, f32(sh(2)))
	expectErr(t, false, "ConvTranspose", a(ir.Ints("pads", 3, 3)), 1, x1, w1)
	expectErr(t, false, "ConvTranspose", a(ir.Ints("output_shape", 1, 2)), 1, x1, w1)
	expectErr(t, false, "ConvTranspose", a(ir.Ints("kernel_shape", 2)), 1, x1, w1)
	expectErr(t, true, "ConvTranspose", nil, 1, f(ir.Int32, sh(1, 1, 2)), f(ir.Int32, sh(1, 1, 2)))
}

// convT2d is one output channel of the ONNX ConvTranspose doc example.
func convT2d() []float64 {
	return []float64{0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15, 9, 20, 33, 24, 13, 6, 13, 21, 15, 8}
}
