package fused

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestAttentionLiterals(t *testing.T) {
	e := math.E
	p0, p1 := e/(e+1), 1/(e+1) // softmax of scores [1, 0]
	for _, dt := range floatTypes {
		q := tensor(dt, []int64{1, 1, 2, 2}, 1, 0, 0, 2)
		k := tensor(dt, []int64{1, 1, 2, 2}, 1, 0, 0, 1)
		v := tensor(dt, []int64{1, 1, 2, 2}, 1, 2, 3, 4)
		one := at(ir.Float("scale", 1))
		// Query 0 scores [1 0]; query 1 scores [0 2].
		q0 := []float64{p0*1 + p1*3, p0*2 + p1*4}
		r0, r1 := 1/(1+e*e), e*e/(1+e*e)
		q1 := []float64{r0*1 + r1*3, r0*2 + r1*4}
		requireNear(t, tensor(dt, []int64{1, 1, 2, 2}, append(q0, q1...)...), must(t, "Attention", one, q, k, v), 4, 0, dt.String())
		// Causal: query 0 sees key 0 only.
		requireNear(t, tensor(dt, []int64{1, 1, 2, 2}, append([]float64{1, 2}, q1...)...),
			must(t, "Attention", at(ir.Float("scale", 1), ir.Int("is_causal", 1)), q, k, v), 4, 0, dt.String()+" causal")
		// A bool mask that hides key 1 from query 1 only.
		keep := ir.NewTensor(ir.Bool, []int64{2, 2})
		for i, b := range []int64{1, 1, 1, 0} {
			keep.SetInt64(i, b)
		}
		requireNear(t, tensor(dt, []int64{1, 1, 2, 2}, append(q0, 1, 2)...), must(t, "Attention", one, q, k, v, keep), 4, 0, dt.String()+" bool mask")
		// An additive mask of -1 on key 0 turns query 0's scores into [0 0].
		add := tensor(dt, []int64{2}, -1, 0)
		requireNear(t, tensor(dt, []int64{1, 1, 2, 2}, 2, 3, (r0/e)*1/(r0/e+r1)+r1*3/(r0/e+r1), (r0/e)*2/(r0/e+r1)+r1*4/(r0/e+r1)),
			must(t, "Attention", one, q, k, v, add), 4, 0, dt.String()+" additive mask")
		// The default scale is 1/sqrt(D) = 1/sqrt(2): query 0 scores [1/√2 0].
		s := 1 / math.Sqrt2
		w0, w1 := math.Exp(s)/(math.Exp(s)+1), 1/(math.Exp(s)+1)
		got := must(t, "Attention", nil, q, k, v)
		requireNear(t, tensor(dt, []int64{1}, w0*1+w1*3), tensor(dt, []int64{1}, got.Float64(0)), 4, 0, dt.String()+" default scale")
	}
	// Grouped-query: 2 query heads share one kv head; with one key, every
	// query returns that key's value.
	q := tensor(ir.Float32, []int64{1, 2, 1, 1}, 5, -5)
	k := tensor(ir.Float32, []int64{1, 1, 1, 1}, 1)
	v := tensor(ir.Float32, []int64{1, 1, 1, 3}, 7, 8, 9)
	requireNear(t, tensor(ir.Float32, []int64{1, 2, 1, 3}, 7, 8, 9, 7, 8, 9), must(t, "Attention", nil, q, k, v), 0, 0, "gqa")
	// Decoding: 1 query against 3 cached keys sees them all when causal.
	q = tensor(ir.Float32, []int64{1, 1, 1, 1}, 0)
	k = tensor(ir.Float32, []int64{1, 1, 3, 1}, 1, 2, 3)
	v = tensor(ir.Float32, []int64{1, 1, 3, 1}, 3, 6, 9)
	requireNear(t, tensor(ir.Float32, []int64{1, 1, 1, 1}, 6), must(t, "Attention", at(ir.Int("is_causal", 1)), q, k, v), 1, 0, "decode")
}

// attnChain is Attention written with the unfused kernels: K and V heads
// repeated with Gather, Transpose, MatMul, Mul(scale), Add(mask) or
// Where(mask, ·, -inf), Add(causal mask), Softmax, MatMul. It returns the
// output and the largest score magnitude.
func attnChain(t *testing.T, q, k, v, mask *ir.Tensor, scale float64, causal bool) (*ir.Tensor, float64) {
	dt := q.DType
	h, hkv, sq, skv := q.Shape[1], k.Shape[1], q.Shape[2], k.Shape[2]
	if h != hkv {
		idx := make([]int64, h)
		for i := range idx {
			idx[i] = int64(i) / (h / hkv)
		}
		heads := ir.FromInt64([]int64{h}, idx)
		k = must(t, "Gather", at(ir.Int("axis", 1)), k, heads)
		v = must(t, "Gather", at(ir.Int("axis", 1)), v, heads)
	}
	s := must(t, "MatMul", nil, q, must(t, "Transpose", at(ir.Ints("perm", 0, 1, 3, 2)), k))
	s = must(t, "Mul", nil, s, ir.FromFloat64(dt, nil, []float64{scale}))
	mag := maxAbs(s)
	switch {
	case mask == nil:
	case mask.DType == ir.Bool:
		s = must(t, "Where", nil, mask, s, ir.FromFloat64(dt, nil, []float64{math.Inf(-1)}))
	default:
		s = must(t, "Add", nil, s, mask)
	}
	if causal {
		cm := ir.NewTensor(dt, []int64{sq, skv})
		for i := int64(0); i < sq; i++ {
			for j := i + skv - sq + 1; j < skv; j++ {
				if j >= 0 {
					cm.SetFloat64(int(i*skv+j), math.Inf(-1))
				}
			}
		}
		s = must(t, "Add", nil, s, cm)
	}
	return must(t, "MatMul", nil, must(t, "Softmax", at(ir.Int("axis", -1)), s), v), mag
}

