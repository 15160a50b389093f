package reduce

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestEinsum(t *testing.T) {
	a := func(dt ir.DType) *ir.Tensor { return f(dt, sh(2, 3), 1, 2, 3, 4, 5, 6) }
	b := func(dt ir.DType) *ir.Tensor { return f(dt, sh(3, 2), 1, 2, 3, 4, 5, 6) }
	x := func(dt ir.DType) *ir.Tensor { return f(dt, sh(2, 2, 2), 0, 1, 2, 3, 4, 5, 6, 7) }
	y := func(dt ir.DType) *ir.Tensor { return f(dt, sh(1, 2, 2), 1, 2, 3, -1) }
	v := func(dt ir.DType, vals ...float64) *ir.Tensor { return f(dt, sh(int64(len(vals))), vals...) }
	type mk func(ir.DType) []*ir.Tensor
	cases := []struct {
		name  string
		eq    string
		in    mk
		shape []int64
		want  []float64
	}{
		{"matmul", "ij,jk->ik", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{a(dt), b(dt)} }, sh(2, 2), []float64{22, 28, 49, 64}},
		{"implicit matmul", "ij,jk", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{a(dt), b(dt)} }, sh(2, 2), []float64{22, 28, 49, 64}},
		{"spaces", " i j , j k -> i k ", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{a(dt), b(dt)} }, sh(2, 2), []float64{22, 28, 49, 64}},
		{"transpose", "ij->ji", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{a(dt)} }, sh(3, 2), []float64{1, 4, 2, 5, 3, 6}},
		{"implicit order transposes", "ba", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{a(dt)} }, sh(3, 2), []float64{1, 4, 2, 5, 3, 6}},
		{"uppercase implicit", "bA,Cb", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{a(dt), b(dt)} }, sh(3, 3),
			[]float64{9, 19, 29, 12, 26, 40, 15, 33, 51}},
		{"row sum", "ij->i", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{a(dt)} }, sh(2), []float64{6, 15}},
		{"total sum", "ij->", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{a(dt)} }, sh(), []float64{21}},
		{"inner product", "i,i", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{v(dt, 1, 2, 3), v(dt, 4, 5, 6)} }, sh(), []float64{32}},
		{"outer product", "i,j->ij", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{v(dt, 1, 2), v(dt, 3, 4, 5)} }, sh(2, 3),
			[]float64{3, 4, 5, 6, 8, 10}},
		{"three operands", "i,i,i->", func(dt ir.DType) []*ir.Tensor {
			return []*ir.Tensor{v(dt, 1, 2, 3), v(dt, 4, 5, 6), v(dt, 1, -1, 2)}
		}, sh(), []float64{30}},
		{"matrix vector", "ij,j->i", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{a(dt), v(dt, 1, 0, -1)} }, sh(2), []float64{-2, -2}},
		{"diagonal", "ii->i", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{f(dt, sh(2, 2), 1, 2, 3, 4)} }, sh(2), []float64{1, 4}},
		{"trace", "ii", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{f(dt, sh(2, 2), 1, 2, 3, 4)} }, sh(), []float64{5}},
		{"split diagonal", "iji->j", func(dt ir.DType) []*ir.Tensor {
			vals := make([]float64, 12)
			for i := range vals {
				vals[i] = float64(i)
			}
			return []*ir.Tensor{f(dt, sh(2, 3, 2), vals...)}
		}, sh(3), []float64{7, 11, 15}},
		{"batch diagonal", "...ii->...i", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{x(dt)} }, sh(2, 2), []float64{0, 3, 4, 7}},
		{"batch matmul", "bij,bjk->bik", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{x(dt), x(dt)} }, sh(2, 2, 2),
			[]float64{2, 3, 6, 11, 46, 55, 66, 79}},
		{"broadcast ellipsis", "...ij,...jk->...ik", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{x(dt), y(dt)} }, sh(2, 2, 2),
			[]float64{3, -1, 11, 1, 19, 3, 27, 5}},
		{"ellipsis of different ranks", "...ij,jk", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{x(dt), f(dt, sh(2, 2), 1, 2, 3, -1)} },
			sh(2, 2, 2), []float64{3, -1, 11, 1, 19, 3, 27, 5}},
		{"empty ellipsis", "...ij->ji", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{a(dt)} }, sh(3, 2), []float64{1, 4, 2, 5, 3, 6}},
		{"empty contraction", "ij,jk->ik", func(dt ir.DType) []*ir.Tensor { return []*ir.Tensor{f(dt, sh(2, 0)), f(dt, sh(0, 3))} },
			sh(2, 3), []float64{0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		for _, dt := range []ir.DType{ir.Float32, ir.Float64, ir.Float16} {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				got := mustRun(t, "Einsum", []ir.AttrOption{ir.Str("equation", c.eq)}, c.in(dt)...)
				requireClose(t, got, dt, c.shape, c.want, tolFor(dt))
			})
		}
	}
	t.Run("int32 matmul", func(t *testing.T) {
		ai := ints(ir.Int32, sh(2, 3), 1, 2, 3, 4, 5, 6)
		bi := ints(ir.Int32, sh(3, 2), 1, 2, 3, 4, 5, -6)
		requireInts(t, mustRun(t, "Einsum", []ir.AttrOption{ir.Str("equation", "ij,jk->ik")}, ai, bi), ir.Int32, sh(2, 2), 22, -8, 49, -8)
	})
	t.Run("uint8 wraps", func(t *testing.T) {
		u := ints(ir.Uint8, sh(2), 16, 16)
		requireInts(t, mustRun(t, "Einsum", []ir.AttrOption{ir.Str("equation", "i,i")}, u, u), ir.Uint8, sh(), 0)
	})
	for _, c := range []struct {
		name string
		eq   string
		in   []*ir.Tensor
	}{
		{"too few operands", "ij,jk->ik", []*ir.Tensor{a(ir.Float32)}},
		{"bad subscript", "i1->i", []*ir.Tensor{v(ir.Float32, 1)}},
		{"rank mismatch", "ijk->i", []*ir.Tensor{a(ir.Float32)}},
		{"dim mismatch", "ij,jk->ik", []*ir.Tensor{a(ir.Float32), a(ir.Float32)}},
		{"unknown output letter", "ij->iz", []*ir.Tensor{a(ir.Float32)}},
		{"repeated output letter", "ij->ii", []*ir.Tensor{a(ir.Float32)}},
		{"output lacks ellipsis", "...ij->ij", []*ir.Tensor{x(ir.Float32)}},
		{"two ellipses", "......->", []*ir.Tensor{x(ir.Float32)}},
		{"ellipsis does not broadcast", "...i,...i->...i", []*ir.Tensor{f(ir.Float32, sh(2, 1), 1, 2), f(ir.Float32, sh(3, 1), 1, 2, 3)}},
		{"mixed dtypes", "i,i", []*ir.Tensor{v(ir.Float32, 1), v(ir.Float64, 1)}},
		{"no inputs", "->", nil},
	} {
		_, err := runOp(t, "Einsum", 1, []ir.AttrOption{ir.Str("equation", c.eq)}, c.in...)
		require.Error(t, err, c.name)
	}
	_, err := runOp(t, "Einsum", 1, nil, a(ir.Float32))
	require.Error(t, err, "no equation")
}

