package nn

import (
	"testing"

	"github.com/weftrt/weft/ir"
)

func TestMatMul(t *testing.T) {
	cases := []struct {
		name  string
		a, b  *ir.Tensor
		dt    ir.DType
		shape []int64
		want  []float64
	}{
		{"2x3·3x2", f32(sh(2, 3), 1, 2, 3, 4, 5, 6), f32(sh(3, 2), 7, 8, 9, 10, 11, 12),
			ir.Float32, sh(2, 2), []float64{58, 64, 139, 154}},
		{"vec·vec", f32(sh(3), 1, 2, 3), f32(sh(3), 4, 5, 6), ir.Float32, sh(), []float64{32}},
		{"vec·batched", f32(sh(2), 1, 2), f32(sh(2, 2, 3), 1, 2, 3, 4, 5, 6, 0, 1, 0, 1, 0, 1),
			ir.Float32, sh(2, 3), []float64{9, 12, 15, 2, 1, 2}},
		{"mat·vec", f32(sh(2, 3), 1, 2, 3, 4, 5, 6), f32(sh(3), 1, 0, -1), ir.Float32, sh(2), []float64{-2, -2}},
		{"broadcast batch", f32(sh(2, 1, 1, 2), 1, 1, 1, -1), f32(sh(3, 2, 1), 1, 2, 3, 4, 5, 7),
			ir.Float32, sh(2, 3, 1, 1), []float64{3, 7, 12, -1, -1, -2}},
		{"f64", f(ir.Float64, sh(1, 2), 0.1, 0.2), f(ir.Float64, sh(2, 1), 3, 4), ir.Float64, sh(1, 1), []float64{1.1}},
		{"f16", f(ir.Float16, sh(1, 2), 0.5, 1.5), f(ir.Float16, sh(2, 1), 2, 4), ir.Float16, sh(1, 1), []float64{7}},
		{"bf16", f(ir.BFloat16, sh(1, 2), 0.5, 1.5), f(ir.BFloat16, sh(2, 1), 2, 4), ir.BFloat16, sh(1, 1), []float64{7}},
		{"i32", f(ir.Int32, sh(2, 2), 1, 2, 3, 4), f(ir.Int32, sh(2, 2), 5, 6, 7, 8), ir.Int32, sh(2, 2), []float64{19, 22, 43, 50}},
		{"i32 wraps", f(ir.Int32, sh(1, 1), 65536), f(ir.Int32, sh(1, 1), 65537), ir.Int32, sh(1, 1), []float64{65536}},
		{"i64 negative", f(ir.Int64, sh(1, 3), -1, 2, -3), f(ir.Int64, sh(3, 1), 4, 5, 6), ir.Int64, sh(1, 1), []float64{-12}},
		{"u32", f(ir.Uint32, sh(1, 2), 3, 4), f(ir.Uint32, sh(2, 1), 5, 6), ir.Uint32, sh(1, 1), []float64{39}},
		{"empty K", f32(sh(2, 0)), f32(sh(0, 3)), ir.Float32, sh(2, 3), []float64{0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, "MatMul", nil, 1, c.a, c.b)
			expect(t, out[0], c.dt, c.shape, 1e-6, c.want...)
		})
	}
}

func TestMatMulOddSizes(t *testing.T) {
	// A 3x5 of i+1 times B 5x7 of (j+1)*(k==j%5 ? 1 : 0)+1: check against
	// the closed form sum_k A[i][k]*B[k][j].
	A := make([]float64, 15)
	for i := range A {
		A[i] = float64(i + 1)
	}
	B := make([]float64, 35)
	for k := 0; k < 5; k++ {
		for j := 0; j < 7; j++ {
			B[k*7+j] = 1
			if k == j%5 {
				B[k*7+j] = float64(j + 2)
			}
		}
	}
	out := run(t, "MatMul", nil, 1, f32(sh(3, 5), A...), f32(sh(5, 7), B...))
	want := make([]float64, 21)
	for i := 0; i < 3; i++ {
		rowSum := 0.0
		for k := 0; k < 5; k++ {
			rowSum += A[i*5+k]
		}
		for j := 0; j < 7; j++ {
			// all ones except one entry (k = j%5) that is j+2 instead of 1
			want[i*7+j] = rowSum + A[i*5+j%5]*float64(j+1)
		}
	}
	expect(t, out[0], ir.Float32, sh(3, 7), 1e-4, want...)
}

