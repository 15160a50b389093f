package elementwise

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func castTo(t *testing.T, x *ir.Tensor, dt ir.DType) *ir.Tensor {
	t.Helper()
	n, ok := ONNXFromDType(dt)
	require.True(t, ok)
	return run1(t, "Cast", attrs(ir.Int("to", n)), x)
}

func TestDTypeFromONNX(t *testing.T) {
	want := map[int64]ir.DType{1: ir.Float32, 2: ir.Uint8, 3: ir.Int8, 4: ir.Uint16, 5: ir.Int16, 6: ir.Int32,
		7: ir.Int64, 9: ir.Bool, 10: ir.Float16, 11: ir.Float64, 12: ir.Uint32, 13: ir.Uint64, 16: ir.BFloat16}
	for n := int64(-1); n <= 25; n++ {
		dt, ok := DTypeFromONNX(n)
		w, wok := want[n]
		require.Equal(t, wok, ok, n)
		require.Equal(t, w, dt, n)
		if ok {
			back, ok := ONNXFromDType(dt)
			require.True(t, ok)
			require.Equal(t, n, back)
		}
	}
	_, ok := ONNXFromDType(ir.Invalid)
	require.False(t, ok)
}

func TestCastFloatToFloat(t *testing.T) {
	// f32 -> f16: 0.1 rounds to 0x2E66; 65519 stays below the 65520
	// midpoint; 65520 ties to even (inf); 1e-8 underflows; 3e-8 rounds up
	// to the smallest subnormal 2^-24.
	got := castTo(t, tf(ir.Float32, s(6), 0.1, 65519, 65520, 1e-8, 3e-8, -inf), ir.Float16)
	requireFloats(t, got, ir.Float16, s(6), []float64{0.0999755859375, 65504, inf, 0, math.Ldexp(1, -24), -inf}, 0)
	// f64 -> f16 rounds once: 1+2^-11+2^-40 is just above the midpoint
	// between 1 and 1+2^-10 (through float32 it would tie and round down).
	got = castTo(t, tf(ir.Float64, s(2), 1+math.Ldexp(1, -11)+math.Ldexp(1, -40), 1+math.Ldexp(1, -11)), ir.Float16)
	requireFloats(t, got, ir.Float16, s(2), []float64{1 + math.Ldexp(1, -10), 1}, 0)
	// f64 -> bf16 likewise: 1+2^-8+2^-40 -> 1+2^-7.
	got = castTo(t, tf(ir.Float64, s(1), 1+math.Ldexp(1, -8)+math.Ldexp(1, -40)), ir.BFloat16)
	requireFloats(t, got, ir.BFloat16, s(1), []float64{1.0078125}, 0)
	// f32 -> bf16 rounds to nearest even: ties 1+2^-8 -> 1, 1+3·2^-8 -> 1+2^-6;
	// 1+2^-8+2^-20 -> 1+2^-7.
	got = castTo(t, tf(ir.Float32, s(4), 1+math.Ldexp(1, -8), 1+3*math.Ldexp(1, -8), 1+math.Ldexp(1, -8)+math.Ldexp(1, -20), nan), ir.BFloat16)
	requireFloats(t, got, ir.BFloat16, s(4), []float64{1, 1.015625, 1.0078125, nan}, 0)
	// Widening is exact.
	got = castTo(t, tf(ir.BFloat16, s(2), 1.0078125, -3), ir.Float32)
	requireFloats(t, got, ir.Float32, s(2), []float64{1.0078125, -3}, 0)
	got = castTo(t, tf(ir.Float16, s(2), 0.0999755859375, 65504), ir.Float64)
	requireFloats(t, got, ir.Float64, s(2), []float64{0.0999755859375, 65504}, 0)
	got = castTo(t, tf(ir.Float64, s(2), 0.1, 1e300), ir.Float32)
	requireFloats(t, got, ir.Float32, s(2), []float64{float64(float32(0.1)), inf}, 0)
}

