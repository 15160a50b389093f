package layout

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func TestConstantOfShape(t *testing.T) {
	val := func(dt ir.DType, v float64) ir.Attrs { return attrs(ir.TensorAttr("value", tens(dt, sh(1), v))) }
	cases := []struct {
		name  string
		a     ir.Attrs
		shape *ir.Tensor
		want  *ir.Tensor
	}{
		{"default f32 zero", nil, i64(sh(2), 2, 3), f32(sh(2, 3), 0, 0, 0, 0, 0, 0)},
		{"i32 seven", val(ir.Int32, 7), i64(sh(1), 2), i32(sh(2), 7, 7)},
		{"bool", val(ir.Bool, 1), i64(sh(1), 3), tens(ir.Bool, sh(3), 1, 1, 1)},
		{"f16 scalar", val(ir.Float16, 1.5), i64(sh(0)), tens(ir.Float16, sh(), 1.5)},
		{"u64", val(ir.Uint64, 9), i32(sh(2), 1, 1), tens(ir.Uint64, sh(1, 1), 9)},
		{"zero dim", val(ir.Int8, -1), i64(sh(2), 3, 0), tens(ir.Int8, sh(3, 0))},
	}
	for _, c := range cases {
		requireTensor(t, c.want, run1(t, "ConstantOfShape", c.a, c.shape), c.name)
	}
	bad := []struct {
		name  string
		a     ir.Attrs
		shape *ir.Tensor
	}{
		{"negative", nil, i64(sh(1), -1)},
		{"two values", attrs(ir.TensorAttr("value", f32(sh(2), 1, 2))), i64(sh(1), 2)},
		{"huge", nil, i64(sh(3), 1<<30, 1<<30, 1<<30)},
		{"float shape", nil, f32(sh(1), 2)},
		{"2-D shape", nil, i64(sh(1, 1), 2)},
	}
	for _, c := range bad {
		_, err := runOp("ConstantOfShape", c.a, 1, c.shape)
		require.Error(t, err, c.name)
	}
}

func TestRange(t *testing.T) {
	sc := func(dt ir.DType, v float64) *ir.Tensor { return tens(dt, sh(), v) }
	si := func(v int64) *ir.Tensor { return i64(sh(), v) }
	su := func(v uint64) *ir.Tensor { return u64(sh(), v) }
	cases := []struct {
		name          string
		start, lim, d *ir.Tensor
		want          *ir.Tensor
	}{
		{"i64 negative delta", si(10), si(4), si(-3), i64(sh(2), 10, 7)},
		{"f32", sc(ir.Float32, 1), sc(ir.Float32, 5), sc(ir.Float32, 2), f32(sh(2), 1, 3)},
		{"f32 fraction", sc(ir.Float32, 0), sc(ir.Float32, 1), sc(ir.Float32, 0.25), f32(sh(4), 0, 0.25, 0.5, 0.75)},
		{"f64", sc(ir.Float64, 0.5), sc(ir.Float64, 2), sc(ir.Float64, 0.5), tens(ir.Float64, sh(3), 0.5, 1, 1.5)},
		{"f16", sc(ir.Float16, 0), sc(ir.Float16, 2), sc(ir.Float16, 0.5), tens(ir.Float16, sh(4), 0, 0.5, 1, 1.5)},
		{"i32 empty", sc(ir.Int32, 5), sc(ir.Int32, 1), sc(ir.Int32, 1), i32(sh(0))},
		{"i8", sc(ir.Int8, -3), sc(ir.Int8, 3), sc(ir.Int8, 2), tens(ir.Int8, sh(3), -3, -1, 1)},
		{"u8", sc(ir.Uint8, 250), sc(ir.Uint8, 255), sc(ir.Uint8, 2), tens(ir.Uint8, sh(3), 250, 252, 254)},
		{"u64 near max", su(math.MaxUint64 - 2), su(math.MaxUint64), su(1), u64(sh(2), math.MaxUint64-2, math.MaxUint64-1)},
		{"i64 full span", si(math.MinInt64), si(math.MaxInt64), si(1 << 62),
			i64(sh(4), math.MinInt64, -1<<62, 0, 1<<62)},
	}
	for _, c := range cases {
		requireTensor(t, c.want, run1(t, "Range", nil, c.start, c.lim, c.d), c.name)
	}
	bad := []struct {
		name string
		in   []*ir.Tensor
	}{
		{"delta 0", []*ir.Tensor{si(0), si(3), si(0)}},
		{"float delta 0", []*ir.Tensor{sc(ir.Float32, 0), sc(ir.Float32, 1), sc(ir.Float32, 0)}},
		{"mixed dtypes", []*ir.Tensor{si(0), sc(ir.Int32, 3), si(1)}},
		{"not scalar", []*ir.Tensor{i64(sh(2), 0, 1), si(3), si(1)}},
		{"bool", []*ir.Tensor{sc(ir.Bool, 0), sc(ir.Bool, 1), sc(ir.Bool, 1)}},
		{"too long", []*ir.Tensor{si(0), si(math.MaxInt64), si(1)}},
	}
	for _, c := range bad {
		_, err := runOp("Range", nil, 1, c.in...)
		require.Error(t, err, c.name)
	}
}

