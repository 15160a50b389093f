package fused

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestFusedMatMulLiterals(t *testing.T) {
	a := []float64{1, 2, 3, 4}
	b := []float64{1, 0, 0, -1}
	bias := []float64{0.5, 1}
	// A·B = [[1 -2] [3 -4]]; + bias = [[1.5 -1] [3.5 -3]].
	cases := []struct {
		name  string
		attrs []ir.AttrOption
		bias  bool
		want  []float64
	}{
		{"plain", nil, false, []float64{1, -2, 3, -4}},
		{"bias", nil, true, []float64{1.5, -1, 3.5, -3}},
		{"relu", at(ir.Str(attrActivation, "Relu")), true, []float64{1.5, 0, 3.5, 0}},
		{"leaky", at(ir.Str(attrActivation, "LeakyRelu"), ir.Float(attrAlpha, 0.5)), true, []float64{1.5, -0.5, 3.5, -1.5}},
		{"clip", at(ir.Str(attrActivation, "Clip"), ir.Float(attrAlpha, -1), ir.Float(attrBeta, 2)), true, []float64{1.5, -1, 2, -1}},
		{"silu", at(ir.Str(attrActivation, "SiLU")), false, []float64{1 / (1 + 0.36787944117144233), -2 / (1 + 7.38905609893065), 3 / (1 + 0.049787068367863944), -4 / (1 + 54.598150033144236)}},
	}
	for _, dt := range floatTypes {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%v/%s", dt, c.name), func(t *testing.T) {
				in := []*ir.Tensor{tensor(dt, []int64{2, 2}, a...), tensor(dt, []int64{2, 2}, b...)}
				if c.bias {
					in = append(in, tensor(dt, []int64{2}, bias...))
				}
				got := must(t, "FusedMatMul", c.attrs, in...)
				requireNear(t, tensor(dt, []int64{2, 2}, c.want...), got, 4, 0, c.name)
			})
		}
	}
}

// mmShapes draws numpy-matmul operand shapes: ranks 1 to 4 with
// broadcasting batch dims, odd sizes and size-1 dims.
func mmShapes(rng *rand.Rand) (a, b []int64) {
	m, k, n := randDim(rng, 9), randDim(rng, 11), randDim(rng, 9)
	batch := make([]int64, rng.IntN(3))
	for i := range batch {
		batch[i] = randDim(rng, 3)
	}
	side := func(last ...int64) []int64 {
		var s []int64
		for i, d := range batch[rng.IntN(len(batch)+1):] {
			_ = i
			if rng.IntN(3) == 0 {
				d = 1
			}
			s = append(s, d)
		}
		return append(s, last...)
	}
	switch rng.IntN(6) {
	case 0:
		return []int64{k}, side(k, n)
	case 1:
		return side(m, k), []int64{k}
	}
	return side(m, k), side(k, n)
}

// biasShape draws a shape that broadcasts against out: a suffix of out's
// dims, some set to 1, sometimes (when it is all of out) with an extra
// leading dim that the sum takes on.
func biasShape(rng *rand.Rand, out []int64) []int64 {
	s := append([]int64{}, out[len(out)-rng.IntN(len(out)+1):]...)
	for i := range s {
		if rng.IntN(3) == 0 {
			s[i] = 1
		}
	}
	if len(s) == len(out) && rng.IntN(8) == 0 {
		s = append([]int64{2}, s...)
	}
	return s
}

