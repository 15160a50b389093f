package nn

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestQuantizeLinear(t *testing.T) {
	cases := []struct {
		name  string
		attrs []ir.AttrOption
		in    []*ir.Tensor
		dt    ir.DType
		want  []float64
	}{
		// ONNX operator doc example: 3/2 = 1.5 rounds to 2, saturation at both ends.
		{"u8 per tensor", nil, []*ir.Tensor{f32(sh(6), 0, 2, 3, 1000, -254, -1000), f32(sh(), 2), f(ir.Uint8, sh(), 128)},
			ir.Uint8, []float64{128, 129, 130, 255, 1, 0}},
		{"default u8 no zero point", nil, []*ir.Tensor{f32(sh(4), -1, 1.5, 2.5, 0.49), f32(sh(), 1)},
			ir.Uint8, []float64{0, 2, 2, 0}},
		{"i8 saturate", nil, []*ir.Tensor{f32(sh(4), 300, -300, -2.5, -3.5), f32(sh(1), 1), f(ir.Int8, sh(1), 0)},
			ir.Int8, []float64{127, -128, -2, -4}},
		{"per axis 1", nil, []*ir.Tensor{f32(sh(2, 3), 1, 2, 4, -3, 5, 10), f32(sh(3), 1, 2, 4), f(ir.Int8, sh(3), 0, 1, -1)},
			ir.Int8, []float64{1, 2, 0, -3, 3, 1}},
		{"per axis 0", a(ir.Int("axis", 0)), []*ir.Tensor{f32(sh(2, 2), 4, 4, 4, 4), f32(sh(2), 1, 4)},
			ir.Uint8, []float64{4, 4, 1, 1}},
		{"negative axis", a(ir.Int("axis", -1)), []*ir.Tensor{f32(sh(2, 2), 4, 4, 4, 4), f32(sh(2), 1, 4)},
			ir.Uint8, []float64{4, 1, 4, 1}},
		{"blocked", a(ir.Int("axis", 1), ir.Int("block_size", 2)),
			[]*ir.Tensor{f32(sh(2, 4), 1, 2, 4, 6, 8, 8, 8, 8), f32(sh(2, 2), 1, 2, 4, 8)},
			ir.Uint8, []float64{1, 2, 2, 3, 2, 2, 1, 1}},
		{"blocked ragged", a(ir.Int("axis", 0), ir.Int("block_size", 2)),
			[]*ir.Tensor{f32(sh(3), 6, 6, 6), f32(sh(2), 2, 3)},
			ir.Uint8, []float64{3, 3, 2}},
		{"output_dtype i8", a(ir.Int("output_dtype", 3)), []*ir.Tensor{f32(sh(1), -1.4), f32(sh(), 1)},
			ir.Int8, []float64{-1}},
		{"i16", nil, []*ir.Tensor{f32(sh(2), 70000, -3), f32(sh(), 1), f(ir.Int16, sh(), 0)},
			ir.Int16, []float64{32767, -3}},
		{"u16", nil, []*ir.Tensor{f32(sh(2), 70000, 3), f32(sh(), 1), f(ir.Uint16, sh(), 0)},
			ir.Uint16, []float64{65535, 3}},
		{"f16 input", nil, []*ir.Tensor{f(ir.Float16, sh(2), 1, 3), f(ir.Float16, sh(), 2), f(ir.Uint8, sh(), 10)},
			ir.Uint8, []float64{10, 12}},
		{"i32 input", nil, []*ir.Tensor{f(ir.Int32, sh(2), 100, -7), f32(sh(), 10), f(ir.Int8, sh(), 0)},
			ir.Int8, []float64{10, -1}},
		{"scalar input", nil, []*ir.Tensor{f32(sh(), 5), f32(sh(), 2)}, ir.Uint8, []float64{2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, "QuantizeLinear", c.attrs, 1, c.in...)
			expect(t, out[0], c.dt, c.in[0].Shape, 0, c.want...)
		})
	}
	x := f32(sh(2, 3))
	expectErr(t, false, "QuantizeLinear", nil, 1, x, f32(sh(2), 1, 1))
	expectErr(t, false, "QuantizeLinear", nil, 1, x, f32(sh(3), 1, 1, 1), f(ir.Uint8, sh(2), 1, 1))
	expectErr(t, false, "QuantizeLinear", a(ir.Int("axis", 2)), 1, x, f32(sh(3), 1, 1, 1))
	expectErr(t, false, "QuantizeLinear", a(ir.Int("block_size", 2)), 1, x, f32(sh(2, 1), 1, 1))
	expectErr(t, true, "QuantizeLinear", a(ir.Int("output_dtype", 17)), 1, x, f32(sh(), 1))
	expectErr(t, true, "QuantizeLinear", nil, 1, x, f32(sh(), 1), f(ir.Int32, sh(), 0))
	expectErr(t, true, "QuantizeLinear", nil, 1, f(ir.Int8, sh(1)), f32(sh(), 1))
	expectErr(t, false, "QuantizeLinear", a(ir.Int("output_dtype", 2)), 1, x, f32(sh(), 1), f(ir.Int8, sh(), 0))
}