func TestOneHot(t *testing.T) {
	cases := []struct {
		name                 string
		a                    ir.Attrs
		indices, depth, vals *ir.Tensor
		want                 *ir.Tensor
	}{
		{"last axis negative index, f32 depth", nil, i64(sh(3), 0, 2, -1), f32(sh(), 3), f32(sh(2), 0, 1),
			f32(sh(3, 3), 1, 0, 0, 0, 0, 1, 0, 0, 1)},
		{"axis 0 out of range is all off", attrs(ir.Int("axis", 0)), i64(sh(2), 1, 5), i64(sh(1), 4), i32(sh(2), -1, 7),
			i32(sh(4, 2), -1, -1, 7, -1, -1, -1, -1, -1)},
		{"middle axis bool", attrs(ir.Int("axis", 1)), i32(sh(2, 2), 0, 1, 1, -2), i64(sh(), 2), tens(ir.Bool, sh(2), 0, 1),
			tens(ir.Bool, sh(2, 2, 2), 1, 0, 0, 1, 0, 1, 1, 0)},
		{"float index truncates", nil, f32(sh(1), 1.7), i64(sh(), 3), tens(ir.Int8, sh(2), 0, 1), tens(ir.Int8, sh(1, 3), 0, 1, 0)},
		{"no indices", nil, i64(sh(0)), i64(sh(), 3), f32(sh(2), 0, 1), f32(sh(0, 3))},
	}
	for _, c := range cases {
		requireTensor(t, c.want, run1(t, "OneHot", c.a, c.indices, c.depth, c.vals), c.name)
	}
	bad := []struct {
		name string
		a    ir.Attrs
		in   []*ir.Tensor
	}{
		{"depth 0", nil, []*ir.Tensor{i64(sh(1), 0), i64(sh(), 0), f32(sh(2), 0, 1)}},
		{"three values", nil, []*ir.Tensor{i64(sh(1), 0), i64(sh(), 2), f32(sh(3), 0, 1, 2)}},
		{"axis", attrs(ir.Int("axis", 2)), []*ir.Tensor{i64(sh(1), 0), i64(sh(), 2), f32(sh(2), 0, 1)}},
		{"depth shape", nil, []*ir.Tensor{i64(sh(1), 0), i64(sh(2), 2, 2), f32(sh(2), 0, 1)}},
	}
	for _, c := range bad {
		_, err := runOp("OneHot", c.a, 1, c.in...)
		require.Error(t, err, c.name)
	}
}

func TestEyeLike(t *testing.T) {
	cases := []struct {
		name string
		a    ir.Attrs
		in   *ir.Tensor
		want *ir.Tensor
	}{
		{"f32 wide", nil, f32(sh(3, 4), seq(12)...), f32(sh(3, 4), 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0)},
		{"k 1 to i64", attrs(ir.Int("k", 1), ir.Int("dtype", 7)), i32(sh(3, 3), 5, 5, 5, 5, 5, 5, 5, 5, 5),
			i64(sh(3, 3), 0, 1, 0, 0, 0, 1, 0, 0, 0)},
		{"k -2 bool", attrs(ir.Int("k", -2)), tens(ir.Bool, sh(3, 2), 1, 1, 1, 1, 1, 1), tens(ir.Bool, sh(3, 2), 0, 0, 0, 0, 1, 0)},
		{"k beyond to f16", attrs(ir.Int("k", 5), ir.Int("dtype", 10)), f32(sh(2, 2), 1, 2, 3, 4), tens(ir.Float16, sh(2, 2), 0, 0, 0, 0)},
		{"bf16", attrs(ir.Int("dtype", 16)), u64(sh(1, 2), 0, 0), tens(ir.BFloat16, sh(1, 2), 1, 0)},
		{"zero rows", nil, f32(sh(0, 3)), f32(sh(0, 3))},
	}
	for _, c := range cases {
		requireTensor(t, c.want, run1(t, "EyeLike", c.a, c.in), c.name)
	}
	_, err := runOp("EyeLike", nil, 1, f32(sh(1, 1, 1), 0))
	require.Error(t, err, "rank 3")
	_, err = runOp("EyeLike", attrs(ir.Int("dtype", 8)), 1, f32(sh(1, 1), 0))
	require.True(t, errors.Is(err, ir.ErrUnsupported), "string dtype: %v", err)
}

func TestTrilu(t *testing.T) {
	data := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	k := func(v int64) *ir.Tensor { return i64(sh(), v) }
	lower := attrs(ir.Int("upper", 0))
	runMoveCases(t, "Trilu", []moveCase{
		{name: "upper", shape: sh(3, 4), data: data, wantSh: sh(3, 4), want: []float64{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}},
		{name: "lower", attrs: lower, shape: sh(3, 4), data: data, wantSh: sh(3, 4), want: []float64{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}},
		{name: "upper k 1", shape: sh(3, 4), data: data, extra: []*ir.Tensor{k(1)}, wantSh: sh(3, 4),
			want: []float64{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}},
		{name: "lower k -1", attrs: lower, shape: sh(3, 4), data: data, extra: []*ir.Tensor{k(-1)}, wantSh: sh(3, 4),
			want: []float64{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}},
		{name: "upper k -5 keeps all", shape: sh(3, 4), data: data, extra: []*ir.Tensor{k(-5)}, wantSh: sh(3, 4), want: data},
		{name: "upper k 10 keeps none", shape: sh(3, 4), data: data, extra: []*ir.Tensor{k(10)}, wantSh: sh(3, 4), want: make([]float64, 12)},
		{name: "lower k 10 keeps all", attrs: lower, shape: sh(3, 4), data: data, extra: []*ir.Tensor{i32(sh(1), 10)}, wantSh: sh(3, 4), want: data},
		{name: "batched", shape: sh(2, 2, 2), data: data[:8], wantSh: sh(2, 2, 2), want: []float64{1, 2, 0, 4, 5, 6, 0, 8}},
		{name: "zero batch", shape: sh(0, 2, 2), wantSh: sh(0, 2, 2), want: nil},
		{name: "rank 1", shape: sh(3), wantErr: true},
		{name: "k two values", shape: sh(2, 2), extra: []*ir.Tensor{i64(sh(2), 0, 1)}, wantErr: true},
	})
}
