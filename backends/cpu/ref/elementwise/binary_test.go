package elementwise

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// iota24 is 0, 0.5, ..., 11.5 minus 3, shaped [2,3,4].
func iota24() *ir.Tensor {
	v := make([]float64, 24)
	for i := range v {
		v[i] = float64(i)*0.5 - 3
	}
	return tf(ir.Float32, s(2, 3, 4), v...)
}

func TestBroadcastArithmetic(t *testing.T) {
	// [2,3,4] + [4] (expected values from numpy).
	got := run1(t, "Add", nil, iota24(), tf(ir.Float32, s(4), 1, -2, 0.25, 10))
	requireFloats(t, got, ir.Float32, s(2, 3, 4), []float64{-2.0, -4.5, -1.75, 8.5, 0.0, -2.5, 0.25, 10.5, 2.0, -0.5, 2.25, 12.5,
		4.0, 1.5, 4.25, 14.5, 6.0, 3.5, 6.25, 16.5, 8.0, 5.5, 8.25, 18.5}, 0)

	// [2,1,4] - [3,1] -> [2,3,4].
	a := tf(ir.Float32, s(2, 1, 4), 1.5, -2, 3.25, 0.125, -7, 8, 0.5, 9)
	b := tf(ir.Float32, s(3, 1), 1, -0.5, 3)
	got = run1(t, "Sub", nil, a, b)
	requireFloats(t, got, ir.Float32, s(2, 3, 4), []float64{0.5, -3.0, 2.25, -0.875, 2.0, -1.5, 3.75, 0.625, -1.5, -5.0, 0.25, -2.875,
		-8.0, 7.0, -0.5, 8.0, -6.5, 8.5, 1.0, 9.5, -10.0, 5.0, -2.5, 6.0}, 0)

	// Scalar operands on either side; results rounded to the dtype.
	got = run1(t, "Div", nil, tf(ir.Float32, s(4), 1, 2, 3, -7.5), tf(ir.Float32, nil, 3))
	requireFloats(t, got, ir.Float32, s(4), []float64{0.3333333432674408, 0.6666666865348816, 1, -2.5}, 0)
	got = run1(t, "Div", nil, tf(ir.Float64, s(4), 1, 2, 3, -7.5), tf(ir.Float64, s(1), 3))
	requireFloats(t, got, ir.Float64, s(4), []float64{1.0 / 3, 2.0 / 3, 1, -2.5}, 0)
	got = run1(t, "Mul", nil, tf(ir.Float64, nil, -2), tf(ir.Float64, s(3), 1, 0.5, inf))
	requireFloats(t, got, ir.Float64, s(3), []float64{-2, -1, -inf}, 0)
	got = run1(t, "Mul", nil, tf(ir.Float32, nil, 4), tf(ir.Float32, nil, 2.5))
	requireFloats(t, got, ir.Float32, s(), []float64{10}, 0)

	// Zero-sized dims broadcast like any other.
	got = run1(t, "Add", nil, tf(ir.Float32, s(2, 0, 3)), tf(ir.Float32, s(3), 1, 2, 3))
	requireFloats(t, got, ir.Float32, s(2, 0, 3), []float64{}, 0)
	got = run1(t, "Mul", nil, tf(ir.Float32, s(1, 0)), tf(ir.Float32, s(3, 1), 1, 2, 3))
	requireFloats(t, got, ir.Float32, s(3, 0), []float64{}, 0)

	// IEEE: x/0 is ±inf or NaN for floats.
	got = run1(t, "Div", nil, tf(ir.Float32, s(3), 1, -1, 0), tf(ir.Float32, nil, 0))
	requireFloats(t, got, ir.Float32, s(3), []float64{inf, -inf, nan}, 0)
}

