package reduce

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestArgMaxArgMin(t *testing.T) {
	x := f(ir.Float32, sh(2, 3), 2, 1, 3, 5, 5, 0)
	keep0 := ir.Int("keepdims", 0)
	last := ir.Int("select_last_index", 1)
	cases := []struct {
		name  string
		op    string
		attrs []ir.AttrOption
		x     *ir.Tensor
		shape []int64
		want  []int64
	}{
		{"max default axis 0", "ArgMax", nil, x, sh(1, 3), []int64{1, 1, 0}},
		{"max axis 1", "ArgMax", []ir.AttrOption{ir.Int("axis", 1)}, x, sh(2, 1), []int64{2, 0}},
		{"max axis -1 last", "ArgMax", []ir.AttrOption{ir.Int("axis", -1), last, keep0}, x, sh(2), []int64{2, 1}},
		{"min axis 1", "ArgMin", []ir.AttrOption{ir.Int("axis", 1), keep0}, x, sh(2), []int64{1, 2}},
		{"min axis 0 nokeep", "ArgMin", []ir.AttrOption{keep0}, x, sh(3), []int64{0, 0, 1}},
		{"min ties last", "ArgMin", []ir.AttrOption{last, keep0}, f(ir.Float16, sh(4), 1, 0, 0, 2), sh(), []int64{2}},
		{"min ties first", "ArgMin", []ir.AttrOption{keep0}, f(ir.BFloat16, sh(4), 1, 0, 0, 2), sh(), []int64{1}},
		{"max i8", "ArgMax", []ir.AttrOption{ir.Int("axis", 1)}, ints(ir.Int8, sh(1, 3), -1, -1, -7), sh(1, 1), []int64{0}},
		{"max u8", "ArgMax", []ir.AttrOption{keep0}, ints(ir.Uint8, sh(3), 7, 250, 9), sh(), []int64{1}},
		{"min i64", "ArgMin", []ir.AttrOption{keep0}, ints(ir.Int64, sh(3), 7, -250, 9), sh(), []int64{1}},
		{"max nan", "ArgMax", []ir.AttrOption{keep0}, f(ir.Float64, sh(4), 1, nan, 3, nan), sh(), []int64{1}},
		{"min nan", "ArgMin", []ir.AttrOption{keep0}, f(ir.Float64, sh(3), 1, nan, -3), sh(), []int64{1}},
		{"max nan last", "ArgMax", []ir.AttrOption{keep0, last}, f(ir.Float64, sh(4), 1, nan, 3, nan), sh(), []int64{3}},
		{"zero outer", "ArgMax", []ir.AttrOption{ir.Int("axis", 1)}, f(ir.Float32, sh(0, 3)), sh(0, 1), []int64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requireInts(t, mustRun(t, c.op, c.attrs, c.x), ir.Int64, c.shape, c.want...)
		})
	}
	big := ir.NewTensor(ir.Uint64, sh(3))
	big.SetInt64(0, 5)
	big.SetInt64(1, -1) // 2^64-1
	big.SetInt64(2, 7)
	requireInts(t, mustRun(t, "ArgMax", nil, big), ir.Int64, sh(1), 1)
	requireInts(t, mustRun(t, "ArgMin", nil, big), ir.Int64, sh(1), 0)

	for name, in := range map[string]*ir.Tensor{"empty axis": f(ir.Float32, sh(2, 0)), "bool": ints(ir.Bool, sh(1), 1)} {
		_, err := runOp(t, "ArgMax", 1, []ir.AttrOption{ir.Int("axis", 1)}, in)
		require.Error(t, err, name)
	}
	_, err := runOp(t, "ArgMin", 1, []ir.AttrOption{ir.Int("axis", 2)}, x)
	require.Error(t, err)
}