// TestFusedMatMulIsComposition: FusedMatMul equals MatMul → Add → activation
// run with the unfused kernels, for every dtype and activation on random
// shapes: exactly (to the rounding of dt) when the chain runs in float64 and
// is rounded once, and within the chain's own roundings when it runs in dt.
func TestFusedMatMulIsComposition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 60; iter++ {
		as, bs := mmShapes(rng)
		for _, dt := range floatTypes {
			for _, ac := range activationCases {
				a, b := random(rng, dt, as, 2), random(rng, dt, bs, 2)
				mm := must(t, "MatMul", nil, a, b)
				var bias *ir.Tensor
				if rng.IntN(4) != 0 {
					bias = random(rng, dt, biasShape(rng, mm.Shape), 2)
				}
				in := []*ir.Tensor{a, b, bias}
				msg := fmt.Sprintf("%v A%v B%v bias %v act %q", dt, as, bs, bias, ac.name)
				got, err := run("FusedMatMul", ac.attrsOf(), in...)
				require.NoError(t, err, msg)

				chain := func(a, b, bias *ir.Tensor) (*ir.Tensor, float64) {
					y := must(t, "MatMul", nil, a, b)
					scale := maxAbs(y) // the size of the terms, for the rounding of the sum
					if bias != nil {
						y = must(t, "Add", nil, y, bias)
						scale = max(scale, maxAbs(bias))
					}
					return ac.apply(t, y), scale
				}
				wide, _ := chain(widen(a), widen(b), widen(bias))
				requireNear(t, roundTo(dt, wide), got, 1, 0, msg+" (f64 chain)")
				native, scale := chain(a, b, bias)
				requireNear(t, native, got, 6, scale, msg+" (native chain)")
			}
		}
	}
}

func TestFusedMatMulErrors(t *testing.T) {
	f := func(dims ...int64) *ir.Tensor { return ir.NewTensor(ir.Float32, dims) }
	_, err := run("FusedMatMul", nil, ir.NewTensor(ir.Int32, []int64{2, 2}), ir.NewTensor(ir.Int32, []int64{2, 2}))
	requireUnsupported(t, err, "FusedMatMul", "i32")
	_, err = run("FusedMatMul", at(ir.Str(attrActivation, "Swish")), f(2, 2), f(2, 2))
	requireUnsupported(t, err, `activation "Swish"`)
	_, err = run("FusedMatMul", nil, f(2, 2), ir.NewTensor(ir.Float16, []int64{2, 2}))
	requireErr(t, err, "B is f16, A is f32")
	_, err = run("FusedMatMul", nil, f(2, 2), f(2, 2), ir.NewTensor(ir.Float64, []int64{2}))
	requireErr(t, err, "Bias is f64")
	_, err = run("FusedMatMul", nil, f(2, 3), f(2, 3))
	requireErr(t, err, "MatMul", "inner dims")
	_, err = run("FusedMatMul", nil, f(2, 3), f(3, 4), f(3))
	requireErr(t, err, "Bias", "not broadcastable")
	_, err = run("FusedMatMul", nil, f(2, 3))
	requireErr(t, err, "missing required input 1")
}

func TestFusedConvLiterals(t *testing.T) {
	// 1-D: X [1,1,4] = 1 2 3 4, W [1,1,2] = 1 -1 → Conv = -1 -1 -1;
	// + B 0.5 = -0.5 x3; + Z = 1 0 -2 → 0.5 -0.5 -2.5; Relu → 0.5 0 0.
	for _, dt := range floatTypes {
		x := tensor(dt, []int64{1, 1, 4}, 1, 2, 3, 4)
		w := tensor(dt, []int64{1, 1, 2}, 1, -1)
		b := tensor(dt, []int64{1}, 0.5)
		z := tensor(dt, []int64{1, 1, 3}, 1, 0, -2)
		got := must(t, "FusedConv", at(ir.Str(attrActivation, "Relu")), x, w, b, z)
		requireNear(t, tensor(dt, []int64{1, 1, 3}, 0.5, 0, 0), got, 0, 0, dt.String())
		got = must(t, "FusedConv", at(ir.Ints("pads", 1, 0)), x, w, nil, nil)
		requireNear(t, tensor(dt, []int64{1, 1, 4}, -1, -1, -1, -1), got, 0, 0, dt.String()+" padded")
	}
}

