package reduce

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// x23 is [[1, 2, 3], [4, 5, 6]].
func x23(dt ir.DType) *ir.Tensor { return f(dt, sh(2, 3), 1, 2, 3, 4, 5, 6) }

// x234 is arange(24)*0.5 - 3 in shape [2, 3, 4].
func x234(dt ir.DType) *ir.Tensor {
	v := make([]float64, 24)
	for i := range v {
		v[i] = float64(i)*0.5 - 3
	}
	return f(dt, sh(2, 3, 4), v...)
}

func TestReduceFloat(t *testing.T) {
	keep0 := []ir.AttrOption{ir.Int("keepdims", 0)}
	noop := []ir.AttrOption{ir.Int("noop_with_empty_axes", 1)}
	cases := []struct {
		name  string
		op    string
		attrs []ir.AttrOption
		x     func(ir.DType) *ir.Tensor
		axes  *ir.Tensor
		shape []int64
		want  []float64
	}{
		{"sum axis1", "ReduceSum", nil, x23, i64(sh(1), 1), sh(2, 1), []float64{6, 15}},
		{"sum axis-2 nokeep", "ReduceSum", keep0, x23, i64(sh(1), -2), sh(3), []float64{5, 7, 9}},
		{"sum all (absent axes)", "ReduceSum", nil, x23, nil, sh(1, 1), []float64{21}},
		{"sum all (empty axes) nokeep", "ReduceSum", keep0, x23, i64(sh(0)), sh(), []float64{21}},
		{"sum noop", "ReduceSum", noop, x23, i64(sh(0)), sh(2, 3), []float64{1, 2, 3, 4, 5, 6}},
		{"sum noop absent axes", "ReduceSum", noop, x23, nil, sh(2, 3), []float64{1, 2, 3, 4, 5, 6}},
		{"sum axes 0,2", "ReduceSum", keep0, x234, i64(sh(2), 0, 2), sh(3), []float64{6, 22, 38}},
		{"mean axis1", "ReduceMean", nil, x23, i64(sh(1), 1), sh(2, 1), []float64{2, 5}},
		{"mean axes -1,-3", "ReduceMean", nil, x234, i64(sh(2), -1, -3), sh(1, 3, 1), []float64{0.75, 2.75, 4.75}},
		{"max axis0", "ReduceMax", keep0, x23, i64(sh(1), 0), sh(3), []float64{4, 5, 6}},
		{"min axis0", "ReduceMin", nil, x23, i64(sh(1), 0), sh(1, 3), []float64{1, 2, 3}},
		{"min all", "ReduceMin", keep0, x234, nil, sh(), []float64{-3}},
		{"prod axis1", "ReduceProd", nil, x23, i64(sh(1), 1), sh(2, 1), []float64{6, 120}},
		{"l1 axis1", "ReduceL1", keep0, x234, i64(sh(1), 1), sh(2, 4), []float64{5, 4.5, 4, 4.5, 15, 16.5, 18, 19.5}},
		{"l2 axis1", "ReduceL2", keep0, x23, i64(sh(1), 1), sh(2), []float64{3.7416573867739413, 8.774964387392123}},
		{"l2 axis2", "ReduceL2", keep0, x234, i64(sh(1), 2), sh(2, 3), []float64{
			4.636809247747852, 1.224744871391589, 3.6742346141747673, 7.582875444051551, 11.554220008291344, 15.540270267920054}},
		{"logsum axis1", "ReduceLogSum", keep0, x23, i64(sh(1), 1), sh(2), []float64{1.791759469228055, 2.70805020110221}},
		{"logsumexp axis1", "ReduceLogSumExp", keep0, x23, i64(sh(1), 1), sh(2), []float64{3.40760596444438, 6.40760596444438}},
		{"logsumexp axes 0,1", "ReduceLogSumExp", nil, x234, i64(sh(2), 1, 0), sh(1, 1, 4), []float64{
			7.145407313637629, 7.645407313637629, 8.14540731363763, 8.64540731363763}},
		{"sumsquare axis1", "ReduceSumSquare", keep0, x23, i64(sh(1), 1), sh(2), []float64{14, 77}},
		// noop reduces each element alone: the element function still applies.
		{"l1 noop", "ReduceL1", noop, func(dt ir.DType) *ir.Tensor { return f(dt, sh(2), -1, 2) }, nil, sh(2), []float64{1, 2}},
		{"sumsquare noop", "ReduceSumSquare", noop, func(dt ir.DType) *ir.Tensor { return f(dt, sh(2), -1, 3) }, nil, sh(2), []float64{1, 9}},
		{"max noop", "ReduceMax", noop, x23, i64(sh(0)), sh(2, 3), []float64{1, 2, 3, 4, 5, 6}},
		{"scalar input", "ReduceSum", nil, func(dt ir.DType) *ir.Tensor { return f(dt, sh(), 2.5) }, nil, sh(), []float64{2.5}},
	}
	for _, c := range cases {
		for _, dt := range floats {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				in := []*ir.Tensor{c.x(dt)}
				if c.axes != nil {
					in = append(in, c.axes)
				}
				got := mustRun(t, c.op, c.attrs, in...)
				// The expected values are exact in float64; rounding them to
				// dt is what a correct kernel returns.
				want := make([]float64, len(c.want))
				for i, w := range c.want {
					want[i] = f(dt, sh(), w).Float64(0)
				}
				requireClose(t, got, dt, c.shape, want, tolFor(dt))
			})
		}
	}
}