func TestSoftmaxFamily(t *testing.T) {
	x := func(dt ir.DType) *ir.Tensor { return f(dt, sh(2, 3), 1, 2, 3, 1, 1, 1) }
	y := func(dt ir.DType) *ir.Tensor { return f(dt, sh(2, 2, 2), 0, 1, 2, 3, 4, 5, 6, 7) }
	third := 0.3333333333333333
	legacy := ir.Int("legacy_axis", 1)
	cases := []struct {
		name  string
		op    string
		attrs []ir.AttrOption
		x     func(ir.DType) *ir.Tensor
		want  []float64
	}{
		{"softmax default", "Softmax", nil, x, []float64{
			0.09003057317038043, 0.24472847105479767, 0.6652409557748218, third, third, third}},
		{"softmax axis 0", "Softmax", []ir.AttrOption{ir.Int("axis", 0)}, x, []float64{
			0.5, 0.7310585786300049, 0.8807970779778825, 0.5, 0.26894142136999516, 0.11920292202211755}},
		{"softmax axis -2", "Softmax", []ir.AttrOption{ir.Int("axis", -2)}, x, []float64{
			0.5, 0.7310585786300049, 0.8807970779778825, 0.5, 0.26894142136999516, 0.11920292202211755}},
		{"logsoftmax default", "LogSoftmax", nil, x, []float64{
			-2.4076059644443806, -1.4076059644443801, -0.40760596444438046, -1.0986122886681098, -1.0986122886681098, -1.0986122886681098}},
		{"softmax 3-D default is last axis", "Softmax", nil, y, []float64{
			0.26894142136999516, 0.7310585786300049, 0.26894142136999516, 0.7310585786300049,
			0.26894142136999516, 0.7310585786300049, 0.26894142136999516, 0.7310585786300049}},
		{"softmax legacy default axis 1 flattens", "Softmax", []ir.AttrOption{legacy}, y, []float64{
			0.03205860328008498, 0.08714431874203256, 0.23688281808991016, 0.6439142598879724,
			0.03205860328008498, 0.08714431874203256, 0.23688281808991016, 0.6439142598879724}},
		{"softmax legacy axis 0", "Softmax", []ir.AttrOption{legacy, ir.Int("axis", 0)}, y, []float64{
			5.7661276968700576e-04, 1.5673960138976283e-03, 4.2606241025770633e-03, 1.1581577075929859e-02,
			3.1481990510397975e-02, 8.5576922728134927e-02, 2.3262219398733311e-01, 6.3233268281204247e-01}},
		{"logsoftmax legacy axis -2", "LogSoftmax", []ir.AttrOption{legacy, ir.Int("axis", -2)}, y, []float64{
			-3.4401896985611953, -2.4401896985611953, -1.4401896985611953, -0.4401896985611953,
			-3.4401896985611953, -2.4401896985611953, -1.4401896985611953, -0.4401896985611953}},
		{"softmax large", "Softmax", nil, func(dt ir.DType) *ir.Tensor { return f(dt, sh(2), 1000, 1001) },
			[]float64{0.26894142136999516, 0.7310585786300049}},
		{"hardmax default first max", "Hardmax", nil, func(dt ir.DType) *ir.Tensor { return f(dt, sh(2, 3), 1, 3, 3, 0, -1, -2) },
			[]float64{0, 1, 0, 1, 0, 0}},
		{"hardmax axis 0", "Hardmax", []ir.AttrOption{ir.Int("axis", 0)}, x, []float64{1, 1, 1, 0, 0, 0}},
		{"hardmax legacy", "Hardmax", []ir.AttrOption{legacy}, y, []float64{0, 0, 0, 1, 0, 0, 0, 1}},
	}
	for _, c := range cases {
		for _, dt := range floats {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				in, want := c.x(dt), c.want
				if dt == ir.BFloat16 && c.name == "softmax large" {
					// 1001 is not a bf16; near 1000 they are 4 apart.
					in, want = f(dt, sh(2), 992, 996), []float64{0.01798620996209156, 0.9820137900379085}
				}
				requireClose(t, mustRun(t, c.op, c.attrs, in), dt, in.Shape, want, tolFor(dt))
			})
		}
	}
	// Zero-size rows and batches are fine.
	requireClose(t, mustRun(t, "Softmax", nil, f(ir.Float32, sh(0, 3))), ir.Float32, sh(0, 3), nil, 0)
	requireClose(t, mustRun(t, "Softmax", nil, f(ir.Float32, sh(3, 0))), ir.Float32, sh(3, 0), nil, 0)

	for _, c := range []struct {
		name  string
		attrs []ir.AttrOption
		x     *ir.Tensor
	}{
		{"axis out of range", []ir.AttrOption{ir.Int("axis", 2)}, x(ir.Float32)},
		{"legacy axis out of range", []ir.AttrOption{legacy, ir.Int("axis", 4)}, y(ir.Float32)},
		{"scalar", nil, f(ir.Float32, sh(), 1)},
		{"int input", nil, ints(ir.Int32, sh(2), 1, 2)},
	} {
		_, err := runOp(t, "Softmax", 1, c.attrs, c.x)
		require.Error(t, err, c.name)
	}
}
