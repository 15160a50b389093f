package passes

import (
	"testing"

	"github.com/weftrt/weft/ir"
)

func TestInferMatmul(t *testing.T) {
	runInferCases(t, []inferCase{
		{"matmul", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("batch", "seq", 64))
			w := zeros(b, 64, 128)
			return []*ir.Value{b.Op("MatMul", x, w),
				b.Op("MatMul", zeros(b, 3), zeros(b, 3, 4)),
				b.Op("MatMul", zeros(b, 2, 3, 4), zeros(b, 4)),
				b.Op("MatMul", zeros(b, 2, 1, 3, 4), zeros(b, 5, 4, 6)),
				b.Op("MatMul", b.Input("a", ir.Float32, sh("b", "m", "k")), b.Input("c", ir.Float32, sh("b", "k", "n"))),
				b.Op("MatMulInteger", b.Input("q", ir.Uint8, sh(2, 3)), b.Input("r", ir.Int8, sh(3, 5)))}
		}, []string{"f32[batch,seq,128]", "f32[4]", "f32[2,3]", "f32[2,5,3,6]", "f32[b,m,n]", "i32[2,5]"}},
		{"gemm", func(b *ir.Builder) []*ir.Value {
			a := b.Input("a", ir.Float32, sh("n", 4))
			return []*ir.Value{b.OpA("Gemm", at(ir.Int("transB", 1)), a, zeros(b, 3, 4), zeros(b, 3)),
				b.OpA("Gemm", at(ir.Int("transA", 1)), zeros(b, 4, 2), zeros(b, 4, 5))}
		}, []string{"f32[n,3]", "f32[2,5]"}},
		{"einsum", func(b *ir.Builder) []*ir.Value {
			return []*ir.Value{
				b.OpA("Einsum", at(ir.Str("equation", "bij,bjk->bik")), zeros(b, 2, 3, 4), zeros(b, 2, 4, 5)),
				b.OpA("Einsum", at(ir.Str("equation", "...ij,...jk")), zeros(b, 5, 2, 3), zeros(b, 1, 3, 6)),
				b.OpA("Einsum", at(ir.Str("equation", "ij,jk")), zeros(b, 2, 3), zeros(b, 3, 6)),
				b.OpA("Einsum", at(ir.Str("equation", "ii->i")), zeros(b, 4, 4)),
				b.OpA("Einsum", at(ir.Str("equation", "ij->")), zeros(b, 4, 3)),
			}
		}, []string{"f32[2,3,5]", "f32[5,2,6]", "f32[2,6]", "f32[4]", "f32[]"}},
	})
	inferErr(t, func(b *ir.Builder) {
		named(b.Op("MatMul", zeros(b, 2, 3), zeros(b, 4, 5)), "mm")
	}, `"mm" (MatMul)`, "dims 3 and 4 differ")
}