func TestMatMulErrors(t *testing.T) {
	expectErr(t, false, "MatMul", nil, 1, f32(sh(2, 3)), f32(sh(2, 3)))
	expectErr(t, false, "MatMul", nil, 1, f32(sh()), f32(sh(2)))
	expectErr(t, false, "MatMul", nil, 1, f32(sh(2, 1, 2)), f32(sh(3, 2, 1)))
	expectErr(t, false, "MatMul", nil, 1, f32(sh(1, 1)), f(ir.Float64, sh(1, 1)))
	expectErr(t, true, "MatMul", nil, 1, f(ir.Bool, sh(1, 1), 1), f(ir.Bool, sh(1, 1), 1))
	expectErr(t, false, "MatMul", nil, 1, f32(sh(1, 1)))
}

func TestGemm(t *testing.T) {
	A := f32(sh(2, 3), 1, 2, 3, 4, 5, 6)
	At := f32(sh(3, 2), 1, 4, 2, 5, 3, 6)
	B := f32(sh(3, 2), 7, 8, 9, 10, 11, 12)
	Bt := f32(sh(2, 3), 7, 9, 11, 8, 10, 12)
	plain := []float64{58, 64, 139, 154}
	cases := []struct {
		name  string
		attrs []ir.AttrOption
		in    []*ir.Tensor
		want  []float64
	}{
		{"no C", nil, []*ir.Tensor{A, B}, plain},
		{"transA", a(ir.Int("transA", 1)), []*ir.Tensor{At, B}, plain},
		{"transB", a(ir.Int("transB", 1)), []*ir.Tensor{A, Bt}, plain},
		{"both", a(ir.Int("transA", 1), ir.Int("transB", 1)), []*ir.Tensor{At, Bt}, plain},
		{"vector C alpha beta", a(ir.Float("alpha", 2), ir.Float("beta", 0.5)),
			[]*ir.Tensor{A, B, f32(sh(2), 1, 2)}, []float64{116.5, 129, 278.5, 309}},
		{"scalar C", nil, []*ir.Tensor{A, B, f32(sh(), 1)}, []float64{59, 65, 140, 155}},
		{"column C", nil, []*ir.Tensor{A, B, f32(sh(2, 1), 1, -1)}, []float64{59, 65, 138, 153}},
		{"matrix C beta 0", a(ir.Float("beta", 0)), []*ir.Tensor{A, B, f32(sh(2, 2), 9, 9, 9, 9)}, plain},
		{"absent C", nil, []*ir.Tensor{A, B, nil}, plain},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, "Gemm", c.attrs, 1, c.in...)
			expect(t, out[0], ir.Float32, sh(2, 2), 1e-5, c.want...)
		})
	}
	t.Run("i64", func(t *testing.T) {
		out := run(t, "Gemm", a(ir.Float("alpha", 2)), 1, f(ir.Int64, sh(1, 2), 1, 2), f(ir.Int64, sh(2, 1), 3, 4), f(ir.Int64, sh(1), 5))
		expect(t, out[0], ir.Int64, sh(1, 1), 0, 27)
	})
	expectErr(t, true, "Gemm", a(ir.Float("alpha", 0.5)), 1, f(ir.Int64, sh(1, 1), 1), f(ir.Int64, sh(1, 1), 1))
	expectErr(t, false, "Gemm", nil, 1, A, A)
	expectErr(t, false, "Gemm", nil, 1, A, B, f32(sh(3), 1, 2, 3))
	expectErr(t, false, "Gemm", nil, 1, f32(sh(2, 3, 1)), B)
}

