package passes

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func TestBinaryElem(t *testing.T) {
	k := intElem
	f := func(v float64) elem { return elem{known: true, f: v, i: truncInt(v)} }
	sym := elem{sym: "seq"}
	for _, c := range []struct {
		op   string
		x, y elem
		dt   ir.DType
		want elem
	}{
		{"Add", k(2), k(3), ir.Int64, k(5)},
		{"Sub", k(2), k(3), ir.Int32, k(-1)},
		{"Mul", k(1 << 30), k(4), ir.Int32, k(0)}, // wraps like int32 arithmetic
		{"Div", k(7), k(2), ir.Int64, k(3)},
		{"Div", k(-7), k(2), ir.Int64, elem{}}, // rounding differs between runtimes
		{"Mod", k(7), k(3), ir.Int64, k(1)},
		{"Max", k(-1), k(4), ir.Int64, k(4)},
		{"Max", k(-1), k(4), ir.Uint64, elem{}},
		{"Less", k(1), k(2), ir.Int64, k(1)},
		{"GreaterOrEqual", k(1), k(2), ir.Int64, k(0)},
		{"Equal", f(math.NaN()), f(1), ir.Float32, elem{}},
		{"Div", f(1), f(3), ir.Float32, f(float64(float32(1.0 / 3)))},
		{"Mod", f(5.5), f(2), ir.Float32, elem{}}, // fmod=0 on floats is not defined
		{"Add", sym, k(0), ir.Int64, sym},
		{"Mul", k(1), sym, ir.Int64, sym},
		{"Mul", sym, k(2), ir.Int64, elem{}},
		{"Add", sym, f(0), ir.Float32, elem{}},
	} {
		require.Equal(t, c.want, binaryElem(c.op, c.x, c.y, c.dt, 0), "%s %v %v %v", c.op, c.x, c.y, c.dt)
	}
}

func TestCastElem(t *testing.T) {
	require.Equal(t, intElem(-2), castElem(elem{known: true, f: -2.7, i: -2}, ir.Float32, ir.Int64))
	require.Equal(t, intElem(44), castElem(intElem(300), ir.Int64, ir.Uint8))
	require.Equal(t, intElem(1), castElem(elem{known: true, f: 0.5}, ir.Float32, ir.Bool))
	require.Equal(t, elem{}, castElem(elem{known: true, f: math.Inf(1)}, ir.Float32, ir.Int32))
	require.Equal(t, 0.0999755859375, castElem(elem{known: true, f: 0.1}, ir.Float64, ir.Float16).f)
	require.Equal(t, elem{sym: "n"}, castElem(elem{sym: "n"}, ir.Int64, ir.Float32))
	require.Equal(t, elem{}, castElem(elem{sym: "n"}, ir.Int64, ir.Bool))
}

func TestInferRareOps(t *testing.T) {
	runInferCases(t, []inferCase{
		{"rare", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(4, 6, 2))
			u := b.OpN("Unique", 4, at(ir.Int("axis", 1)), x)
			return append([]*ir.Value{
				b.OpA("Constant", at(ir.Ints("value_ints", 1, 2, 3))),
				b.OpA("Constant", at(ir.Float("value_float", 1))),
				b.OpA("CenterCropPad", at(ir.Ints("axes", 0, -1)), x, i64(b, 7, 1)),
				b.Op("NonMaxSuppression", zeros(b, 1, 6, 4), zeros(b, 1, 1, 6)),
				b.Op("MelWeightMatrix", i64s(b, 8), i64s(b, 16), i64s(b, 8000), f32s(b, 0), f32s(b, 4000)),
				b.OpA("Multinomial", at(ir.Int("sample_size", 5)), zeros(b, 3, 10)),
			}, u...)
		}, []string{"i64[3]", "f32[]", "f32[7,6,1]", "i64[?,3]", "f32[9,8]", "i32[3,5]",
			"f32[4,?,2]", "i64[?]", "i64[6]", "i64[?]"}},
	})
}
