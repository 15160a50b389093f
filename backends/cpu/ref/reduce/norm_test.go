package reduce

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestBatchNormalization(t *testing.T) {
	for _, dt := range floats {
		t.Run(dt.String(), func(t *testing.T) {
			x := f(dt, sh(1, 2, 1, 3), -1, 0, 1, 2, 3, 4)
			p := func(a, b float64) *ir.Tensor { return f(ir.Float32, sh(2), a, b) }
			got := mustRun(t, "BatchNormalization", nil, x, p(1, 1.5), p(0, 1), p(0, 3), p(1, 1.5))
			requireClose(t, got, dt, sh(1, 2, 1, 3), []float64{
				-0.9999950000374997, 0, 0.9999950000374997, -0.22474078892909666, 1, 2.224740788929097}, tolFor(dt))
		})
	}
	x := f(ir.Float32, sh(2, 2), 1, 2, 3, 4)
	p := f(ir.Float32, sh(2), 1, 1)
	_, err := runOp(t, "BatchNormalization", 1, []ir.AttrOption{ir.Int("training_mode", 1)}, x, p, p, p, p)
	require.True(t, errorsIsUnsupported(err), "%v", err)
	_, err = runOp(t, "BatchNormalization", 3, nil, x, p, p, p, p)
	require.True(t, errorsIsUnsupported(err), "%v", err)
	_, err = runOp(t, "BatchNormalization", 1, nil, x, p, p, p, f(ir.Float32, sh(3), 1, 1, 1))
	require.Error(t, err, "var of the wrong length")
	_, err = runOp(t, "BatchNormalization", 1, nil, x, p, p, p)
	require.Error(t, err, "missing var")
	_, err = runOp(t, "BatchNormalization", 1, nil, f(ir.Float32, sh(2), 1, 2), p, p, p, p)
	require.Error(t, err, "rank 1")
}

func TestInstanceNormalization(t *testing.T) {
	for _, dt := range floats {
		t.Run(dt.String(), func(t *testing.T) {
			x := f(dt, sh(1, 2, 3), 1, 2, 3, 2, 4, 9)
			got := mustRun(t, "InstanceNormalization", nil, x, f(dt, sh(2), 1, 2), f(dt, sh(2), 0, 0.5))
			requireClose(t, got, dt, sh(1, 2, 3), []float64{
				-1.2247356859083902, 0, 1.2247356859083902, -1.5380974856351388, -0.17936582854504635, 3.2174633141801854}, tolFor(dt))
		})
	}
	_, err := runOp(t, "InstanceNormalization", 1, nil, f(ir.Float32, sh(1, 2, 1), 1, 2), f(ir.Float32, sh(3), 1, 1, 1), f(ir.Float32, sh(2), 0, 0))
	require.Error(t, err)
}

func TestLayerNormalization(t *testing.T) {
	x := func(dt ir.DType) *ir.Tensor { return f(dt, sh(2, 3), 1, 2, 3, 2, 4, 9) }
	for _, dt := range floats {
		t.Run("last axis/"+dt.String(), func(t *testing.T) {
			out, err := runOp(t, "LayerNormalization", 3, nil, x(dt), f(dt, sh(3), 1, 0.5, 2), f(dt, sh(3), 0, 1, 0))
			require.NoError(t, err)
			requireClose(t, out[0], dt, sh(2, 3), []float64{
				-1.2247356859083902, 1, 2.4494713718167804, -1.0190487428175694, 0.8301585428637384, 2.7174633141801854}, tolFor(dt))
			// stash_type 1: statistics are f32 whatever X is.
			requireClose(t, out[1], ir.Float32, sh(2, 1), []float64{2, 5}, 1e-6)
			requireClose(t, out[2], ir.Float32, sh(2, 1), []float64{1.2247356859083902, 0.3396829142725232}, 1e-6)
		})
	}
	t.Run("axis 0, broadcast scale, no bias", func(t *testing.T) {
		out, err := runOp(t, "LayerNormalization", 2, []ir.AttrOption{ir.Int("axis", -2)}, x(ir.Float64), f(ir.Float64, sh(3), 1, 0.5, 2))
		require.NoError(t, err)
		requireClose(t, out[0], ir.Float64, sh(2, 3), []float64{
			-0.950585688616588, -0.2851757065849764, -0.3802342754466352, -0.5703514131699527, 0.0950585688616588, 4.182577029912987}, 1e-12)
		requireClose(t, out[1], ir.Float32, sh(1, 1), []float64{3.5}, 0)
	})
	t.Run("declared stat dtype and bf16 stash", func(t *testing.T) {
		k := []ir.AttrOption{ir.Int("stash_type", 16)}
		out, err := runOp(t, "LayerNormalization", 3, k, x(ir.Float32), f(ir.Float32, sh(3), 1, 1, 1))
		require.NoError(t, err)
		require.Equal(t, ir.BFloat16, out[1].DType)
		require.Equal(t, ir.BFloat16, out[2].DType)
	})
	for name, c := range map[string]struct {
		attrs []ir.AttrOption
		in    []*ir.Tensor
	}{
		"bad axis":         {[]ir.AttrOption{ir.Int("axis", 2)}, []*ir.Tensor{x(ir.Float32), f(ir.Float32, sh(3), 1, 1, 1)}},
		"scale mismatch":   {nil, []*ir.Tensor{x(ir.Float32), f(ir.Float32, sh(2), 1, 1)}},
		"bias mismatch":    {nil, []*ir.Tensor{x(ir.Float32), f(ir.Float32, sh(3), 1, 1, 1), f(ir.Float32, sh(4), 1, 1, 1, 1)}},
		"scale too high":   {nil, []*ir.Tensor{x(ir.Float32), f(ir.Float32, sh(1, 2, 3), 1, 1, 1, 1, 1, 1)}},
		"missing scale":    {nil, []*ir.Tensor{x(ir.Float32)}},
		"bad stash":        {[]ir.AttrOption{ir.Int("stash_type", 7)}, []*ir.Tensor{x(ir.Float32), f(ir.Float32, sh(3), 1, 1, 1)}},
		"integer is wrong": {nil, []*ir.Tensor{ints(ir.Int32, sh(3), 1, 2, 3), ints(ir.Int32, sh(3), 1, 1, 1)}},
	} {
		_, err := runOp(t, "LayerNormalization", 1, c.attrs, c.in...)
		require.Error(t, err, name)
	}
}