// TestReduceEmptySet checks the opset-18 rules for reducing zero elements.
func TestReduceEmptySet(t *testing.T) {
	x := f(ir.Float32, sh(2, 0, 3))
	cases := []struct {
		op   string
		want float64
	}{
		{"ReduceSum", 0}, {"ReduceMean", nan}, {"ReduceMax", -inf}, {"ReduceMin", inf},
		{"ReduceProd", 1}, {"ReduceL1", 0}, {"ReduceL2", 0}, {"ReduceLogSum", -inf},
		{"ReduceLogSumExp", -inf}, {"ReduceSumSquare", 0},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			got := mustRun(t, c.op, nil, x, i64(sh(1), 1))
			requireClose(t, got, ir.Float32, sh(2, 1, 3), []float64{c.want, c.want, c.want, c.want, c.want, c.want}, 0)
			// Reducing a non-empty axis of an empty tensor gives an empty result.
			got = mustRun(t, c.op, []ir.AttrOption{ir.Int("keepdims", 0)}, x, i64(sh(1), 2))
			requireClose(t, got, ir.Float32, sh(2, 0), nil, 0)
		})
	}
}

func TestReduceSpecialFloats(t *testing.T) {
	got := mustRun(t, "ReduceMax", nil, f(ir.Float32, sh(3), 1, nan, 3))
	require.True(t, math.IsNaN(got.Float64(0)), "max propagates NaN")
	got = mustRun(t, "ReduceMin", nil, f(ir.Float32, sh(3), 1, nan, -3))
	require.True(t, math.IsNaN(got.Float64(0)), "min propagates NaN")
	// Stable LogSumExp: exp(1000) overflows float64.
	got = mustRun(t, "ReduceLogSumExp", nil, f(ir.Float64, sh(2), 1000, 1000))
	requireClose(t, got, ir.Float64, sh(1), []float64{1000.6931471805599}, 1e-15)
	got = mustRun(t, "ReduceLogSumExp", nil, f(ir.Float64, sh(2), -inf, -inf))
	requireClose(t, got, ir.Float64, sh(1), []float64{-inf}, 0)
	got = mustRun(t, "ReduceLogSumExp", nil, f(ir.Float64, sh(2), inf, 1))
	requireClose(t, got, ir.Float64, sh(1), []float64{inf}, 0)
}

