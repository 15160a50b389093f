package layout

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// u64 builds a Uint64 tensor from bit patterns.
func u64(shape []int64, vals ...uint64) *ir.Tensor {
	t := ir.NewTensor(ir.Uint64, shape)
	for i, v := range vals {
		t.SetInt64(i, int64(v))
	}
	return t
}

func TestScatterElementsMove(t *testing.T) {
	cases := []struct {
		name    string
		axis    int64
		data    shapedVals
		indices *ir.Tensor
		updates shapedVals
		want    []float64
	}{
		{"axis 0", 0, shapedVals{sh(3, 3), make([]float64, 9)}, i64(sh(2, 3), 1, 0, 2, 0, 2, 1),
			shapedVals{sh(2, 3), []float64{1, 2, 3, 4, 5, 6}}, []float64{4, 2, 0, 1, 0, 6, 0, 5, 3}},
		{"axis 1 negative i32", 1, shapedVals{sh(1, 5), []float64{1, 2, 3, 4, 5}}, i32(sh(1, 2), 1, -2),
			shapedVals{sh(1, 2), []float64{11, 21}}, []float64{1, 11, 3, 21, 5}},
		{"last update wins", -1, shapedVals{sh(1, 3), []float64{0, 0, 0}}, i64(sh(1, 2), 1, 1),
			shapedVals{sh(1, 2), []float64{5, 7}}, []float64{0, 7, 0}},
		{"no updates", 0, shapedVals{sh(2), []float64{1, 2}}, i64(sh(0)), shapedVals{sh(0), nil}, []float64{1, 2}},
	}
	for _, c := range cases {
		for _, dt := range allDTypes {
			data := tens(dt, c.data.shape, c.data.vals...)
			orig := data.Clone()
			got := run1(t, "ScatterElements", attrs(ir.Int("axis", c.axis)), data, c.indices, tens(dt, c.updates.shape, c.updates.vals...))
			requireTensor(t, tens(dt, c.data.shape, c.want...), got, "%s/%v", c.name, dt)
			require.Equal(t, orig.Data, data.Data, "input unchanged")
		}
	}
}

// reduceCase is one reduction test with tensors given explicitly.
type reduceCase struct {
	name      string
	reduction string
	data      *ir.Tensor
	indices   *ir.Tensor
	updates   *ir.Tensor
	want      *ir.Tensor
}

func TestScatterElementsReduce(t *testing.T) {
	f := func(v ...float64) *ir.Tensor { return f32(sh(int64(len(v))), v...) }
	ty := func(dt ir.DType, v ...float64) *ir.Tensor { return tens(dt, sh(int64(len(v))), v...) }
	twice := i64(sh(2), 1, 1)
	zz := i64(sh(2), 0, 0)
	const big = uint64(1)<<63 + 5
	cases := []reduceCase{
		{"f32 add", "add", f(1, 2, 3), twice, f(10, 20), f(1, 32, 3)},
		{"f32 mul", "mul", f(1, 2, 3), twice, f(10, 20), f(1, 400, 3)},
		{"f32 max", "max", f(1, 2, 3), twice, f(10, -20), f(1, 10, 3)},
		{"f32 min", "min", f(1, 2, 3), twice, f(10, -20), f(1, -20, 3)},
		{"f16 add", "add", ty(ir.Float16, 1), zz, ty(ir.Float16, 0.5, 0.25), ty(ir.Float16, 1.75)},
		{"bf16 mul", "mul", ty(ir.BFloat16, 3), zz, ty(ir.BFloat16, 0.5, -2), ty(ir.BFloat16, -3)},
		{"f64 add", "add", ty(ir.Float64, 0.1), zz, ty(ir.Float64, 0.2, 0), ty(ir.Float64, 0.30000000000000004)}, // the IEEE sum,
		{"i8 mul wraps", "mul", ty(ir.Int8, 2), zz, ty(ir.Int8, 10, 20), ty(ir.Int8, -112)},
		{"i64 min", "min", ty(ir.Int64, -3), zz, ty(ir.Int64, -5, 7), ty(ir.Int64, -5)},
		{"u8 add wraps", "add", ty(ir.Uint8, 250), zz, ty(ir.Uint8, 3, 4), ty(ir.Uint8, 1)},
		{"u8 max", "max", ty(ir.Uint8, 200), zz, ty(ir.Uint8, 100, 255), ty(ir.Uint8, 255)},
		{"u64 max unsigned", "max", u64(sh(1), 1), zz, u64(sh(2), big, 3), u64(sh(1), big)},
		{"u64 min unsigned", "min", u64(sh(1), big), zz, u64(sh(2), 5, 7), u64(sh(1), 5)},
		{"bool add is or", "add", ty(ir.Bool, 0, 1), i64(sh(1), 0), ty(ir.Bool, 1), ty(ir.Bool, 1, 1)},
		{"bool mul is and", "mul", ty(ir.Bool, 1, 1), i64(sh(1), 1), ty(ir.Bool, 0), ty(ir.Bool, 1, 0)},
	}
	for _, c := range cases {
		got := run1(t, "ScatterElements", attrs(ir.Str("reduction", c.reduction)), c.data, c.indices, c.updates)
		requireTensor(t, c.want, got, c.name)
	}
}

