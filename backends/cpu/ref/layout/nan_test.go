package layout

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// NaN orders above every number and equals itself, as numpy's sort and
// unique (equal_nan) treat it.
func TestNaNOrdering(t *testing.T) {
	nan := math.NaN()
	x := f32(sh(3), 0, 1, 0)
	x.SetFloat64(0, nan)
	x.SetFloat64(2, nan)
	out, err := runOp("Unique", nil, 4, x)
	require.NoError(t, err)
	require.Equal(t, 1.0, out[0].Float64(0))
	require.True(t, math.IsNaN(out[0].Float64(1)))
	require.Equal(t, []int64{2}, out[0].Shape)
	requireTensor(t, i64(sh(2), 1, 0), out[1])
	requireTensor(t, i64(sh(3), 1, 0, 1), out[2])
	requireTensor(t, i64(sh(2), 1, 2), out[3])

	y := tens(ir.Float64, sh(3), 2, 0, 5)
	y.SetFloat64(1, nan)
	out, err = runOp("TopK", nil, 2, y, i64(sh(1), 2))
	require.NoError(t, err)
	require.True(t, math.IsNaN(out[0].Float64(0)))
	require.Equal(t, 5.0, out[0].Float64(1))
	requireTensor(t, i64(sh(2), 1, 2), out[1])
	out, err = runOp("TopK", attrs(ir.Int("largest", 0)), 2, y, i64(sh(1), 2))
	require.NoError(t, err)
	requireTensor(t, tens(ir.Float64, sh(2), 2, 5), out[0])
	requireTensor(t, i64(sh(2), 0, 2), out[1])
}

func TestHugeValuesAreErrors(t *testing.T) {
	bad := []struct {
		name string
		op   string
		in   []*ir.Tensor
	}{
		{"u64 index beyond int64", "Gather", []*ir.Tensor{f32(sh(2), 1, 2), u64(sh(1), 1<<63)}},
		{"reshape huge dims", "Reshape", []*ir.Tensor{f32(sh(0)), i64(sh(2), 1<<62, 4)}},
		{"reshape overflow", "Reshape", []*ir.Tensor{f32(sh(0)), i64(sh(3), 1<<30, 1<<30, 0)}},
		{"pad huge", "Pad", []*ir.Tensor{f32(sh(1), 1), i64(sh(2), math.MaxInt64, math.MaxInt64)}},
		{"expand huge", "Expand", []*ir.Tensor{f32(sh(1), 1), i64(sh(2), 1<<40, 1<<40)}},
		{"split overflowing sizes", "Split", []*ir.Tensor{f32(sh(2), 1, 2), i64(sh(2), math.MaxInt64, math.MaxInt64)}},
		{"onehot huge depth", "OneHot", []*ir.Tensor{i64(sh(1), 0), i64(sh(), 1<<40), f32(sh(2), 0, 1)}},
		{"range infinite", "Range", []*ir.Tensor{f32(sh(), 0), f32(sh(), math.Inf(1)), f32(sh(), 1)}},
		{"range inf minus inf", "Range", []*ir.Tensor{f32(sh(), math.Inf(1)), f32(sh(), math.Inf(1)), f32(sh(), 1)}},
		{"range u64 delta 0", "Range", []*ir.Tensor{u64(sh(), 0), u64(sh(), 1), u64(sh(), 0)}},
		{"range u64 too long", "Range", []*ir.Tensor{u64(sh(), 0), u64(sh(), math.MaxUint64), u64(sh(), 1)}},
		{"scatter bad reduction dtype mix", "ScatterND", []*ir.Tensor{f32(sh(1), 1), i64(sh(1, 1), 0), tens(ir.Float16, sh(1), 1)}},
	}
	for _, c := range bad {
		_, err := runOp(c.op, nil, 1, c.in...)
		require.Error(t, err, c.name)
	}
	// A range whose count fits but needs unsigned arithmetic.
	requireTensor(t, u64(sh(2), 1<<63, 1<<63+1), run1(t, "Range", nil, u64(sh(), 1<<63), u64(sh(), 1<<63+2), u64(sh(), 1)))
	requireTensor(t, u64(sh(0)), run1(t, "Range", nil, u64(sh(), 5), u64(sh(), 5), u64(sh(), 1)))
}