func TestFloat16Arithmetic(t *testing.T) {
	// f16 has 11 significand bits: above 2048 the spacing is 2, so
	// 2048+1 ties to even (2048), 2048+3 ties to even (2052), 2048+1.5 -> 2050.
	got := run1(t, "Add", nil, tf(ir.Float16, s(3), 2048, 2048, 2048), tf(ir.Float16, s(3), 1, 3, 1.5))
	requireFloats(t, got, ir.Float16, s(3), []float64{2048, 2052, 2050}, 0)
	// 65504 is the largest f16; 65504+16 rounds to inf (a tie to even).
	got = run1(t, "Add", nil, tf(ir.Float16, s(2), 65504, 65504), tf(ir.Float16, s(2), 8, 16))
	requireFloats(t, got, ir.Float16, s(2), []float64{65504, inf}, 0)
	// Variadic Sum rounds once: 2048+1+2^-14 = 2049.00006 lies above the
	// 2049 midpoint, so the result is 2050 (rounding after each addition
	// would give 2048). Through float32 it would also give 2048.
	got = run1(t, "Sum", nil, tf(ir.Float16, s(1), 2048), tf(ir.Float16, s(1), 1), tf(ir.Float16, s(1), math.Ldexp(1, -14)))
	requireFloats(t, got, ir.Float16, s(1), []float64{2050}, 0)
	// bf16: 256 + 1 ties to even (256); 256 + 3 -> 260.
	got = run1(t, "Add", nil, tf(ir.BFloat16, s(2), 256, 256), tf(ir.BFloat16, s(2), 1, 3))
	requireFloats(t, got, ir.BFloat16, s(2), []float64{256, 260}, 0)
}

func TestIntegerArithmetic(t *testing.T) {
	for _, c := range []struct {
		op    string
		dt    ir.DType
		a, b  []int64
		wantV []int64
	}{
		{"Add", ir.Int8, []int64{100, -100, 5}, []int64{100, -100, -7}, []int64{-56, 56, -2}},
		{"Add", ir.Uint8, []int64{200, 1, 255}, []int64{100, 2, 1}, []int64{44, 3, 0}},
		{"Sub", ir.Uint8, []int64{3, 10, 0}, []int64{5, 3, 1}, []int64{254, 7, 255}},
		{"Sub", ir.Int64, []int64{math.MinInt64, 5}, []int64{1, 7}, []int64{math.MaxInt64, -2}},
		{"Mul", ir.Int16, []int64{300, -3, 7}, []int64{300, 4, -5}, []int64{24464, -12, -35}},
		{"Mul", ir.Uint32, []int64{65536, 3}, []int64{65536, 5}, []int64{0, 15}},
		// Division truncates toward zero.
		{"Div", ir.Int32, []int64{7, -7, 7, -7, 0}, []int64{2, 2, -2, -2, 5}, []int64{3, -3, -3, 3, 0}},
		{"Div", ir.Int8, []int64{-128, 100}, []int64{-1, 3}, []int64{-128, 33}}, // -128/-1 wraps
		{"Div", ir.Uint8, []int64{255, 16, 6}, []int64{2, 11, 5}, []int64{127, 1, 1}},
		{"Div", ir.Int64, []int64{math.MinInt64}, []int64{-1}, []int64{math.MinInt64}},
		{"BitwiseAnd", ir.Int32, []int64{12, -1, -8}, []int64{10, 5, 7}, []int64{8, 5, 0}},
		{"BitwiseOr", ir.Uint16, []int64{12, 0x8000, 0}, []int64{10, 1, 0}, []int64{14, 0x8001, 0}},
		{"BitwiseXor", ir.Int8, []int64{12, -1, 127}, []int64{10, 1, -128}, []int64{6, -2, -1}},
		{"Max", ir.Int16, []int64{-5, 3, 0}, []int64{2, -7, 0}, []int64{2, 3, 0}},
		{"Min", ir.Uint32, []int64{4000000000, 3, 0}, []int64{5, 4000000001, 0}, []int64{5, 3, 0}},
	} {
		t.Run(c.op+"/"+c.dt.String(), func(t *testing.T) {
			n := int64(len(c.a))
			got := run1(t, c.op, nil, ti(c.dt, s(n), c.a...), ti(c.dt, s(n), c.b...))
			requireInts(t, got, c.dt, s(n), c.wantV...)
		})
	}

	// u64 values above 2^63 divide and compare as unsigned.
	big := ti(ir.Uint64, s(2), -2, -1) // 2^64-2, 2^64-1
	got := run1(t, "Div", nil, big, ti(ir.Uint64, nil, 2))
	require.Equal(t, []uint64{math.MaxUint64/2 - 0, math.MaxUint64 / 2}, []uint64{got.Uint64(0), got.Uint64(1)})
	got = run1(t, "Max", nil, big, ti(ir.Uint64, nil, 5))
	require.Equal(t, []uint64{math.MaxUint64 - 1, math.MaxUint64}, []uint64{got.Uint64(0), got.Uint64(1)})

	// Integer division and remainder by zero are errors.
	for _, op := range []string{"Div", "Mod"} {
		_, err := run(op, nil, 1, ti(ir.Int32, s(2), 1, 2), ti(ir.Int32, s(2), 1, 0))
		require.ErrorContains(t, err, "division by zero", op)
		_, err = run(op, nil, 1, ti(ir.Uint8, s(1), 1), ti(ir.Uint8, nil, 0))
		require.ErrorContains(t, err, "division by zero", op)
	}
}