func TestScatterElementsErrors(t *testing.T) {
	x := f32(sh(2, 2), 1, 2, 3, 4)
	bad := []struct {
		name string
		a    ir.Attrs
		in   []*ir.Tensor
	}{
		{"index too big", nil, []*ir.Tensor{x, i64(sh(1, 1), 2), f32(sh(1, 1), 0)}},
		{"index too small", nil, []*ir.Tensor{x, i64(sh(1, 1), -3), f32(sh(1, 1), 0)}},
		{"shapes differ", nil, []*ir.Tensor{x, i64(sh(1, 1), 0), f32(sh(1, 2), 0, 0)}},
		{"dtype", nil, []*ir.Tensor{x, i64(sh(1, 1), 0), i64(sh(1, 1), 0)}},
		{"rank", nil, []*ir.Tensor{x, i64(sh(1), 0), f32(sh(1), 0)}},
		{"axis", attrs(ir.Int("axis", 2)), []*ir.Tensor{x, i64(sh(1, 1), 0), f32(sh(1, 1), 0)}},
	}
	for _, c := range bad {
		_, err := runOp("ScatterElements", c.a, 1, c.in...)
		require.Error(t, err, c.name)
	}
	_, err := runOp("ScatterElements", attrs(ir.Str("reduction", "mean")), 1, x, i64(sh(1, 1), 0), f32(sh(1, 1), 0))
	require.True(t, errors.Is(err, ir.ErrUnsupported), "%v", err)
}

func TestScatterND(t *testing.T) {
	cases := []struct {
		name    string
		data    shapedVals
		indices *ir.Tensor
		updates shapedVals
		want    []float64
	}{
		{"elements", shapedVals{sh(8), []float64{1, 2, 3, 4, 5, 6, 7, 8}}, i64(sh(4, 1), 4, 3, 1, 7),
			shapedVals{sh(4), []float64{9, 10, 11, 12}}, []float64{1, 11, 3, 10, 9, 6, 7, 12}},
		{"rows", shapedVals{sh(2, 2), seq(4)}, i64(sh(1, 1), 1), shapedVals{sh(1, 2), []float64{8, 9}}, []float64{0, 1, 8, 9}},
		{"negative i32", shapedVals{sh(2, 2), seq(4)}, i32(sh(1, 2), -1, 0), shapedVals{sh(1), []float64{7}}, []float64{0, 1, 7, 3}},
		{"no tuples", shapedVals{sh(2), seq(2)}, i64(sh(0, 1)), shapedVals{sh(0), nil}, seq(2)},
	}
	for _, c := range cases {
		for _, dt := range allDTypes {
			got := run1(t, "ScatterND", nil, tens(dt, c.data.shape, c.data.vals...), c.indices, tens(dt, c.updates.shape, c.updates.vals...))
			requireTensor(t, tens(dt, c.data.shape, c.want...), got, "%s/%v", c.name, dt)
		}
	}
	idx := i64(sh(3, 1), 0, 0, 2)
	f := func(v ...float64) *ir.Tensor { return f32(sh(int64(len(v))), v...) }
	reds := []reduceCase{
		{"add", "add", f(1, 1, 1, 1), idx, f(1, 2, 3), f(4, 1, 4, 1)},
		{"mul", "mul", f(1, 1, 1, 1), idx, f(1, 2, 3), f(2, 1, 3, 1)},
		{"max", "max", f(5, 5, 5, 5), idx, f(1, 7, 3), f(7, 5, 5, 5)},
		{"min", "min", f(5, 5, 5, 5), idx, f(1, 7, 3), f(1, 5, 3, 5)},
		{"i32 mul", "mul", i32(sh(2), 3, 4), i64(sh(2, 1), 1, 1), i32(sh(2), -1, 5), i32(sh(2), 3, -20)},
	}
	for _, c := range reds {
		got := run1(t, "ScatterND", attrs(ir.Str("reduction", c.reduction)), c.data, c.indices, c.updates)
		requireTensor(t, c.want, got, c.name)
	}
	x := f32(sh(2, 2), 1, 2, 3, 4)
	bad := []struct {
		name string
		in   []*ir.Tensor
	}{
		{"update shape", []*ir.Tensor{x, i64(sh(1, 1), 0), f32(sh(1), 0)}},
		{"index too big", []*ir.Tensor{x, i64(sh(1, 2), 0, 2), f32(sh(1), 0)}},
		{"tuple too long", []*ir.Tensor{x, i64(sh(1, 3), 0, 0, 0), f32(sh(1), 0)}},
		{"dtype", []*ir.Tensor{x, i64(sh(1, 2), 0, 0), i64(sh(1), 0)}},
	}
	for _, c := range bad {
		_, err := runOp("ScatterND", nil, 1, c.in...)
		require.Error(t, err, c.name)
	}
}