func TestCastIntToFloat(t *testing.T) {
	// Above 2048 f16 spacing is 2: 2049 ties to 2048, 2051 to 2052.
	got := castTo(t, ti(ir.Int32, s(4), 2049, 2051, -65519, 65520), ir.Float16)
	requireFloats(t, got, ir.Float16, s(4), []float64{2048, 2052, -65504, inf}, 0)
	// int64 -> bf16 rounds once: 2^24+2^16+1 is above the midpoint
	// 2^24+2^16 (through float32 it would tie and round down to 2^24).
	got = castTo(t, ti(ir.Int64, s(2), 1<<24+1<<16+1, -(1<<24+1<<16+1)), ir.BFloat16)
	requireFloats(t, got, ir.BFloat16, s(2), []float64{1<<24 + 1<<17, -(1<<24 + 1<<17)}, 0)
	// Beyond 2^53 as well: 2^60+2^52+1 -> 2^60+2^53 (through float64 it
	// would tie and round down to 2^60).
	got = castTo(t, ti(ir.Int64, s(2), 1<<60+1<<52+1, -(1<<60+1<<52+1)), ir.BFloat16)
	requireFloats(t, got, ir.BFloat16, s(2), []float64{1<<60 + 1<<53, -(1<<60 + 1<<53)}, 0)
	got = castTo(t, ti(ir.Uint64, s(1), math.MinInt64+1<<55+1), ir.BFloat16)
	requireFloats(t, got, ir.BFloat16, s(1), []float64{1<<63 + 1<<56}, 0)
	got = castTo(t, ti(ir.Int64, s(2), 1<<53+1, math.MinInt64), ir.Float32)
	requireFloats(t, got, ir.Float32, s(2), []float64{1 << 53, -(1 << 63)}, 0)
	got = castTo(t, ti(ir.Int64, s(1), 1<<53+1), ir.Float64)
	requireFloats(t, got, ir.Float64, s(1), []float64{1 << 53}, 0)
	// Unsigned 64-bit values above 2^63 stay positive.
	got = castTo(t, ti(ir.Uint64, s(2), -1, 5), ir.Float64)
	requireFloats(t, got, ir.Float64, s(2), []float64{1 << 64, 5}, 0)
	got = castTo(t, ti(ir.Uint64, s(1), -1), ir.Float16)
	requireFloats(t, got, ir.Float16, s(1), []float64{inf}, 0)
	got = castTo(t, ti(ir.Uint8, s(2), 255, 0), ir.BFloat16)
	requireFloats(t, got, ir.BFloat16, s(2), []float64{255, 0}, 0)
}

func TestCastToInt(t *testing.T) {
	// Truncation toward zero; in-range values of int64 wrap to the width.
	got := castTo(t, tf(ir.Float32, s(6), -2.7, -0.5, 2.9, 1e10, nan, inf), ir.Int32)
	requireInts(t, got, ir.Int32, s(6), -2, 0, 2, 1410065408, 0, 0)
	got = castTo(t, tf(ir.Float64, s(4), -1, 300, 255.9, -0.99), ir.Uint8)
	requireInts(t, got, ir.Uint8, s(4), 255, 44, 255, 0)
	got = castTo(t, tf(ir.Float64, s(3), 1.8e19, -1, nan), ir.Uint64)
	require.Equal(t, []uint64{18000000000000000000, math.MaxUint64, 1 << 63}, []uint64{got.Uint64(0), got.Uint64(1), got.Uint64(2)})
	got = castTo(t, tf(ir.Float64, s(3), -9e18, 1e19, -inf), ir.Int64)
	requireInts(t, got, ir.Int64, s(3), -9000000000000000000, math.MinInt64, math.MinInt64)
	got = castTo(t, tf(ir.Float16, s(2), -3.5, 1000.5), ir.Int16)
	requireInts(t, got, ir.Int16, s(2), -3, 1000)
	// Integer to integer wraps (two's complement).
	got = castTo(t, ti(ir.Int64, s(4), 300, -129, 127, -128), ir.Int8)
	requireInts(t, got, ir.Int8, s(4), 44, 127, 127, -128)
	got = castTo(t, ti(ir.Uint8, s(2), 255, 7), ir.Int8)
	requireInts(t, got, ir.Int8, s(2), -1, 7)
	got = castTo(t, ti(ir.Int8, s(2), -1, 7), ir.Uint16)
	requireInts(t, got, ir.Uint16, s(2), 65535, 7)
	got = castTo(t, ti(ir.Uint64, s(1), -1), ir.Int64)
	requireInts(t, got, ir.Int64, s(1), -1)
	got = castTo(t, ti(ir.Int32, s(1), -1), ir.Uint64)
	require.Equal(t, uint64(math.MaxUint64), got.Uint64(0))
	got = castTo(t, ti(ir.Uint32, s(1), 4000000000), ir.Int64)
	requireInts(t, got, ir.Int64, s(1), 4000000000)
}