func TestInferConvPool(t *testing.T) {
	x := func(b *ir.Builder) *ir.Value { return b.Input("x", ir.Float32, sh("n", 3, 7, 7)) }
	runInferCases(t, []inferCase{
		{"conv", func(b *ir.Builder) []*ir.Value {
			w := zeros(b, 8, 3, 3, 3)
			return []*ir.Value{
				b.OpA("Conv", at(ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1)), x(b), w),
				b.OpA("Conv", at(ir.Ints("dilations", 2, 2)), x(b), w),
				b.OpA("Conv", at(ir.Ints("strides", 2, 2), ir.Str("auto_pad", "SAME_UPPER")), x(b), w),
				b.OpA("Conv", at(ir.Ints("strides", 2, 2), ir.Str("auto_pad", "VALID")), x(b), w),
				b.OpA("Conv", at(ir.Ints("strides", 1, 3), ir.Ints("pads", 0, 2, 0, 0)), x(b), zeros(b, 8, 3, 1, 2)),
				b.OpA("Conv", at(ir.Int("group", 4)), b.Input("y", ir.Float32, sh(1, 4, 5, 5)), zeros(b, 4, 1, 3, 3)),
				b.Op("Conv", b.Input("s", ir.Float32, sh(1, 3, "len")), zeros(b, 2, 3, 5)),
				b.Op("ConvInteger", b.Input("q", ir.Uint8, sh(1, 3, 9)), b.Input("k", ir.Uint8, sh(2, 3, 4))),
			}
		}, []string{"f32[n,8,4,4]", "f32[n,8,3,3]", "f32[n,8,4,4]", "f32[n,8,3,3]", "f32[n,8,7,3]",
			"f32[1,4,3,3]", "f32[1,2,?]", "i32[1,2,6]"}},
		{"conv transpose", func(b *ir.Builder) []*ir.Value {
			y := b.Input("y", ir.Float32, sh(1, 2, 3, 3))
			w := zeros(b, 2, 3, 3, 3)
			return []*ir.Value{
				b.OpA("ConvTranspose", at(ir.Ints("strides", 2, 2)), y, w),
				b.OpA("ConvTranspose", at(ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1), ir.Ints("output_padding", 1, 1)), y, w),
				b.OpA("ConvTranspose", at(ir.Ints("strides", 2, 2), ir.Int("group", 2)), y, w),
				b.OpA("ConvTranspose", at(ir.Ints("strides", 2, 2), ir.Ints("output_shape", 10, 8)), y, w),
				b.OpA("ConvTranspose", at(ir.Ints("strides", 3, 2), ir.Str("auto_pad", "SAME_UPPER")), y, w),
				b.OpA("ConvTranspose", at(ir.Ints("dilations", 2, 2)), y, w),
			}
		}, []string{"f32[1,3,7,7]", "f32[1,3,6,6]", "f32[1,6,7,7]", "f32[1,3,10,8]", "f32[1,3,9,6]", "f32[1,3,7,7]"}},
		{"pools", func(b *ir.Builder) []*ir.Value {
			p4 := b.Input("p4", ir.Float32, sh(1, 1, 4, 4))
			p5 := b.Input("p5", ir.Float32, sh(1, 1, 5, 5))
			k3s2 := []ir.AttrOption{ir.Ints("kernel_shape", 3, 3), ir.Ints("strides", 2, 2)}
			mp := b.OpN("MaxPool", 2, append(k3s2, ir.Int("ceil_mode", 1)), p4)
			return append(mp,
				b.OpA("MaxPool", k3s2, p4),
				// ceil mode: the 4th window would start in the right padding.
				b.OpA("MaxPool", at(ir.Ints("kernel_shape", 2, 2), ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1), ir.Int("ceil_mode", 1)), p5),
				b.OpA("AveragePool", append(k3s2, ir.Str("auto_pad", "SAME_UPPER")), p5),
				b.OpA("LpPool", at(ir.Ints("kernel_shape", 2, 2), ir.Ints("dilations", 2, 2)), p5),
				b.Op("GlobalAveragePool", x(b)),
				b.OpA("MaxPool", at(ir.Ints("kernel_shape", 2)), b.Input("q", ir.Float32, sh("b", 4, "t"))))
		}, []string{"f32[1,1,2,2]", "i64[1,1,2,2]", "f32[1,1,1,1]", "f32[1,1,3,3]", "f32[1,1,3,3]",
			"f32[1,1,3,3]", "f32[n,3,1,1]", "f32[b,4,?]"}},
		{"unpool and roi", func(b *ir.Builder) []*ir.Value {
			y := b.Input("y", ir.Float32, sh(1, 2, 3, 3))
			return []*ir.Value{
				b.OpA("MaxUnpool", at(ir.Ints("kernel_shape", 2, 2), ir.Ints("strides", 2, 2)), y, b.Input("i", ir.Int64, sh(1, 2, 3, 3))),
				b.OpA("RoiAlign", at(ir.Int("output_height", 5), ir.Int("output_width", 6)), y, zeros(b, 7, 4), b.Input("bi", ir.Int64, sh(7))),
			}
		}, []string{"f32[1,2,6,6]", "f32[7,2,5,6]"}},
	})
	inferErr(t, func(b *ir.Builder) {
		named(b.OpA("MaxPool", at(ir.Ints("kernel_shape", 9, 9)), x(b)), "pool")
	}, `"pool" (MaxPool)`, "does not fit")
	inferErr(t, func(b *ir.Builder) {
		b.Op("Conv", x(b), zeros(b, 8, 2, 3, 3))
	}, "3 channels")
}

