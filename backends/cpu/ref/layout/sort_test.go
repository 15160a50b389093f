package layout

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func TestTopK(t *testing.T) {
	const big = uint64(1)<<63 + 1
	k := func(v int64) *ir.Tensor { return i64(sh(1), v) }
	smallest := ir.Int("largest", 0)
	cases := []struct {
		name       string
		a          ir.Attrs
		x, k       *ir.Tensor
		vals, idxs *ir.Tensor
	}{
		{"largest last axis", nil, f32(sh(3, 4), seq(12)...), k(3),
			f32(sh(3, 3), 3, 2, 1, 7, 6, 5, 11, 10, 9), i64(sh(3, 3), 3, 2, 1, 3, 2, 1, 3, 2, 1)},
		{"smallest axis 0 with tie", attrs(smallest, ir.Int("axis", 0)), f32(sh(3, 2), 5, 1, 2, 9, 2, 0), k(2),
			f32(sh(2, 2), 2, 0, 2, 1), i64(sh(2, 2), 1, 2, 2, 0)},
		{"ties lower index first", nil, tens(ir.Float64, sh(5), 3, 7, 7, 1, 7), k(3),
			tens(ir.Float64, sh(3), 7, 7, 7), i64(sh(3), 1, 2, 4)},
		{"smallest ties lower index first", attrs(smallest), tens(ir.Int16, sh(4), 2, 1, 2, 1), k(4),
			tens(ir.Int16, sh(4), 1, 1, 2, 2), i64(sh(4), 1, 3, 0, 2)},
		{"i32 negatives", nil, i32(sh(3), -5, 3, -1), k(2), i32(sh(2), 3, -1), i64(sh(2), 1, 2)},
		{"u64 unsigned order", nil, u64(sh(3), 1, big, 5), k(1), u64(sh(1), big), i64(sh(1), 1)},
		{"bool", nil, tens(ir.Bool, sh(4), 0, 1, 0, 1), k(2), tens(ir.Bool, sh(2), 1, 1), i64(sh(2), 1, 3)},
		{"f16 smallest", attrs(smallest), tens(ir.Float16, sh(3), 0.5, -2, 1.5), k(2),
			tens(ir.Float16, sh(2), -2, 0.5), i64(sh(2), 1, 0)},
		{"bf16 unsorted flag", attrs(ir.Int("sorted", 0)), tens(ir.BFloat16, sh(3), 1, 3, 2), k(2),
			tens(ir.BFloat16, sh(2), 3, 2), i64(sh(2), 1, 2)},
		{"K 0", nil, f32(sh(2, 3), seq(6)...), k(0), f32(sh(2, 0)), i64(sh(2, 0))},
		{"zero rows", nil, f32(sh(0, 3)), k(2), f32(sh(0, 2)), i64(sh(0, 2))},
	}
	for _, c := range cases {
		out, err := runOp("TopK", c.a, 2, c.x, c.k)
		require.NoError(t, err, c.name)
		requireTensor(t, c.vals, out[0], c.name)
		requireTensor(t, c.idxs, out[1], c.name)
	}
	out, err := runOp("TopK", nil, 1, f32(sh(3), 1, 3, 2), k(1))
	require.NoError(t, err)
	requireTensor(t, f32(sh(1), 3), out[0], "values only")
	bad := []struct {
		name string
		a    ir.Attrs
		x, k *ir.Tensor
	}{
		{"K too big", nil, f32(sh(2), 1, 2), k(3)},
		{"K negative", nil, f32(sh(2), 1, 2), k(-1)},
		{"K shape", nil, f32(sh(2), 1, 2), i64(sh(2), 1, 1)},
		{"scalar", nil, f32(sh(), 1), k(1)},
		{"axis", attrs(ir.Int("axis", 1)), f32(sh(2), 1, 2), k(1)},
	}
	for _, c := range bad {
		_, err := runOp("TopK", c.a, 2, c.x, c.k)
		require.Error(t, err, c.name)
	}
}