// convCase draws a random Conv (1-D or 2-D, groups, strides, pads,
// dilations) and returns its inputs' shapes and attributes.
func convCase(rng *rand.Rand) (xs, ws []int64, attrs []ir.AttrOption) {
	sp := 1 + rng.IntN(2)
	g := int64(1 + rng.IntN(2))
	cin, m := g*randDim(rng, 3), g*randDim(rng, 3)
	xs, ws = []int64{randDim(rng, 2), cin}, []int64{m, cin / g}
	var strides, dil, pads []int64
	for i := 0; i < sp; i++ {
		k := randDim(rng, 3)
		d := int64(1 + rng.IntN(2))
		ws = append(ws, k)
		xs = append(xs, (k-1)*d+randDim(rng, 6))
		strides = append(strides, int64(1+rng.IntN(2)))
		dil = append(dil, d)
	}
	for i := 0; i < 2*sp; i++ {
		pads = append(pads, int64(rng.IntN(2)))
	}
	return xs, ws, at(ir.Int("group", g), ir.Ints("strides", strides...), ir.Ints("dilations", dil...), ir.Ints("pads", pads...))
}

// TestFusedConvIsComposition: FusedConv equals Conv → Add(Z) → activation.
func TestFusedConvIsComposition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 25; iter++ {
		xs, ws, convAttrs := convCase(rng)
		for _, dt := range floatTypes {
			for _, ac := range activationCases {
				x, w := random(rng, dt, xs, 2), random(rng, dt, ws, 1)
				var b, z *ir.Tensor
				if rng.IntN(2) == 0 {
					b = random(rng, dt, ws[:1], 1)
				}
				conv := must(t, "Conv", convAttrs, x, w, b)
				if rng.IntN(2) == 0 {
					z = random(rng, dt, conv.Shape, 2)
				}
				msg := fmt.Sprintf("%v X%v W%v bias %v residual %v act %q", dt, xs, ws, b != nil, z != nil, ac.name)
				got, err := run("FusedConv", ac.attrsOf(convAttrs...), x, w, b, z)
				require.NoError(t, err, msg)

				chain := func(x, w, b, z *ir.Tensor) (*ir.Tensor, float64) {
					y := must(t, "Conv", convAttrs, x, w, b)
					scale := maxAbs(y)
					if z != nil {
						y = must(t, "Add", nil, y, z)
						scale = max(scale, maxAbs(z))
					}
					return ac.apply(t, y), scale
				}
				wide, _ := chain(widen(x), widen(w), widen(b), widen(z))
				requireNear(t, roundTo(dt, wide), got, 1, 0, msg+" (f64 chain)")
				native, scale := chain(x, w, b, z)
				requireNear(t, native, got, 6, scale, msg+" (native chain)")
			}
		}
	}
}

func TestFusedConvErrors(t *testing.T) {
	f := func(dims ...int64) *ir.Tensor { return ir.NewTensor(ir.Float32, dims) }
	_, err := run("FusedConv", nil, f(1, 1, 4), f(1, 1, 2), nil, f(1, 1, 4))
	requireErr(t, err, "Z has shape [1 1 4]", "[1 1 3]")
	_, err = run("FusedConv", at(ir.Str(attrActivation, "Elu")), f(1, 1, 4), f(1, 1, 2))
	requireUnsupported(t, err, `activation "Elu"`)
	_, err = run("FusedConv", nil, f(1, 2, 4), f(1, 1, 2))
	requireErr(t, err, "Conv")
	_, err = run("FusedConv", nil, f(1, 1, 4), f(1, 1, 2), nil, ir.NewTensor(ir.Float64, []int64{1, 1, 3}))
	requireErr(t, err, "Z is f64")
	_, err = run("FusedConv", nil, ir.NewTensor(ir.Uint8, []int64{1, 1, 4}), ir.NewTensor(ir.Uint8, []int64{1, 1, 2}))
	requireUnsupported(t, err, "u8")
}
