package elementwise

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// Inputs of every case: activationInput rounded to the dtype. Expected
// values computed with numpy in float64 (float32 attribute values), then
// rounded to the dtype.
var activationInput = []float64{-3, -1, -0.25, 0, 0.5, 1, 2.5}

var activationCases = []struct {
	op    string
	attrs ir.Attrs
	dt    ir.DType
	want  []float64
}{
	{"Elu", nil, ir.Float32, []float64{-0.9502129554748535, -0.6321205496788025, -0.22119921445846558, 0.0, 0.5, 1.0, 2.5}},
	{"Elu", nil, ir.Float64, []float64{-0.950212931632136, -0.6321205588285577, -0.22119921692859512, 0.0, 0.5, 1.0, 2.5}},
	{"Elu", nil, ir.Float16, []float64{-0.9501953125, -0.63232421875, -0.22119140625, 0.0, 0.5, 1.0, 2.5}},
	{"Elu", attrs(ir.Float("alpha", 2)), ir.Float32, []float64{-1.900425910949707, -1.264241099357605, -0.44239842891693115, 0.0, 0.5, 1.0, 2.5}},
	{"Elu", attrs(ir.Float("alpha", 2)), ir.Float64, []float64{-1.900425863264272, -1.2642411176571153, -0.44239843385719024, 0.0, 0.5, 1.0, 2.5}},
	{"Elu", attrs(ir.Float("alpha", 2)), ir.Float16, []float64{-1.900390625, -1.2646484375, -0.4423828125, 0.0, 0.5, 1.0, 2.5}},
	{"Selu", nil, ir.Float32, []float64{-1.6705687046051025, -1.1113307476043701, -0.38889020681381226, 0.0, 0.5253505110740662, 1.0507010221481323, 2.6267526149749756}},
	{"Selu", nil, ir.Float64, []float64{-1.670568733989153, -1.1113307412864781, -0.3888901986937533, 0.0, 0.5253505110740662, 1.0507010221481323, 2.626752555370331}},
	{"Selu", nil, ir.Float16, []float64{-1.6708984375, -1.111328125, -0.388916015625, 0.0, 0.525390625, 1.05078125, 2.626953125}},
	{"Selu", attrs(ir.Float("alpha", 2), ir.Float("gamma", 3)), ir.Float32, []float64{-5.701277732849121, -3.7927234172821045, -1.3271952867507935, 0.0, 1.5, 3.0, 7.5}},
	{"Selu", attrs(ir.Float("alpha", 2), ir.Float("gamma", 3)), ir.Float64, []float64{-5.7012775897928165, -3.792723352971346, -1.3271953015715707, 0.0, 1.5, 3.0, 7.5}},
	{"Selu", attrs(ir.Float("alpha", 2), ir.Float("gamma", 3)), ir.Float16, []float64{-5.703125, -3.79296875, -1.3271484375, 0.0, 1.5, 3.0, 7.5}},
	{"Celu", nil, ir.Float32, []float64{-0.9502129554748535, -0.6321205496788025, -0.22119921445846558, 0.0, 0.5, 1.0, 2.5}},
	{"Celu", nil, ir.Float64, []float64{-0.950212931632136, -0.6321205588285577, -0.22119921692859512, 0.0, 0.5, 1.0, 2.5}},
	{"Celu", nil, ir.Float16, []float64{-0.9501953125, -0.63232421875, -0.22119140625, 0.0, 0.5, 1.0, 2.5}},
	{"Celu", attrs(ir.Float("alpha", 2)), ir.Float32, []float64{-1.5537396669387817, -0.7869386672973633, -0.2350061982870102, 0.0, 0.5, 1.0, 2.5}},
	{"Celu", attrs(ir.Float("alpha", 2)), ir.Float64, []float64{-1.5537396797031404, -0.7869386805747332, -0.2350061948308093, 0.0, 0.5, 1.0, 2.5}},
	{"Celu", attrs(ir.Float("alpha", 2)), ir.Float16, []float64{-1.5537109375, -0.787109375, -0.2349853515625, 0.0, 0.5, 1.0, 2.5}},
	{"LeakyRelu", nil, ir.Float32, []float64{-0.029999999329447746, -0.009999999776482582, -0.0024999999441206455, 0.0, 0.5, 1.0, 2.5}},
	{"LeakyRelu", nil, ir.Float64, []float64{-0.029999999329447746, -0.009999999776482582, -0.0024999999441206455, 0.0, 0.5, 1.0, 2.5}},
	{"LeakyRelu", nil, ir.Float16, []float64{-0.029998779296875, -0.01000213623046875, -0.0025005340576171875, 0.0, 0.5, 1.0, 2.5}},
	{"LeakyRelu", attrs(ir.Float("alpha", 0.1)), ir.Float32, []float64{-0.30000001192092896, -0.10000000149011612, -0.02500000037252903, 0.0, 0.5, 1.0, 2.5}},
	{"LeakyRelu", attrs(ir.Float("alpha", 0.1)), ir.Float64, []float64{-0.30000000447034836, -0.10000000149011612, -0.02500000037252903, 0.0, 0.5, 1.0, 2.5}},
	{"LeakyRelu", attrs(ir.Float("alpha", 0.1)), ir.Float16, []float64{-0.300048828125, -0.0999755859375, -0.024993896484375, 0.0, 0.5, 1.0, 2.5}},
	{"HardSigmoid", nil, ir.Float32, []float64{0.0, 0.30000001192092896, 0.44999998807907104, 0.5, 0.6000000238418579, 0.699999988079071, 1.0}},
	{"HardSigmoid", nil, ir.Float64, []float64{0.0, 0.29999999701976776, 0.44999999925494194, 0.5, 0.6000000014901161, 0.7000000029802322, 1.0}},
	{"HardSigmoid", nil, ir.Float16, []float64{0.0, 0.300048828125, 0.449951171875, 0.5, 0.60009765625, 0.7001953125, 1.0}},
	{"HardSigmoid", attrs(ir.Float("alpha", 0.5), ir.Float("beta", 0.6)), ir.Float32, []float64{0.0, 0.10000002384185791, 0.4750000238418579, 0.6000000238418579, 0.8500000238418579, 1.0, 1.0}},
	{"HardSigmoid", attrs(ir.Float("alpha", 0.5), ir.Float("beta", 0.6)), ir.Float64, []float64{0.0, 0.10000002384185791, 0.4750000238418579, 0.6000000238418579, 0.8500000238418579, 1.0, 1.0}},
	{"HardSigmoid", attrs(ir.Float("alpha", 0.5), ir.Float("beta", 0.6)), ir.Float16, []float64{0.0, 0.0999755859375, 0.47509765625, 0.60009765625, 0.85009765625, 1.0, 1.0}},
	{"HardSwish", nil, ir.Float32, []float64{-0.0, -0.3333333432674408, -0.1145833358168602, 0.0, 0.2916666567325592, 0.6666666865348816, 2.2916667461395264}},
	{"HardSwish", nil, ir.Float64, []float64{-0.0, -0.33333333333333337, -0.11458333333333333, 0.0, 0.2916666666666667, 0.6666666666666666, 2.291666666666667}},
	{"HardSwish", nil, ir.Float16, []float64{-0.0, -0.333251953125, -0.11456298828125, 0.0, 0.291748046875, 0.66650390625, 2.291015625}},
	{"ThresholdedRelu", nil, ir.Float32, []float64{0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.5}},
	{"ThresholdedRelu", nil, ir.Float64, []float64{0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.5}},
	{"ThresholdedRelu", nil, ir.Float16, []float64{0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.5}},
	{"ThresholdedRelu", attrs(ir.Float("alpha", 0.4)), ir.Float32, []float64{0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 2.5}},
	{"ThresholdedRelu", attrs(ir.Float("alpha", 0.4)), ir.Float64, []float64{0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 2.5}},
	{"ThresholdedRelu", attrs(ir.Float("alpha", 0.4)), ir.Float16, []float64{0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 2.5}},
	{"Shrink", nil, ir.Float32, []float64{-3.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.5}},
	{"Shrink", nil, ir.Float64, []float64{-3.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.5}},
	{"Shrink", nil, ir.Float16, []float64{-3.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.5}},
	{"Shrink", attrs(ir.Float("lambd", 0.9), ir.Float("bias", 1.5)), ir.Float32, []float64{-1.5, 0.5, 0.0, 0.0, 0.0, -0.5, 1.0}},
	{"Shrink", attrs(ir.Float("lambd", 0.9), ir.Float("bias", 1.5)), ir.Float64, []float64{-1.5, 0.5, 0.0, 0.0, 0.0, -0.5, 1.0}},
	{"Shrink", attrs(ir.Float("lambd", 0.9), ir.Float("bias", 1.5)), ir.Float16, []float64{-1.5, 0.5, 0.0, 0.0, 0.0, -0.5, 1.0}},
	{"Gelu", nil, ir.Float32, []float64{-0.004049694165587425, -0.15865525603294373, -0.10032341629266739, 0.0, 0.3457312285900116, 0.8413447737693787, 2.48447585105896}},
	{"Gelu", nil, ir.Float64, []float64{-0.00404969409489031, -0.15865525393145707, -0.10032341857926907, 0.0, 0.34573123063700656, 0.8413447460685429, 2.4844758366855597}},
	{"Gelu", nil, ir.Float16, []float64{-0.00405120849609375, -0.15869140625, -0.100341796875, 0.0, 0.345703125, 0.84130859375, 2.484375}},
	{"Gelu", attrs(ir.Str("approximate", "tanh")), ir.Float32, []float64{-0.003637392073869705, -0.15880800783634186, -0.10032464563846588, 0.0, 0.3457140028476715, 0.8411920070648193, 2.4849157333374023}},
	{"Gelu", attrs(ir.Str("approximate", "tanh")), ir.Float64, []float64{-0.0036373920817729943, -0.1588080093917233, -0.100324649298315, 0.0, 0.34571400982514394, 0.8411919906082768, 2.484915733910001}},
	{"Gelu", attrs(ir.Str("approximate", "tanh")), ir.Float16, []float64{-0.0036373138427734375, -0.1588134765625, -0.100341796875, 0.0, 0.345703125, 0.84130859375, 2.484375}},
}