func TestReduceInt(t *testing.T) {
	keep0 := []ir.AttrOption{ir.Int("keepdims", 0)}
	ax := func(a ...int64) *ir.Tensor { return i64(sh(int64(len(a))), a...) }
	cases := []struct {
		name  string
		op    string
		attrs []ir.AttrOption
		x     *ir.Tensor
		axes  *ir.Tensor
		shape []int64
		want  []int64
	}{
		{"sum i32", "ReduceSum", nil, ints(ir.Int32, sh(2, 2), 1, -2, 3, 4), nil, sh(1, 1), []int64{6}},
		{"mean i32 truncates", "ReduceMean", keep0, ints(ir.Int32, sh(2, 2), 1, -2, 3, 4), ax(1), sh(2), []int64{0, 3}},
		{"mean i64 negative", "ReduceMean", keep0, ints(ir.Int64, sh(3), -7, 0, 0), nil, sh(), []int64{-2}},
		{"sum u8 wraps", "ReduceSum", keep0, ints(ir.Uint8, sh(2), 200, 100), nil, sh(), []int64{44}},
		{"sum i8 wraps", "ReduceSum", keep0, ints(ir.Int8, sh(2), 100, 100), nil, sh(), []int64{-56}},
		{"prod i64", "ReduceProd", keep0, ints(ir.Int64, sh(3), 3, -4, 5), nil, sh(), []int64{-60}},
		{"l1 i32", "ReduceL1", keep0, ints(ir.Int32, sh(2), -3, 4), nil, sh(), []int64{7}},
		{"l1 u16", "ReduceL1", keep0, ints(ir.Uint16, sh(2), 60000, 4), nil, sh(), []int64{60004}},
		{"l2 i32 truncates", "ReduceL2", keep0, ints(ir.Int32, sh(2), 3, 3), nil, sh(), []int64{4}},
		{"sumsquare i16", "ReduceSumSquare", keep0, ints(ir.Int16, sh(2), -3, 4), nil, sh(), []int64{25}},
		{"logsum i64", "ReduceLogSum", keep0, ints(ir.Int64, sh(2), 10, 11), nil, sh(), []int64{3}},
		{"max u8", "ReduceMax", keep0, ints(ir.Uint8, sh(3), 200, 100, 255), nil, sh(), []int64{255}},
		{"min u8", "ReduceMin", keep0, ints(ir.Uint8, sh(3), 200, 100, 255), nil, sh(), []int64{100}},
		{"min i8", "ReduceMin", nil, ints(ir.Int8, sh(2, 2), -128, 5, 7, -1), ax(-1), sh(2, 1), []int64{-128, -1}},
		{"max i8", "ReduceMax", nil, ints(ir.Int8, sh(2, 2), -128, 5, 7, -1), ax(0), sh(1, 2), []int64{7, 5}},
		{"max u32", "ReduceMax", keep0, ints(ir.Uint32, sh(2), 4000000000, 7), nil, sh(), []int64{4000000000}},
		{"max i64 empty", "ReduceMax", keep0, ints(ir.Int64, sh(0)), nil, sh(), []int64{math.MinInt64}},
		{"max i8 empty", "ReduceMax", keep0, ints(ir.Int8, sh(0)), nil, sh(), []int64{-128}},
		{"min i32 empty", "ReduceMin", keep0, ints(ir.Int32, sh(0)), nil, sh(), []int64{math.MaxInt32}},
		{"min u16 empty", "ReduceMin", keep0, ints(ir.Uint16, sh(0)), nil, sh(), []int64{65535}},
		{"max u8 empty", "ReduceMax", keep0, ints(ir.Uint8, sh(0)), nil, sh(), []int64{0}},
		{"sum i32 empty", "ReduceSum", keep0, ints(ir.Int32, sh(0, 2)), ax(0), sh(2), []int64{0, 0}},
		{"prod i32 empty", "ReduceProd", keep0, ints(ir.Int32, sh(0, 2)), ax(0), sh(2), []int64{1, 1}},
		{"bool max", "ReduceMax", keep0, ints(ir.Bool, sh(2, 2), 1, 0, 0, 0), ax(1), sh(2), []int64{1, 0}},
		{"bool min", "ReduceMin", keep0, ints(ir.Bool, sh(2, 2), 1, 1, 0, 1), ax(1), sh(2), []int64{1, 0}},
		{"bool min empty", "ReduceMin", keep0, ints(ir.Bool, sh(0)), nil, sh(), []int64{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := []*ir.Tensor{c.x}
			if c.axes != nil {
				in = append(in, c.axes)
			}
			got := mustRun(t, c.op, c.attrs, in...)
			requireInts(t, got, c.x.DType, c.shape, c.want...)
		})
	}
}

func TestReduceUint64(t *testing.T) {
	big := uint64(1)<<63 + 5
	x := ir.NewTensor(ir.Uint64, sh(2))
	x.SetInt64(0, int64(big))
	x.SetInt64(1, 3)
	require.Equal(t, big, mustRun(t, "ReduceMax", nil, x).Uint64(0))
	require.Equal(t, uint64(3), mustRun(t, "ReduceMin", nil, x).Uint64(0))
	require.Equal(t, big+3, mustRun(t, "ReduceSum", nil, x).Uint64(0))
	require.Equal(t, (big+3)/2, mustRun(t, "ReduceMean", nil, x).Uint64(0))
	require.Equal(t, uint64(math.MaxUint64), mustRun(t, "ReduceMin", nil, ir.NewTensor(ir.Uint64, sh(0))).Uint64(0))
}

func TestReduceErrors(t *testing.T) {
	x := x23(ir.Float32)
	cases := []struct {
		name        string
		op          string
		in          []*ir.Tensor
		unsupported bool
	}{
		{"axis out of range", "ReduceSum", []*ir.Tensor{x, i64(sh(1), 2)}, false},
		{"negative axis out of range", "ReduceMax", []*ir.Tensor{x, i64(sh(1), -3)}, false},
		{"repeated axis", "ReduceMean", []*ir.Tensor{x, i64(sh(2), 1, -1)}, false},
		{"float axes", "ReduceSum", []*ir.Tensor{x, f(ir.Float32, sh(1), 0)}, false},
		{"2-D axes", "ReduceSum", []*ir.Tensor{x, i64(sh(1, 1), 0)}, false},
		{"missing data", "ReduceSum", []*ir.Tensor{nil}, false},
		{"no inputs", "ReduceProd", nil, false},
		{"bool sum", "ReduceSum", []*ir.Tensor{ints(ir.Bool, sh(1), 1)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runOp(t, c.op, 1, nil, c.in...)
			require.Error(t, err)
			require.Equal(t, c.unsupported, errorsIsUnsupported(err), "%v", err)
		})
	}
}