func TestGroupNormalization(t *testing.T) {
	// x[i] = i^1.5 for i in 0..7.
	x := func(dt ir.DType) *ir.Tensor {
		return f(dt, sh(1, 4, 2), 0, 1, 2.8284271247461903, 5.196152422706632, 8, 11.180339887498949, 14.696938456699069, 18.520259177452136)
	}
	groups := []ir.AttrOption{ir.Int("num_groups", 2)}
	t.Run("per-channel scale (opset 21)", func(t *testing.T) {
		got := mustRun(t, "GroupNormalization", groups, x(ir.Float64), f(ir.Float64, sh(4), 1, 2, 3, 4), f(ir.Float64, sh(4), 0, 0, 1, 1))
		requireClose(t, got, ir.Float64, sh(1, 4, 2), []float64{
			-1.141007739570316, -0.6352743772255343, 0.5788444407495162, 2.973719792842185,
			-2.8975536338543675, -0.4667611379941665, 2.6280534356856897, 6.524366260112359}, 1e-12)
	})
	t.Run("per-group scale (opset 18)", func(t *testing.T) {
		got := mustRun(t, "GroupNormalization", groups, x(ir.Float32), f(ir.Float32, sh(2), 1, 2), f(ir.Float32, sh(2), 0, 1))
		requireClose(t, got, ir.Float32, sh(1, 4, 2), []float64{
			-1.141007739570316, -0.6352743772255343, 0.2894222203747581, 1.4868598964210924,
			-1.598369089236245, 0.02215924133722236, 1.8140267178428449, 3.7621831300561794}, 1e-6)
	})
	p := f(ir.Float32, sh(4), 1, 1, 1, 1)
	_, err := runOp(t, "GroupNormalization", 1, []ir.AttrOption{ir.Int("num_groups", 3)}, x(ir.Float32), p, p)
	require.Error(t, err, "3 groups of 4 channels")
	_, err = runOp(t, "GroupNormalization", 1, nil, x(ir.Float32), p, p)
	require.Error(t, err, "no num_groups")
	_, err = runOp(t, "GroupNormalization", 1, groups, x(ir.Float32), f(ir.Float32, sh(3), 1, 1, 1), f(ir.Float32, sh(3), 1, 1, 1))
	require.Error(t, err, "scale of 3")
}

func TestMeanVarianceNormalization(t *testing.T) {
	x := func(dt ir.DType) *ir.Tensor { return f(dt, sh(2, 2, 1, 2), 1, 2, 3, 5, 0, 4, -1, 7) }
	for _, dt := range floats {
		t.Run(dt.String(), func(t *testing.T) {
			requireClose(t, mustRun(t, "MeanVarianceNormalization", nil, x(dt)), dt, sh(2, 2, 1, 2), []float64{
				-0.5070925524942528, 0.16903085083141758, -0.16903085088856046, 0.5070925526656813,
				-1.1832159558199231, 1.5212776574827582, -1.521277657997044, 1.1832159562199231}, max(tolFor(dt), 1e-9))
		})
	}
	got := mustRun(t, "MeanVarianceNormalization", []ir.AttrOption{ir.Ints("axes", 1)}, x(ir.Float64))
	requireClose(t, got, ir.Float64, sh(2, 2, 1, 2), []float64{
		-0.9999999989999999, -0.9999999993333333, 0.9999999989999999, 0.9999999993333333,
		0.9999999980000001, -0.9999999993333333, -0.9999999980000001, 0.9999999993333333}, 1e-12)
	_, err := runOp(t, "MeanVarianceNormalization", 1, nil, f(ir.Float32, sh(2, 2), 1, 2, 3, 4))
	require.Error(t, err, "default axes need rank 4")
}

func TestLRN(t *testing.T) {
	x := func(dt ir.DType) *ir.Tensor { return f(dt, sh(1, 3, 1, 1), 1, 2, 3) }
	for _, dt := range floats {
		t.Run(dt.String(), func(t *testing.T) {
			got := mustRun(t, "LRN", []ir.AttrOption{ir.Int("size", 2), ir.Float("alpha", 0.5)}, x(dt))
			requireClose(t, got, dt, sh(1, 3, 1, 1), []float64{0.5443310539518174, 0.6756756967119766, 1.2393921296689154}, tolFor(dt))
			got = mustRun(t, "LRN", []ir.AttrOption{ir.Int("size", 3), ir.Float("alpha", 0.5), ir.Float("beta", 0.5), ir.Float("bias", 2)}, x(dt))
			requireClose(t, got, dt, sh(1, 3, 1, 1), []float64{0.5940885257860046, 0.9607689228305228, 1.4696938456699071}, tolFor(dt))
		})
	}
	_, err := runOp(t, "LRN", 1, nil, x(ir.Float32))
	require.Error(t, err, "size is required")
}