func TestActivations(t *testing.T) {
	for _, c := range activationCases {
		t.Run(c.op+"/"+c.dt.String(), func(t *testing.T) {
			n := int64(len(activationInput))
			got := run1(t, c.op, c.attrs, tf(c.dt, s(n), activationInput...))
			requireFloats(t, got, c.dt, s(n), c.want, tolFor(c.dt))
		})
	}
}

func TestGeluUnsupported(t *testing.T) {
	_, err := run("Gelu", attrs(ir.Str("approximate", "erf")), 1, tf(ir.Float32, s(1), 1))
	require.ErrorIs(t, err, ir.ErrUnsupported)
}

func TestActivationsRejectIntegers(t *testing.T) {
	for _, op := range []string{"Elu", "Selu", "Celu", "LeakyRelu", "HardSigmoid", "HardSwish", "ThresholdedRelu", "Gelu"} {
		_, err := run(op, nil, 1, ti(ir.Int32, s(1), 1))
		require.Error(t, err, op)
	}
}

func TestShrinkIntegers(t *testing.T) {
	// lambd 1.5, bias 1: |x| <= 1.5 -> 0, else x -/+ 1.
	a := attrs(ir.Float("lambd", 1.5), ir.Float("bias", 1))
	got := run1(t, "Shrink", a, ti(ir.Int8, s(5), -3, -1, 0, 1, 2))
	requireInts(t, got, ir.Int8, s(5), -2, 0, 0, 0, 1)
	got = run1(t, "Shrink", a, ti(ir.Uint8, s(3), 0, 1, 200))
	requireInts(t, got, ir.Uint8, s(3), 0, 0, 199)
}