func TestMod(t *testing.T) {
	a := []int64{-4, 7, 5, 4, -7, 8}
	b := []int64{2, -3, 8, -2, 3, 5}
	// fmod=0: the result has the divisor's sign (Python's %).
	got := run1(t, "Mod", nil, ti(ir.Int8, s(6), a...), ti(ir.Int8, s(6), b...))
	requireInts(t, got, ir.Int8, s(6), 0, -2, 5, 0, 2, 3)
	got = run1(t, "Mod", nil, ti(ir.Int64, s(6), a...), ti(ir.Int64, s(6), b...))
	requireInts(t, got, ir.Int64, s(6), 0, -2, 5, 0, 2, 3)
	// fmod=1: the dividend's sign (C's fmod).
	fm := attrs(ir.Int("fmod", 1))
	got = run1(t, "Mod", fm, ti(ir.Int32, s(6), a...), ti(ir.Int32, s(6), b...))
	requireInts(t, got, ir.Int32, s(6), 0, 1, 5, 0, -1, 3)
	got = run1(t, "Mod", nil, ti(ir.Uint16, s(3), 65535, 7, 3), ti(ir.Uint16, s(1), 10))
	requireInts(t, got, ir.Uint16, s(3), 5, 7, 3)

	x := []float64{-4.3, 7.2, 5, 4.3, -7.2, 8}
	y := []float64{2.1, -3.4, 8, -2.1, 3.4, 5}
	got = run1(t, "Mod", fm, tf(ir.Float32, s(6), x...), tf(ir.Float32, s(6), y...))
	requireFloats(t, got, ir.Float32, s(6), []float64{-0.10000038146972656, 0.39999961853027344, 5, 0.10000038146972656, -0.39999961853027344, 3}, 0)
	got = run1(t, "Mod", fm, tf(ir.Float16, s(6), x...), tf(ir.Float16, s(6), y...))
	requireFloats(t, got, ir.Float16, s(6), []float64{-0.1015625, 0.3984375, 5, 0.1015625, -0.3984375, 3}, 0)

	// Floats need fmod=1.
	_, err := run("Mod", nil, 1, tf(ir.Float32, s(1), 1), tf(ir.Float32, s(1), 1))
	require.ErrorContains(t, err, "fmod")
}