func TestDet(t *testing.T) {
	for _, dt := range []ir.DType{ir.Float32, ir.Float64, ir.Float16, ir.BFloat16} {
		t.Run(dt.String(), func(t *testing.T) {
			requireClose(t, mustRun(t, "Det", nil, f(dt, sh(2, 2), 1, 2, 3, 4)), dt, sh(), []float64{-2}, tolFor(dt))
			// A zero in the corner needs a row swap.
			got := mustRun(t, "Det", nil, f(dt, sh(3, 3), 0, 2, 1, 1, 3, 2, 1, 1, 4))
			requireClose(t, got, dt, sh(), []float64{-6}, tolFor(dt))
			got = mustRun(t, "Det", nil, f(dt, sh(2, 2, 2), 1, 2, 3, 4, 2, 0, 0, 3))
			requireClose(t, got, dt, sh(2), []float64{-2, 6}, tolFor(dt))
			got = mustRun(t, "Det", nil, f(dt, sh(3, 3), 2, 0, 1, 1, 3, 2, 1, 1, 1))
			requireClose(t, got, dt, sh(), []float64{0}, tolFor(dt))
		})
	}
	requireClose(t, mustRun(t, "Det", nil, f(ir.Float32, sh(3, 0, 0))), ir.Float32, sh(3), []float64{1, 1, 1}, 0)
	requireClose(t, mustRun(t, "Det", nil, f(ir.Float32, sh(0, 2, 2))), ir.Float32, sh(0), nil, 0)
	requireClose(t, mustRun(t, "Det", nil, f(ir.Float64, sh(2, 2), 0, nan, 0, 1)), ir.Float64, sh(), []float64{nan}, 0)
	for name, x := range map[string]*ir.Tensor{
		"not square": f(ir.Float32, sh(2, 3), 1, 2, 3, 4, 5, 6),
		"rank 1":     f(ir.Float32, sh(2), 1, 2),
		"int":        ints(ir.Int32, sh(1, 1), 1),
	} {
		_, err := runOp(t, "Det", 1, nil, x)
		require.Error(t, err, name)
	}
}