func TestUnique(t *testing.T) {
	const big = uint64(1)<<63 + 1
	idx := func(v ...int64) *ir.Tensor { return i64(sh(int64(len(v))), v...) }
	cases := []struct {
		name                  string
		a                     ir.Attrs
		x                     *ir.Tensor
		y, first, inv, counts *ir.Tensor
	}{
		{"sorted", nil, f32(sh(6), 2, 1, 1, 3, 4, 3),
			f32(sh(4), 1, 2, 3, 4), idx(1, 0, 3, 4), idx(1, 0, 0, 2, 3, 2), idx(2, 1, 2, 1)},
		{"unsorted", attrs(ir.Int("sorted", 0)), f32(sh(6), 2, 1, 1, 3, 4, 3),
			f32(sh(4), 2, 1, 3, 4), idx(0, 1, 3, 4), idx(0, 1, 1, 2, 3, 2), idx(1, 2, 2, 1)},
		{"axis 0 rows", attrs(ir.Int("axis", 0)), tens(ir.Int32, sh(3, 3), 1, 0, 0, 1, 0, 0, 2, 3, 4),
			tens(ir.Int32, sh(2, 3), 1, 0, 0, 2, 3, 4), idx(0, 2), idx(0, 0, 1), idx(2, 1)},
		{"axis -1 columns", attrs(ir.Int("axis", -1)), f32(sh(2, 3), 1, 0, 1, 2, 5, 2),
			f32(sh(2, 2), 0, 1, 5, 2), idx(1, 0), idx(1, 0, 1), idx(1, 2)},
		{"unsorted columns", attrs(ir.Int("axis", 1), ir.Int("sorted", 0)), f32(sh(2, 3), 1, 0, 1, 2, 5, 2),
			f32(sh(2, 2), 1, 0, 2, 5), idx(0, 1), idx(0, 1, 0), idx(2, 1)},
		{"flattened i64", nil, i64(sh(2, 2), 3, -1, 3, 0),
			i64(sh(3), -1, 0, 3), idx(1, 3, 0), idx(2, 0, 2, 1), idx(1, 1, 2)},
		{"u64 unsigned order", nil, u64(sh(2), big, 1), u64(sh(2), 1, big), idx(1, 0), idx(1, 0), idx(1, 1)},
		{"bool", nil, tens(ir.Bool, sh(3), 1, 0, 1), tens(ir.Bool, sh(2), 0, 1), idx(1, 0), idx(1, 0, 1), idx(1, 2)},
		{"f16", nil, tens(ir.Float16, sh(3), 0.5, -1, 0.5), tens(ir.Float16, sh(2), -1, 0.5), idx(1, 0), idx(1, 0, 1), idx(1, 2)},
		{"empty", nil, f32(sh(0)), f32(sh(0)), idx(), idx(), idx()},
		{"scalar", nil, tens(ir.Uint8, sh(), 7), tens(ir.Uint8, sh(1), 7), idx(0), idx(0), idx(1)},
	}
	for _, c := range cases {
		out, err := runOp("Unique", c.a, 4, c.x)
		require.NoError(t, err, c.name)
		requireTensor(t, c.y, out[0], c.name, "Y")
		requireTensor(t, c.first, out[1], c.name, "indices")
		requireTensor(t, c.inv, out[2], c.name, "inverse_indices")
		requireTensor(t, c.counts, out[3], c.name, "counts")
	}
	out, err := runOp("Unique", nil, 1, i32(sh(3), 2, 2, 1))
	require.NoError(t, err)
	requireTensor(t, i32(sh(2), 1, 2), out[0], "Y only")
	_, err = runOp("Unique", attrs(ir.Int("axis", 1)), 4, f32(sh(2), 1, 2))
	require.Error(t, err, "axis out of range")
	_, err = runOp("Unique", nil, 5, f32(sh(2), 1, 2))
	require.Error(t, err, "five outputs")
}

func TestCumSum(t *testing.T) {
	ax := func(a int64) *ir.Tensor { return i64(sh(), a) }
	five := f32(sh(5), 1, 2, 3, 4, 5)
	excl, rev := ir.Int("exclusive", 1), ir.Int("reverse", 1)
	cases := []struct {
		name    string
		a       ir.Attrs
		x, axis *ir.Tensor
		want    *ir.Tensor
	}{
		{"plain", nil, five, ax(0), f32(sh(5), 1, 3, 6, 10, 15)},
		{"exclusive", attrs(excl), five, ax(0), f32(sh(5), 0, 1, 3, 6, 10)},
		{"reverse", attrs(rev), five, ax(0), f32(sh(5), 15, 14, 12, 9, 5)},
		{"exclusive reverse", attrs(excl, rev), five, ax(-1), f32(sh(5), 14, 12, 9, 5, 0)},
		{"2-D axis 1 i32", nil, tens(ir.Float64, sh(2, 3), 1, 2, 3, 4, 5, 6), i32(sh(), 1), tens(ir.Float64, sh(2, 3), 1, 3, 6, 4, 9, 15)},
		{"2-D axis -2 1-elem", nil, i32(sh(2, 3), 1, 2, 3, 4, 5, 6), i64(sh(1), -2), i32(sh(2, 3), 1, 2, 3, 5, 7, 9)},
		{"i8 wraps", nil, tens(ir.Int8, sh(2), 100, 100), ax(0), tens(ir.Int8, sh(2), 100, -56)},
		{"u64 wraps", nil, u64(sh(2), 1<<63, 1<<63), ax(0), u64(sh(2), 1<<63, 0)},
		{"i64 negatives", nil, i64(sh(3), -1, -2, 3), ax(0), i64(sh(3), -1, -3, 0)},
		{"f16", nil, tens(ir.Float16, sh(2), 0.5, 0.25), ax(0), tens(ir.Float16, sh(2), 0.5, 0.75)},
		{"bf16 reverse", attrs(rev), tens(ir.BFloat16, sh(3), 1, 2, 4), ax(0), tens(ir.BFloat16, sh(3), 7, 6, 4)},
		{"u8 exclusive", attrs(excl), tens(ir.Uint8, sh(3), 200, 50, 10), ax(0), tens(ir.Uint8, sh(3), 0, 200, 250)},
		{"zero-sized", nil, f32(sh(0, 3)), ax(0), f32(sh(0, 3))},
	}
	for _, c := range cases {
		requireTensor(t, c.want, run1(t, "CumSum", c.a, c.x, c.axis), c.name)
	}
	bad := []struct {
		name    string
		x, axis *ir.Tensor
	}{
		{"bool", tens(ir.Bool, sh(2), 1, 1), ax(0)},
		{"axis range", five, ax(1)},
		{"axis shape", five, i64(sh(2), 0, 0)},
		{"float axis", five, f32(sh(), 0)},
		{"scalar", f32(sh(), 1), ax(0)},
	}
	for _, c := range bad {
		_, err := runOp("CumSum", nil, 1, c.x, c.axis)
		require.Error(t, err, c.name)
	}
}
