package elementwise

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestComparisons(t *testing.T) {
	// [2,3] against [3]; NaN compares false (Equal included).
	a := tf(ir.Float32, s(2, 3), 1, 2, 3, nan, -inf, 0)
	b := tf(ir.Float32, s(3), 2, 2, 2)
	requireBools(t, run1(t, "Equal", nil, a, b), s(2, 3), false, true, false, false, false, false)
	requireBools(t, run1(t, "Greater", nil, a, b), s(2, 3), false, false, true, false, false, false)
	requireBools(t, run1(t, "GreaterOrEqual", nil, a, b), s(2, 3), false, true, true, false, false, false)
	requireBools(t, run1(t, "Less", nil, a, b), s(2, 3), true, false, false, false, true, true)
	requireBools(t, run1(t, "LessOrEqual", nil, a, b), s(2, 3), true, true, false, false, true, true)

	// -0 == +0; f16 and f64.
	requireBools(t, run1(t, "Equal", nil, tf(ir.Float16, s(2), math.Copysign(0, -1), 1), tf(ir.Float16, nil, 0)), s(2), true, false)
	requireBools(t, run1(t, "Less", nil, tf(ir.Float64, s(2), 0.1, 0.2), tf(ir.Float64, s(2, 1), 0.15, 0.3)), s(2, 2), true, false, true, true)

	// Integers compare in their own signedness: u64 above 2^63 is large.
	requireBools(t, run1(t, "Greater", nil, ti(ir.Uint64, s(2), -1, 1), ti(ir.Uint64, nil, 2)), s(2), true, false)
	requireBools(t, run1(t, "Greater", nil, ti(ir.Int64, s(2), -1, 3), ti(ir.Int64, nil, 2)), s(2), false, true)
	requireBools(t, run1(t, "LessOrEqual", nil, ti(ir.Int8, s(3), -128, 5, 127), ti(ir.Int8, s(3), 127, 5, -128)), s(3), true, true, false)
	requireBools(t, run1(t, "Equal", nil, ti(ir.Uint16, s(2), 65535, 1), ti(ir.Uint16, s(2), 65535, 2)), s(2), true, false)
	// Equal accepts bool; the ordered comparisons do not.
	requireBools(t, run1(t, "Equal", nil, tb(s(2, 2), true, false, true, true), tb(s(2), true, false)), s(2, 2), true, true, true, false)
	_, err := run("Less", nil, 1, tb(s(1), true), tb(s(1), false))
	require.ErrorContains(t, err, "bool")

	// Zero-sized and scalar shapes.
	requireBools(t, run1(t, "Less", nil, tf(ir.Float32, s(0, 2)), tf(ir.Float32, nil, 1)), s(0, 2))
	requireBools(t, run1(t, "Less", nil, tf(ir.Float32, nil, 0), tf(ir.Float32, nil, 1)), s(), true)

	_, err = run("Equal", nil, 1, tf(ir.Float32, s(1), 1), tf(ir.Float64, s(1), 1))
	require.ErrorContains(t, err, "f64")
	_, err = run("Greater", nil, 1, tf(ir.Float32, s(2), 1, 2), tf(ir.Float32, s(3), 1, 2, 3))
	require.ErrorContains(t, err, "not broadcastable")
	_, err = run("Greater", nil, 1, tf(ir.Float32, s(2), 1, 2))
	require.ErrorContains(t, err, "want 2")
}

func TestWhere(t *testing.T) {
	// Three-way broadcast: cond [2,1], X [3], Y scalar.
	cond := tb(s(2, 1), true, false)
	x := tf(ir.Float32, s(3), 1, 2, 3)
	y := tf(ir.Float32, nil, -1)
	requireFloats(t, run1(t, "Where", nil, cond, x, y), ir.Float32, s(2, 3), []float64{1, 2, 3, -1, -1, -1}, 0)
	// cond [3] against X [2,1] and Y [2,3].
	cond = tb(s(3), true, false, true)
	got := run1(t, "Where", nil, cond, ti(ir.Int64, s(2, 1), 7, 8), ti(ir.Int64, s(2, 3), 1, 2, 3, 4, 5, 6))
	requireInts(t, got, ir.Int64, s(2, 3), 7, 2, 7, 8, 5, 8)
	// Any dtype is copied bit for bit: bool, u64, f16.
	requireBools(t, run1(t, "Where", nil, cond, tb(s(3), true, true, true), tb(nil, false)), s(3), true, false, true)
	got = run1(t, "Where", nil, cond, ti(ir.Uint64, nil, -1), ti(ir.Uint64, nil, 1))
	require.Equal(t, []uint64{math.MaxUint64, 1, math.MaxUint64}, []uint64{got.Uint64(0), got.Uint64(1), got.Uint64(2)})
	requireFloats(t, run1(t, "Where", nil, cond, tf(ir.Float16, s(3), 0.1, 0.2, 0.3), tf(ir.Float16, nil, 5)),
		ir.Float16, s(3), []float64{0.0999755859375, 5, 0.300048828125}, 0)
	requireFloats(t, run1(t, "Where", nil, tb(s(0)), tf(ir.Float32, s(1), 9), y), ir.Float32, s(0), []float64{}, 0)

	_, err := run("Where", nil, 1, ti(ir.Int32, s(1), 1), x, y)
	require.ErrorContains(t, err, "condition")
	_, err = run("Where", nil, 1, cond, x, tf(ir.Float64, nil, 1))
	require.ErrorContains(t, err, "f64")
	_, err = run("Where", nil, 1, tb(s(2), true, false), x, y)
	require.ErrorContains(t, err, "not broadcastable")
	_, err = run("Where", nil, 1, cond, x)
	require.ErrorContains(t, err, "want 3")
}
