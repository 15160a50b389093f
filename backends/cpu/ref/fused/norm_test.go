package fused

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestRMSNormLiterals(t *testing.T) {
	for _, dt := range floatTypes {
		// Rows [2 -2 2 -2] and [3 4 0 0]: mean squares 4 and 6.25, rms 2 and 2.5.
		x := tensor(dt, []int64{2, 4}, 2, -2, 2, -2, 3, 4, 0, 0)
		scale := tensor(dt, []int64{4}, 1, 2, 0.5, -1)
		got := must(t, "RMSNormalization", at(ir.Float("epsilon", 0)), x, scale)
		requireNear(t, tensor(dt, []int64{2, 4}, 1, -2, 0.5, 1, 1.2, 3.2, 0, 0), got, 1, 0, dt.String())
		// axis 0 normalizes over the whole tensor: mean square (16+25)/8.
		got = must(t, "RMSNormalization", at(ir.Int("axis", 0), ir.Float("epsilon", 0)), x, tensor(dt, nil, 1))
		r := math.Sqrt(41.0 / 8)
		requireNear(t, tensor(dt, []int64{2, 4}, 2/r, -2/r, 2/r, -2/r, 3/r, 4/r, 0, 0), got, 1, 0, dt.String()+" axis 0")
	}
	// The default epsilon is 1e-5: a zero row stays zero, a row of 1e-3 is
	// 1e-3/sqrt(1e-6+1e-5).
	got := must(t, "RMSNormalization", nil, tensor(ir.Float64, []int64{2, 2}, 0, 0, 1e-3, 1e-3), tensor(ir.Float64, []int64{1}, 1))
	w := 1e-3 / math.Sqrt(1e-6+float64(float32(1e-5)))
	requireNear(t, tensor(ir.Float64, []int64{2, 2}, 0, 0, w, w), got, 4, 0, "default epsilon")
}

// TestRMSNormIsComposition: RMSNormalization equals Pow(X, 2) →
// ReduceMean(axes ≥ axis) → Add(epsilon) → Sqrt → Div(X, ·) → Mul(Scale).
func TestRMSNormIsComposition(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 80; iter++ {
		rank := 1 + rng.IntN(4)
		shape := make([]int64, rank)
		for i := range shape {
			shape[i] = randDim(rng, 7)
		}
		axis := rng.IntN(2*rank) - rank
		a := axis
		if a < 0 {
			a += rank
		}
		// Scale: a suffix of the normalized shape with some dims set to 1.
		ss := append([]int64{}, shape[a+rng.IntN(rank-a+1):]...)
		for i := range ss {
			if rng.IntN(3) == 0 {
				ss[i] = 1
			}
		}
		epsAttr := float32(rng.Float64() * 1e-3)
		axes := []int64{}
		for d := a; d < rank; d++ {
			axes = append(axes, int64(d))
		}
		for _, dt := range floatTypes {
			x, scale := random(rng, dt, shape, 3), random(rng, dt, ss, 2)
			attrs := at(ir.Int("axis", int64(axis)), ir.Float("epsilon", epsAttr))
			msg := fmt.Sprintf("%v X%v axis %d Scale%v", dt, shape, axis, ss)
			got, err := run("RMSNormalization", attrs, x, scale)
			require.NoError(t, err, msg)

			chain := func(x, scale *ir.Tensor) *ir.Tensor {
				sq := must(t, "Pow", nil, x, ir.FromFloat64(x.DType, nil, []float64{2}))
				mean := must(t, "ReduceMean", at(ir.Int("keepdims", 1)), sq, ir.FromInt64([]int64{int64(len(axes))}, axes))
				rms := must(t, "Sqrt", nil, must(t, "Add", nil, mean, ir.FromFloat64(x.DType, nil, []float64{float64(epsAttr)})))
				return must(t, "Mul", nil, must(t, "Div", nil, x, rms), scale)
			}
			requireNear(t, roundTo(dt, chain(widen(x), widen(scale))), got, 2, 0, msg+" (f64 chain)")
			requireNear(t, chain(x, scale), got, 8, 0, msg+" (native chain)")
		}
	}
}

func TestRMSNormErrors(t *testing.T) {
	f := func(dims ...int64) *ir.Tensor { return ir.NewTensor(ir.Float32, dims) }
	_, err := run("RMSNormalization", at(ir.Int("axis", 2)), f(2, 3), f(3))
	requireErr(t, err, "axis 2 out of range")
	_, err = run("RMSNormalization", nil, f(2, 3), f(2))
	requireErr(t, err, "Scale has shape [2]", "[2 3]")
	_, err = run("RMSNormalization", nil, f(2, 3), ir.NewTensor(ir.Float16, []int64{3}))
	requireErr(t, err, "Scale is f16, X is f32")
	_, err = run("RMSNormalization", nil, ir.NewTensor(ir.Int64, []int64{3}), ir.NewTensor(ir.Int64, []int64{3}))
	requireUnsupported(t, err, "RMSNormalization", "i64")
	_, err = run("RMSNormalization", nil, f(3))
	requireErr(t, err, "missing required input 1")
}

func TestSiLU(t *testing.T) {
	for _, dt := range floatTypes {
		// x·sigmoid(x): 0 → 0, 2 → 2/(1+e^-2), -2 → -2/(1+e^2), 1 → 1/(1+e^-1).
		x := tensor(dt, []int64{4}, 0, 2, -2, 1)
		want := tensor(dt, []int64{4}, 0, 2/(1+math.Exp(-2)), -2/(1+math.Exp(2)), 1/(1+math.Exp(-1)))
		requireNear(t, want, must(t, "SiLU", nil, x), 1, 0, dt.String())
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dt := range floatTypes {
		for _, shape := range [][]int64{{}, {1}, {7}, {3, 1, 5}, {2, 0, 3}} {
			x := random(rng, dt, shape, 8)
			chain := func(x *ir.Tensor) *ir.Tensor { return must(t, "Mul", nil, x, must(t, "Sigmoid", nil, x)) }
			got := must(t, "SiLU", nil, x)
			requireNear(t, roundTo(dt, chain(widen(x))), got, 1, 0, fmt.Sprint(dt, shape))
			requireNear(t, chain(x), got, 3, 0, fmt.Sprint(dt, shape, " native"))
		}
	}
	_, err := run("SiLU", nil, ir.NewTensor(ir.Int32, []int64{2}))
	requireUnsupported(t, err, "SiLU", "i32")
}
