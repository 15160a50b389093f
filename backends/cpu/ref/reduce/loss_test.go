package reduce

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestNegativeLogLikelihoodLoss(t *testing.T) {
	logp := func(dt ir.DType) *ir.Tensor { return f(dt, sh(2, 3), -1, -2, -3, -0.5, -1.5, -2.5) }
	target := i64(sh(2), 2, 0)
	weight := func(dt ir.DType) *ir.Tensor { return f(dt, sh(3), 0.2, 0.3, 0.5) }
	red := func(r string) ir.AttrOption { return ir.Str("reduction", r) }
	type tc struct {
		name   string
		attrs  []ir.AttrOption
		target *ir.Tensor
		weight bool
		shape  []int64
		want   []float64
	}
	cases := []tc{
		{"none", []ir.AttrOption{red("none")}, target, false, sh(2), []float64{3, 0.5}},
		{"sum", []ir.AttrOption{red("sum")}, target, false, sh(), []float64{3.5}},
		{"mean default", nil, target, false, sh(), []float64{1.75}},
		{"i32 target", nil, ints(ir.Int32, sh(2), 2, 0), false, sh(), []float64{1.75}},
		{"weighted none", []ir.AttrOption{red("none")}, target, true, sh(2), []float64{1.5, 0.1}},
		{"weighted sum", []ir.AttrOption{red("sum")}, target, true, sh(), []float64{1.6}},
		// The weighted mean divides by the sum of the applied weights.
		{"weighted mean", nil, target, true, sh(), []float64{2.285714285714286}},
		{"ignore_index weighted mean", []ir.AttrOption{ir.Int("ignore_index", 0)}, target, true, sh(), []float64{3}},
		{"ignore_index none", []ir.AttrOption{red("none"), ir.Int("ignore_index", 0)}, target, true, sh(2), []float64{1.5, 0}},
		{"negative ignore_index", []ir.AttrOption{ir.Int("ignore_index", -1)}, i64(sh(2), -1, 1), false, sh(), []float64{1.5}},
		{"all ignored mean is NaN", []ir.AttrOption{ir.Int("ignore_index", 1)}, i64(sh(2), 1, 1), false, sh(), []float64{nan}},
	}
	for _, c := range cases {
		for _, dt := range []ir.DType{ir.Float32, ir.Float64, ir.Float16} {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				in := []*ir.Tensor{logp(dt), c.target}
				if c.weight {
					in = append(in, weight(dt))
				}
				requireClose(t, mustRun(t, "NegativeLogLikelihoodLoss", c.attrs, in...), dt, c.shape, c.want, tolFor(dt))
			})
		}
	}
	t.Run("N,C,d", func(t *testing.T) {
		x := f(ir.Float32, sh(1, 2, 2), -1, -2, -3, -4)
		got := mustRun(t, "NegativeLogLikelihoodLoss", []ir.AttrOption{red("none")}, x, i64(sh(1, 2), 1, 0))
		requireClose(t, got, ir.Float32, sh(1, 2), []float64{3, 2}, 0)
		got = mustRun(t, "NegativeLogLikelihoodLoss", nil, x, i64(sh(1, 2), 1, 0))
		requireClose(t, got, ir.Float32, sh(), []float64{2.5}, 0)
	})
	for name, c := range map[string]struct {
		attrs []ir.AttrOption
		in    []*ir.Tensor
	}{
		"target out of range": {nil, []*ir.Tensor{logp(ir.Float32), i64(sh(2), 3, 0)}},
		"negative target":     {nil, []*ir.Tensor{logp(ir.Float32), i64(sh(2), -1, 0)}},
		"target shape":        {nil, []*ir.Tensor{logp(ir.Float32), i64(sh(3), 0, 0, 0)}},
		"float target":        {nil, []*ir.Tensor{logp(ir.Float32), f(ir.Float32, sh(2), 0, 0)}},
		"weight length":       {nil, []*ir.Tensor{logp(ir.Float32), target, f(ir.Float32, sh(2), 1, 1)}},
		"bad reduction":       {[]ir.AttrOption{red("max")}, []*ir.Tensor{logp(ir.Float32), target}},
		"rank 1 input":        {nil, []*ir.Tensor{f(ir.Float32, sh(2), 1, 1), i64(sh(), 0)}},
	} {
		_, err := runOp(t, "NegativeLogLikelihoodLoss", 1, c.attrs, c.in...)
		require.Error(t, err, name)
	}
}

func TestSoftmaxCrossEntropyLoss(t *testing.T) {
	scores := func(dt ir.DType) *ir.Tensor { return f(dt, sh(2, 3), 1, 2, 3, 1, 1, 1) }
	labels := i64(sh(2), 2, 0)
	logProb := []float64{-2.4076059644443806, -1.4076059644443801, -0.40760596444438046, -1.0986122886681098, -1.0986122886681098, -1.0986122886681098}
	for _, dt := range floats {
		t.Run(dt.String(), func(t *testing.T) {
			out, err := runOp(t, "SoftmaxCrossEntropyLoss", 2, nil, scores(dt), labels)
			require.NoError(t, err)
			requireClose(t, out[0], dt, sh(), []float64{0.7531091265562451}, tolFor(dt))
			requireClose(t, out[1], dt, sh(2, 3), logProb, tolFor(dt))

			w := f(dt, sh(3), 0.2, 0.3, 0.5)
			got := mustRun(t, "SoftmaxCrossEntropyLoss", nil, scores(dt), labels, w)
			requireClose(t, got, dt, sh(), []float64{0.6050363427940175}, tolFor(dt))
			got = mustRun(t, "SoftmaxCrossEntropyLoss", []ir.AttrOption{ir.Str("reduction", "none"), ir.Int("ignore_index", 2)}, scores(dt), labels)
			requireClose(t, got, dt, sh(2), []float64{0, 1.0986122886681098}, tolFor(dt))
		})
	}
	// Softmax runs over dim 1 of [N, C, d]: C=2, d=2 here.
	x := f(ir.Float64, sh(1, 2, 2), 0, 1, 1, 1)
	out, err := runOp(t, "SoftmaxCrossEntropyLoss", 2, []ir.AttrOption{ir.Str("reduction", "sum")}, x, i64(sh(1, 2), 1, 1))
	require.NoError(t, err)
	requireClose(t, out[1], ir.Float64, sh(1, 2, 2), []float64{
		-1.3132616875182228, -0.6931471805599453, -0.31326168751822286, -0.6931471805599453}, 1e-12)
	requireClose(t, out[0], ir.Float64, sh(), []float64{0.31326168751822286 + 0.6931471805599453}, 1e-12)

	_, err = runOp(t, "SoftmaxCrossEntropyLoss", 1, nil, scores(ir.Float32), i64(sh(2), 0, 3))
	require.Error(t, err)
	_, err = runOp(t, "SoftmaxCrossEntropyLoss", 1, nil, f(ir.Float32, sh(3), 1, 2, 3), i64(sh(), 0))
	require.Error(t, err)
}