func TestPow(t *testing.T) {
	got := run1(t, "Pow", nil, tf(ir.Float32, s(4), 2, -1.5, 0.5, 4), tf(ir.Float32, s(4), 0.5, 2, -3, 1.5))
	requireFloats(t, got, ir.Float32, s(4), []float64{1.4142135381698608, 2.25, 8, 8}, 0)
	// Mixed dtypes: the result has the base's dtype.
	got = run1(t, "Pow", nil, tf(ir.Float32, s(3), 1, 2, 3), ti(ir.Int64, s(3), 4, 5, 6))
	requireFloats(t, got, ir.Float32, s(3), []float64{1, 32, 729}, 0)
	got = run1(t, "Pow", nil, tf(ir.Float64, s(2), 2, 10), ti(ir.Uint64, nil, 3))
	requireFloats(t, got, ir.Float64, s(2), []float64{8, 1000}, 0)
	got = run1(t, "Pow", nil, ti(ir.Int32, s(3), 1, 2, 3), tf(ir.Float32, s(3), 4, 5, 6))
	requireInts(t, got, ir.Int32, s(3), 1, 32, 729)
	got = run1(t, "Pow", nil, ti(ir.Int64, s(3), 2, 2, 9), tf(ir.Float32, s(3), 0.5, -1, 0.5))
	requireInts(t, got, ir.Int64, s(3), 1, 0, 3) // truncated: 1.414, 0.5, 3
	// Integer^integer is exact and wraps: 3^21 = 10460353203 -> 1870418611 in int32.
	got = run1(t, "Pow", nil, ti(ir.Int32, s(3), 3, -2, 7), ti(ir.Int32, s(3), 21, 3, 0))
	requireInts(t, got, ir.Int32, s(3), 1870418611, -8, 1)
	got = run1(t, "Pow", nil, ti(ir.Int64, s(4), 3, 1, -1, 2), ti(ir.Int8, s(4), 39, -5, -3, -1))
	requireInts(t, got, ir.Int64, s(4), 4052555153018976267, 1, -1, 0)
	// Broadcast [2,1] ^ [3].
	got = run1(t, "Pow", nil, tf(ir.Float64, s(2, 1), 2, 3), tf(ir.Float64, s(3), 0, 1, 2))
	requireFloats(t, got, ir.Float64, s(2, 3), []float64{1, 2, 4, 1, 3, 9}, 0)

	_, err := run("Pow", nil, 1, ti(ir.Int32, s(1), 0), ti(ir.Int32, s(1), -1))
	require.ErrorContains(t, err, "negative power")
	_, err = run("Pow", nil, 1, ti(ir.Uint8, s(1), 2), ti(ir.Uint8, s(1), 2))
	require.ErrorContains(t, err, "u8")
	_, err = run("Pow", nil, 1, tf(ir.Float32, s(1), 2), tb(s(1), true))
	require.ErrorContains(t, err, "bool")
}

func TestBitShift(t *testing.T) {
	left, right := attrs(ir.Str("direction", "LEFT")), attrs(ir.Str("direction", "RIGHT"))
	got := run1(t, "BitShift", left, ti(ir.Uint8, s(5), 16, 4, 1, 200, 1), ti(ir.Uint8, s(5), 1, 2, 3, 1, 8))
	requireInts(t, got, ir.Uint8, s(5), 32, 16, 8, 144, 0)
	got = run1(t, "BitShift", right, ti(ir.Uint16, s(3), 16, 0xffff, 1), ti(ir.Uint16, nil, 4))
	requireInts(t, got, ir.Uint16, s(3), 1, 0x0fff, 0)
	got = run1(t, "BitShift", right, ti(ir.Uint64, s(2), -1, 8), ti(ir.Uint64, s(2), 60, 64))
	requireInts(t, got, ir.Uint64, s(2), 15, 0)
	got = run1(t, "BitShift", left, ti(ir.Uint32, s(2), 3, 1), ti(ir.Uint32, s(2), 31, 32))
	requireInts(t, got, ir.Uint32, s(2), 1<<31, 0)

	_, err := run("BitShift", nil, 1, ti(ir.Uint8, s(1), 1), ti(ir.Uint8, s(1), 1))
	require.ErrorContains(t, err, "direction")
	_, err = run("BitShift", left, 1, ti(ir.Int8, s(1), 1), ti(ir.Int8, s(1), 1))
	require.ErrorContains(t, err, "i8")
}

func TestLogical(t *testing.T) {
	a := tb(s(2, 2), false, false, true, true)
	b := tb(s(2), false, true)
	requireBools(t, run1(t, "And", nil, a, b), s(2, 2), false, false, false, true)
	requireBools(t, run1(t, "Or", nil, a, b), s(2, 2), false, true, true, true)
	requireBools(t, run1(t, "Xor", nil, a, b), s(2, 2), false, true, true, false)
	_, err := run("And", nil, 1, ti(ir.Int32, s(1), 1), ti(ir.Int32, s(1), 1))
	require.ErrorContains(t, err, "i32")
	_, err = run("BitwiseAnd", nil, 1, a, b)
	require.ErrorContains(t, err, "bool")
}