func TestInferMisc(t *testing.T) {
	runInferCases(t, []inferCase{
		{"normalization", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("n", 4, 5, 5))
			c := zeros(b, 4)
			return []*ir.Value{b.Op("BatchNormalization", x, c, c, c, c), b.Op("InstanceNormalization", x, c, c),
				b.OpA("Softmax", at(ir.Int("axis", 1)), x)}
		}, []string{"f32[n,4,5,5]", "f32[n,4,5,5]", "f32[n,4,5,5]"}},
		{"quantization", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(2, 3))
			q := b.Op("QuantizeLinear", x, f32s(b, 0.1), b.Const("", ir.NewTensor(ir.Int8, nil)))
			return append([]*ir.Value{q, b.Op("QuantizeLinear", x, f32s(b, 0.1)),
				b.Op("DequantizeLinear", q, f32s(b, 0.1), nil)},
				b.OpN("DynamicQuantizeLinear", 3, nil, x)...)
		}, []string{"i8[2,3]", "u8[2,3]", "f32[2,3]", "u8[2,3]", "f32[]", "u8[]"}},
		{"resize", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("n", 3, 5, 5))
			return []*ir.Value{b.Op("Resize", x, nil, f32(b, 1, 1, 2, 2)),
				b.Op("Resize", x, nil, f32(b, 1, 1, 0.5, 1.5)),
				b.Op("Resize", x, nil, nil, i64(b, 1, 3, 8, 9)),
				b.OpA("Resize", at(ir.Ints("axes", 2, 3)), x, nil, nil, i64(b, 8, 9)),
				b.Op("Resize", x, nil, b.Input("s", ir.Float32, sh(4)))}
		}, []string{"f32[n,3,10,10]", "f32[n,3,2,7]", "f32[1,3,8,9]", "f32[n,3,8,9]", "f32[?,?,?,?]"}},
		{"recurrent", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(5, "b", 4))
			l := b.OpN("LSTM", 3, at(ir.Int("hidden_size", 8), ir.Str("direction", "bidirectional")), x, zeros(b, 2, 32, 4), zeros(b, 2, 32, 8))
			g := b.OpN("GRU", 2, at(ir.Int("layout", 1)), b.Input("y", ir.Float32, sh(2, 7, 4)), zeros(b, 1, 18, 4), zeros(b, 1, 18, 6))
			return append(l, g...)
		}, []string{"f32[5,2,b,8]", "f32[2,b,8]", "f32[2,b,8]", "f32[2,7,1,6]", "f32[2,1,6]"}},
		{"odds and ends", func(b *ir.Builder) []*ir.Value {
			return []*ir.Value{
				b.Op("Det", zeros(b, 2, 3, 3)),
				b.Op("HannWindow", i64s(b, 16)),
				b.OpA("GridSample", nil, zeros(b, 1, 3, 8, 8), zeros(b, 1, 4, 5, 2)),
				b.Op("AffineGrid", zeros(b, 2, 2, 3), i64(b, 2, 3, 6, 7)),
				b.Op("Col2Im", zeros(b, 1, 12, 9), i64(b, 5, 5), i64(b, 2, 2)),
				b.OpA("NegativeLogLikelihoodLoss", at(ir.Str("reduction", "none")), zeros(b, 3, 5, 2), b.Input("t", ir.Int64, sh(3, 2))),
			}
		}, []string{"f32[2]", "f32[16]", "f32[1,3,4,5]", "f32[2,6,7,2]", "f32[1,3,5,5]", "f32[3,2]"}},
	})
}