func TestClip(t *testing.T) {
	x := tf(ir.Float32, s(2, 3), -2, -0.5, 0, 0.5, 2, nan)
	lo, hi := tf(ir.Float32, nil, -1), tf(ir.Float32, nil, 1)
	requireFloats(t, run1(t, "Clip", nil, x, lo, hi), ir.Float32, s(2, 3), []float64{-1, -0.5, 0, 0.5, 1, nan}, 0)
	// Absent bounds leave that side open.
	requireFloats(t, run1(t, "Clip", nil, x, nil, hi), ir.Float32, s(2, 3), []float64{-2, -0.5, 0, 0.5, 1, nan}, 0)
	requireFloats(t, run1(t, "Clip", nil, x, lo), ir.Float32, s(2, 3), []float64{-1, -0.5, 0, 0.5, 2, nan}, 0)
	requireFloats(t, run1(t, "Clip", nil, x), ir.Float32, s(2, 3), []float64{-2, -0.5, 0, 0.5, 2, nan}, 0)
	// min > max: everything becomes max.
	requireFloats(t, run1(t, "Clip", nil, x, hi, lo), ir.Float32, s(2, 3), []float64{-1, -1, -1, -1, -1, nan}, 0)
	// A one-element bound of shape [1] is accepted as a scalar.
	requireFloats(t, run1(t, "Clip", nil, tf(ir.Float16, s(3), -5, 0.1, 5), tf(ir.Float16, s(1), 0), nil),
		ir.Float16, s(3), []float64{0, 0.0999755859375, 5}, 0)

	// Integers, compared exactly in their own width.
	got := run1(t, "Clip", nil, ti(ir.Int8, s(5), -128, -3, 0, 3, 127), ti(ir.Int8, nil, -2), ti(ir.Int8, nil, 2))
	requireInts(t, got, ir.Int8, s(5), -2, -2, 0, 2, 2)
	got = run1(t, "Clip", nil, ti(ir.Int64, s(3), math.MinInt64, 0, math.MaxInt64), nil, ti(ir.Int64, nil, math.MaxInt64-1))
	requireInts(t, got, ir.Int64, s(3), math.MinInt64, 0, math.MaxInt64-1)
	// u64 above 2^63: an int64 comparison would get these wrong.
	big := ti(ir.Uint64, s(3), 1, -1, -2) // 1, 2^64-1, 2^64-2
	got = run1(t, "Clip", nil, big, ti(ir.Uint64, nil, 2), ti(ir.Uint64, nil, -2))
	require.Equal(t, []uint64{2, math.MaxUint64 - 1, math.MaxUint64 - 1}, []uint64{got.Uint64(0), got.Uint64(1), got.Uint64(2)})

	// Errors: a bound of another dtype, a non-scalar bound, bool input.
	_, err := run("Clip", nil, 1, x, tf(ir.Float64, nil, 0))
	require.ErrorContains(t, err, "f64")
	_, err = run("Clip", nil, 1, x, tf(ir.Float32, s(2), 0, 1))
	require.ErrorContains(t, err, "scalar")
	_, err = run("Clip", nil, 1, tb(s(1), true))
	require.Error(t, err)
}