func TestVariadic(t *testing.T) {
	a := tf(ir.Float32, s(3), 1, 5, nan)
	b := tf(ir.Float32, s(2, 1), 3, -1)
	c := tf(ir.Float32, nil, 2)
	requireFloats(t, run1(t, "Max", nil, a, b, c), ir.Float32, s(2, 3), []float64{3, 5, nan, 2, 5, nan}, 0)
	requireFloats(t, run1(t, "Min", nil, a, b, c), ir.Float32, s(2, 3), []float64{1, 2, nan, -1, -1, nan}, 0)
	requireFloats(t, run1(t, "Sum", nil, a, b, c), ir.Float32, s(2, 3), []float64{6, 10, nan, 2, 6, nan}, 0)
	requireFloats(t, run1(t, "Mean", nil, a, b, c), ir.Float32, s(2, 3), []float64{2, 10.0 / 3, nan, 2.0 / 3, 2, nan}, 1e-7)
	// One input: a copy.
	requireFloats(t, run1(t, "Mean", nil, b), ir.Float32, s(2, 1), []float64{3, -1}, 0)
	requireFloats(t, run1(t, "Max", nil, c), ir.Float32, s(), []float64{2}, 0)
	// Integers.
	got := run1(t, "Max", nil, ti(ir.Int8, s(3), -128, 0, 5), ti(ir.Int8, s(3), -3, -1, 127), ti(ir.Int8, nil, -2))
	requireInts(t, got, ir.Int8, s(3), -2, 0, 127)
	got = run1(t, "Min", nil, ti(ir.Uint8, s(3), 255, 0, 5), ti(ir.Uint8, s(3), 254, 1, 4))
	requireInts(t, got, ir.Uint8, s(3), 254, 0, 4)
	// Sum and Mean are float-only; no inputs at all is an error.
	_, err := run("Sum", nil, 1, ti(ir.Int32, s(1), 1), ti(ir.Int32, s(1), 1))
	require.ErrorContains(t, err, "i32")
	_, err = run("Max", nil, 1)
	require.ErrorContains(t, err, "at least 1")
	_, err = run("Mean", nil, 1, a, tf(ir.Float32, s(2), 1, 2))
	require.ErrorContains(t, err, "broadcast")
}

func TestPRelu(t *testing.T) {
	x := tf(ir.Float32, s(2, 3), -2, -1, 0, 1, -4, 3)
	got := run1(t, "PRelu", nil, x, tf(ir.Float32, s(3), 0.5, 2, 3))
	requireFloats(t, got, ir.Float32, s(2, 3), []float64{-1, -2, 0, 1, -8, 3}, 0)
	got = run1(t, "PRelu", nil, x, tf(ir.Float32, nil, 0.25))
	requireFloats(t, got, ir.Float32, s(2, 3), []float64{-0.5, -0.25, 0, 1, -1, 3}, 0)
	got = run1(t, "PRelu", nil, ti(ir.Int32, s(3), -3, 0, 4), ti(ir.Int32, s(1), 2))
	requireInts(t, got, ir.Int32, s(3), -6, 0, 4)
	// The slope broadcasts to X only: [3] with a [2,3] slope is an error.
	_, err := run("PRelu", nil, 1, tf(ir.Float32, s(3), 1, 2, 3), tf(ir.Float32, s(2, 3), 1, 2, 3, 4, 5, 6))
	require.ErrorContains(t, err, "do not broadcast")
	_, err = run("PRelu", nil, 1, ti(ir.Int8, s(1), 1), ti(ir.Int8, s(1), 1))
	require.ErrorContains(t, err, "i8")
}

func TestBinaryErrors(t *testing.T) {
	f := tf(ir.Float32, s(2, 3), 1, 2, 3, 4, 5, 6)
	_, err := run("Add", nil, 1, f, ti(ir.Int64, s(3), 1, 2, 3))
	require.ErrorContains(t, err, "i64")
	require.ErrorContains(t, err, "f32")
	_, err = run("Add", nil, 1, f, tf(ir.Float32, s(4), 1, 2, 3, 4))
	require.ErrorContains(t, err, "not broadcastable")
	_, err = run("Mul", nil, 1, f, nil)
	require.ErrorContains(t, err, "missing required input 1")
	_, err = run("Sub", nil, 1, f)
	require.ErrorContains(t, err, "want 2")
	_, err = run("Add", nil, 1, f, f, f)
	require.ErrorContains(t, err, "want 2")
	_, err = run("Add", nil, 1, tb(s(1), true), tb(s(1), true))
	require.ErrorContains(t, err, "bool")
	_, err = run("Div", nil, 1, tf(ir.Float16, s(1), 1), tf(ir.BFloat16, s(1), 1))
	require.ErrorContains(t, err, "bf16")
}