func TestCastBool(t *testing.T) {
	got := castTo(t, tf(ir.Float32, s(6), 0, math.Copysign(0, -1), 0.5, nan, -inf, 1e-40), ir.Bool)
	requireBools(t, got, s(6), false, false, true, true, true, true)
	got = castTo(t, ti(ir.Int16, s(3), 0, -5, 256), ir.Bool)
	requireBools(t, got, s(3), false, true, true)
	got = castTo(t, ti(ir.Uint64, s(2), 0, -1), ir.Bool)
	requireBools(t, got, s(2), false, true)
	got = castTo(t, tb(s(2), true, false), ir.Float16)
	requireFloats(t, got, ir.Float16, s(2), []float64{1, 0}, 0)
	got = castTo(t, tb(s(2), true, false), ir.Int64)
	requireInts(t, got, ir.Int64, s(2), 1, 0)
	got = castTo(t, tb(s(2, 0)), ir.Float32)
	requireFloats(t, got, ir.Float32, s(2, 0), []float64{}, 0)
}

func TestCastErrors(t *testing.T) {
	x := tf(ir.Float32, s(1), 1)
	for _, to := range []int64{8, 14, 17, 21, 0, 99} {
		_, err := run("Cast", attrs(ir.Int("to", to)), 1, x)
		require.ErrorIs(t, err, ir.ErrUnsupported, to)
	}
	_, err := run("Cast", nil, 1, x)
	require.ErrorContains(t, err, "`to`")
	_, err = run("Cast", attrs(ir.Int("to", 1)), 1, nil)
	require.ErrorContains(t, err, "missing")
}

func TestCastLike(t *testing.T) {
	got := run1(t, "CastLike", nil, tf(ir.Float32, s(3), 1.5, -2.5, 0.1), ti(ir.Int8, s(0)))
	requireInts(t, got, ir.Int8, s(3), 1, -2, 0)
	got = run1(t, "CastLike", nil, tf(ir.Float64, s(1), 0.1), tf(ir.Float16, s(2), 1, 2))
	requireFloats(t, got, ir.Float16, s(1), []float64{0.0999755859375}, 0)
	_, err := run("CastLike", nil, 1, tf(ir.Float64, s(1), 0.1))
	require.ErrorContains(t, err, "missing")
}

func TestIdentityCopiesBits(t *testing.T) {
	x := ir.NewTensor(ir.Float32, s(2))
	copy(x.Data, []byte{1, 0, 0xc0, 0x7f, 0, 0, 0x80, 0xbf}) // a NaN with payload, -1
	got := run1(t, "Identity", nil, x)
	require.Equal(t, x.Data, got.Data)
	require.Equal(t, x.Shape, got.Shape)
	got.Data[0] = 9
	require.Equal(t, byte(1), x.Data[0], "the input must not be aliased")
	requireBools(t, run1(t, "Identity", nil, tb(s(1), true)), s(1), true)
	requireInts(t, run1(t, "Identity", nil, ti(ir.Uint64, nil, 7)), ir.Uint64, s(), 7)
}

func TestDropout(t *testing.T) {
	x := tf(ir.Float32, s(2, 3), 1, -2, 3, 4, 5, 6)
	want := []float64{1, -2, 3, 4, 5, 6}
	requireFloats(t, run1(t, "Dropout", nil, x), ir.Float32, s(2, 3), want, 0)
	out, err := run("Dropout", nil, 2, x, tf(ir.Float32, nil, 0.1))
	require.NoError(t, err)
	requireFloats(t, out[0], ir.Float32, s(2, 3), want, 0)
	requireBools(t, out[1], s(2, 3), true, true, true, true, true, true)
	out, err = run("Dropout", nil, 2, x, tf(ir.Float64, nil, 0.7), tb(nil, false))
	require.NoError(t, err)
	requireFloats(t, out[0], ir.Float32, s(2, 3), want, 0)
	// Training mode with ratio 0 is still the identity.
	out, err = run("Dropout", nil, 2, x, tf(ir.Float32, nil, 0), tb(nil, true))
	require.NoError(t, err)
	requireFloats(t, out[0], ir.Float32, s(2, 3), want, 0)
	requireBools(t, out[1], s(2, 3), true, true, true, true, true, true)

	// Training with a real ratio (default 0.5 included) is random: unsupported.
	_, err = run("Dropout", nil, 1, x, nil, tb(nil, true))
	require.ErrorIs(t, err, ir.ErrUnsupported)
	_, err = run("Dropout", nil, 1, x, tf(ir.Float32, nil, 0.3), tb(nil, true))
	require.ErrorIs(t, err, ir.ErrUnsupported)
	_, err = run("Dropout", nil, 1, ti(ir.Int32, s(1), 1))
	require.ErrorContains(t, err, "i32")
	_, err = run("Dropout", nil, 3, x)
	require.ErrorContains(t, err, "outputs")
}