func TestDequantizeLinear(t *testing.T) {
	cases := []struct {
		name  string
		attrs []ir.AttrOption
		in    []*ir.Tensor
		dt    ir.DType
		want  []float64
	}{
		// ONNX operator doc example.
		{"u8", nil, []*ir.Tensor{f(ir.Uint8, sh(4), 0, 3, 128, 255), f32(sh(), 2), f(ir.Uint8, sh(), 128)},
			ir.Float32, []float64{-256, -250, 0, 254}},
		{"per axis 0", a(ir.Int("axis", 0)), []*ir.Tensor{f(ir.Int8, sh(2, 2), 3, 5, 0, -1), f32(sh(2), 0.5, 2), f(ir.Int8, sh(2), 1, -1)},
			ir.Float32, []float64{1, 2, 2, 0}},
		{"i32 no zero point", nil, []*ir.Tensor{f(ir.Int32, sh(2), -5, 7), f32(sh(), 0.25)},
			ir.Float32, []float64{-1.25, 1.75}},
		{"f16 scale", nil, []*ir.Tensor{f(ir.Uint8, sh(2), 1, 2), f(ir.Float16, sh(), 0.5)},
			ir.Float16, []float64{0.5, 1}},
		{"blocked", a(ir.Int("axis", 1), ir.Int("block_size", 2)),
			[]*ir.Tensor{f(ir.Int16, sh(1, 3), 2, 2, 2), f32(sh(1, 2), 1, 10), f(ir.Int16, sh(1, 2), 1, 0)},
			ir.Float32, []float64{1, 1, 20}},
		{"u16", nil, []*ir.Tensor{f(ir.Uint16, sh(1), 65535), f32(sh(), 1), f(ir.Uint16, sh(), 65534)},
			ir.Float32, []float64{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, "DequantizeLinear", c.attrs, 1, c.in...)
			expect(t, out[0], c.dt, c.in[0].Shape, 1e-6, c.want...)
		})
	}
	expectErr(t, false, "DequantizeLinear", nil, 1, f(ir.Uint8, sh(2)), f32(sh(), 1), f(ir.Int8, sh(), 0))
	expectErr(t, true, "DequantizeLinear", nil, 1, f32(sh(2)), f32(sh(), 1))
	expectErr(t, true, "DequantizeLinear", nil, 1, f(ir.Uint8, sh(2)), f(ir.Int32, sh(), 1))
	expectErr(t, false, "DequantizeLinear", nil, 1, f(ir.Uint8, sh(2, 3)), f32(sh(2), 1, 1))
}

func TestDynamicQuantizeLinear(t *testing.T) {
	cases := []struct {
		name      string
		x         *ir.Tensor
		scale, zp float64
		y         []float64
	}{
		// ONNX operator doc example: range [-3, 2], scale 5/255, zp 153.
		{"mixed", f32(sh(6), 0, 2, -3, -2.5, 1.34, 0.5), 5.0 / 255, 153, []float64{153, 255, 0, 26, 221, 179}},
		// All positive: range adjusted to include 0, zp 0.
		{"min adjusted", f32(sh(3, 4), 1, 2.1, 1.3, 2.5, 3.34, 4, 1.5, 2.6, 3.9, 4, 3, 2.345), 4.0 / 255, 0,
			[]float64{64, 134, 83, 159, 213, 255, 96, 166, 249, 255, 191, 149}},
		// All negative: zp 255.
		{"max adjusted", f32(sh(6), -1, -2.1, -1.3, -2.5, -3.34, -4), 4.0 / 255, 255, []float64{191, 121, 172, 96, 42, 0}},
		{"all zero", f32(sh(2), 0, 0), 0, 0, []float64{0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, "DynamicQuantizeLinear", nil, 3, c.x)
			expect(t, out[0], ir.Uint8, c.x.Shape, 0, c.y...)
			expect(t, out[1], ir.Float32, sh(), 1e-9, c.scale)
			expect(t, out[2], ir.Uint8, sh(), 0, c.zp)
		})
	}
	expectErr(t, true, "DynamicQuantizeLinear", nil, 3, f(ir.Float64, sh(1), 1))
}

func TestSaturate(t *testing.T) {
	require.Equal(t, int64(2), saturate(2.5, 0, 255))
	require.Equal(t, int64(4), saturate(3.5, 0, 255))
	require.Equal(t, int64(-2), saturate(-2.5, -128, 127))
	require.Equal(t, int64(255), saturate(1e30, 0, 255))
	require.Equal(t, int64(-128), saturate(-1e30, -128, 127))
	require.Equal(t, int64(0), saturate(nan(), -128, 127))
}