func TestMatMulInteger(t *testing.T) {
	// ONNX operator doc example.
	A := f(ir.Uint8, sh(4, 3), 11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0)
	B := f(ir.Uint8, sh(3, 2), 1, 4, 2, 5, 3, 6)
	out := run(t, "MatMulInteger", nil, 1, A, B, f(ir.Uint8, sh(), 12), f(ir.Uint8, sh(), 0))
	expect(t, out[0], ir.Int32, sh(4, 2), 0, -38, -83, -44, -98, -50, -113, -56, -128)

	// Per-row A and per-column B zero points, int8.
	Ai := f(ir.Int8, sh(2, 2), 1, 2, 3, 4)
	Bi := f(ir.Int8, sh(2, 2), 1, 2, 3, 4)
	out = run(t, "MatMulInteger", nil, 1, Ai, Bi, f(ir.Int8, sh(2), 1, 3), f(ir.Int8, sh(2), 1, 2))
	expect(t, out[0], ir.Int32, sh(2, 2), 0, 2, 2, 2, 2)

	// No zero points, mixed signedness, batched with N-D zero points.
	Ab := f(ir.Int8, sh(2, 1, 2), -1, 2, 3, -4)
	Bb := f(ir.Uint8, sh(2, 1), 200, 100)
	out = run(t, "MatMulInteger", nil, 1, Ab, Bb)
	expect(t, out[0], ir.Int32, sh(2, 1, 1), 0, 0, 200)
	out = run(t, "MatMulInteger", nil, 1, Ab, Bb, f(ir.Int8, sh(2, 1, 1), 1, -1), nil)
	expect(t, out[0], ir.Int32, sh(2, 1, 1), 0, -2*200+1*100, 4*200-3*100)

	expectErr(t, true, "MatMulInteger", nil, 1, f32(sh(1, 1)), f32(sh(1, 1)))
	expectErr(t, false, "MatMulInteger", nil, 1, A, B, f(ir.Uint8, sh(3), 1, 2, 3))
	expectErr(t, false, "MatMulInteger", nil, 1, A, B, f(ir.Int8, sh(), 1))
}

func TestQLinearMatMul(t *testing.T) {
	// ONNX operator doc example (test_qlinearmatmul_2D).
	a := f(ir.Uint8, sh(2, 4), 208, 236, 0, 238, 3, 214, 255, 29)
	b := f(ir.Uint8, sh(4, 3), 152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247)
	out := run(t, "QLinearMatMul", nil, 1, a, f32(sh(1), 0.0066), f(ir.Uint8, sh(1), 113),
		b, f32(sh(1), 0.00705), f(ir.Uint8, sh(1), 114), f32(sh(1), 0.0107), f(ir.Uint8, sh(1), 118))
	expect(t, out[0], ir.Uint8, sh(2, 3), 0, 168, 115, 255, 1, 66, 151)

	// Hand case: acc = [6, 5] (a=[2,4]·[1,1], [2,3]·[1,1]); y_scale 4 and 2
	// give 1.5 -> 2 and 2.5 -> 2 (ties to even), plus y_zero_point.
	one := f32(sh(), 1)
	out = run(t, "QLinearMatMul", nil, 1, f(ir.Int8, sh(1, 2), 2, 4), one, f(ir.Int8, sh(), 0),
		f(ir.Int8, sh(2, 1), 1, 1), one, f(ir.Int8, sh(), 0), f32(sh(), 4), f(ir.Int8, sh(), 10))
	expect(t, out[0], ir.Int8, sh(1, 1), 0, 12)
	out = run(t, "QLinearMatMul", nil, 1, f(ir.Int8, sh(1, 2), 2, 3), one, f(ir.Int8, sh(), 0),
		f(ir.Int8, sh(2, 1), 1, 1), one, f(ir.Int8, sh(), 0), f32(sh(), 2), f(ir.Int8, sh(), -128))
	expect(t, out[0], ir.Int8, sh(1, 1), 0, -126)
	// Per-row a_scale, per-column b_scale; saturation at 127.
	out = run(t, "QLinearMatMul", nil, 1, f(ir.Int8, sh(2, 1), 10, 10), f32(sh(2), 1, 2), f(ir.Int8, sh(2), 0, 0),
		f(ir.Int8, sh(1, 2), 10, 10), f32(sh(2), 1, 0.5), f(ir.Int8, sh(2), 0, 0), one, f(ir.Int8, sh(), 0))
	expect(t, out[0], ir.Int8, sh(2, 2), 0, 100, 50, 127, 100)

	expectErr(t, false, "QLinearMatMul", nil, 1, a, f32(sh(3), 1, 1, 1), nil, b, one, nil, one, nil)
	expectErr(t, true, "QLinearMatMul", nil, 1, a, one, nil, b, one, nil, f32(sh(3), 1, 1, 1), nil)
}