// TestAttentionIsComposition: Attention equals the unfused chain on random
// shapes (grouped-query heads, Sq ≠ Skv both ways, size-1 dims), with no
// mask, a float mask (with -inf entries) or a bool mask broadcast from a
// smaller shape, causal or not, with and without an explicit scale.
func TestAttentionIsComposition(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for iter := 0; iter < 150; iter++ {
		b, hkv, group := randDim(rng, 2), randDim(rng, 3), randDim(rng, 3)
		h, sq, skv, d, dv := hkv*group, randDim(rng, 6), randDim(rng, 7), randDim(rng, 6), randDim(rng, 5)
		full := []int64{b, h, sq, skv}
		causal := rng.IntN(2) == 0
		var attrs []ir.AttrOption
		scale := 1 / math.Sqrt(float64(d))
		if rng.IntN(3) == 0 {
			sc := float32(0.1 + rng.Float64())
			attrs, scale = append(attrs, ir.Float("scale", sc)), float64(sc)
		}
		if causal {
			attrs = append(attrs, ir.Int("is_causal", 1))
		}
		maskKind := rng.IntN(3) // 0 none, 1 float, 2 bool
		ms := biasShape(rng, full)
		if len(ms) > 4 {
			ms = ms[1:] // a mask broadcasts to the scores, not the other way
		}
		for _, dt := range floatTypes {
			q, k, v := random(rng, dt, []int64{b, h, sq, d}, 2), random(rng, dt, []int64{b, hkv, skv, d}, 2), random(rng, dt, []int64{b, hkv, skv, dv}, 2)
			var mask *ir.Tensor
			switch maskKind {
			case 1:
				mask = random(rng, dt, ms, 2)
				for i := 0; i < mask.Len(); i++ {
					if rng.IntN(5) == 0 {
						mask.SetFloat64(i, math.Inf(-1))
					}
				}
			case 2:
				mask = ir.NewTensor(ir.Bool, ms)
				for i := 0; i < mask.Len(); i++ {
					mask.SetInt64(i, int64(min(1, rng.IntN(4))))
				}
			}
			msg := fmt.Sprintf("%v Q%v K%v V%v mask %v causal %v scale %g", dt, q.Shape, k.Shape, v.Shape, mask, causal, scale)
			got, err := run("Attention", attrs, q, k, v, mask)
			require.NoError(t, err, msg)

			wmask := mask
			if mask != nil && mask.DType != ir.Bool {
				wmask = widen(mask)
			}
			wide, _ := attnChain(t, widen(q), widen(k), widen(v), wmask, scale, causal)
			requireNear(t, roundTo(dt, wide), got, 2, 0, msg+" (f64 chain)")
			native, mag := attnChain(t, q, k, v, mask, scale, causal)
			requireNear(t, native, got, 8, maxAbs(v)*(1+mag), msg+" (native chain)")
		}
	}
}

func TestAttentionErrors(t *testing.T) {
	f := func(dims ...int64) *ir.Tensor { return ir.NewTensor(ir.Float32, dims) }
	cases := []struct {
		name      string
		in        []*ir.Tensor
		fragments []string
	}{
		{"rank", []*ir.Tensor{f(1, 2, 4), f(1, 2, 4), f(1, 2, 4)}, []string{"must be 4-D"}},
		{"heads", []*ir.Tensor{f(1, 3, 2, 4), f(1, 2, 2, 4), f(1, 2, 2, 4)}, []string{"3 heads", "2 kv heads"}},
		{"head size", []*ir.Tensor{f(1, 2, 2, 4), f(1, 2, 2, 3), f(1, 2, 2, 4)}, []string{"K head size 3", "Q's 4"}},
		{"batch", []*ir.Tensor{f(2, 2, 2, 4), f(1, 2, 2, 4), f(1, 2, 2, 4)}, []string{"batch sizes differ"}},
		{"v", []*ir.Tensor{f(1, 2, 2, 4), f(1, 2, 2, 4), f(1, 2, 3, 4)}, []string{"V [1 2 3 4] does not match K"}},
		{"mask shape", []*ir.Tensor{f(1, 2, 2, 4), f(1, 2, 3, 4), f(1, 2, 3, 4), f(2, 2)}, []string{"Mask has shape [2 2]", "[1 2 2 3]"}},
		{"mask dtype", []*ir.Tensor{f(1, 2, 2, 4), f(1, 2, 3, 4), f(1, 2, 3, 4), ir.NewTensor(ir.Int64, []int64{3})}, []string{"Mask is i64"}},
		{"dtype", []*ir.Tensor{f(1, 2, 2, 4), ir.NewTensor(ir.Float16, []int64{1, 2, 3, 4}), f(1, 2, 3, 4)}, []string{"K is f16, Q is f32"}},
		{"missing", []*ir.Tensor{f(1, 2, 2, 4), f(1, 2, 3, 4)}, []string{"missing required input 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := run("Attention", nil, c.in...)
			requireErr(t, err, c.fragments...)
		})
	}
	i := ir.NewTensor(ir.Int32, []int64{1, 1, 1, 1})
	_, err := run("Attention", nil, i, i, i)
	requireUnsupported(t, err, "Attention", "i32")
}
