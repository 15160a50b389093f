package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

var vecLens = []int{0, 1, 7, 8, 15, 16, 17, 31, 33, 63, 64, 129, 1000}

// vecInputs returns n values spread over [-lim, lim], with the special
// values at the front when n allows.
func vecInputs(r *rand.Rand, n int, lim float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((r.Float64()*2 - 1) * lim)
	}
	specials := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1, -1, float32(lim), float32(-lim)}
	copy(x, specials)
	return x
}

// tolCheck fails t when got is further than atol + rtol·|want| from want,
// and returns the absolute error.
func tolCheck(t *testing.T, what string, x float32, got float32, want, atol, rtol float64) float64 {
	t.Helper()
	e := math.Abs(float64(got) - want)
	if !(e <= atol+rtol*math.Abs(want)) {
		t.Fatalf("%s(%g) = %g, want %g (error %g)", what, x, got, want, e)
	}
	return e
}

func TestVecActivations(t *testing.T) {
	const c = 0.7978845608028654 // √(2/π)
	cases := []struct {
		name string
		f    func([]float32)
		ref  func(float64) float64
		lim  float64
		// tolerance: atol·max(1, |x|) + (rtol + 2e-7·arg(x))·|want|, where
		// arg is the size of the argument of the exponential (the float32
		// roundings of the few operations that form it are inherent)
		atol, rtol float64
		arg        func(float64) float64
	}{
		// 0.5·(1 + erf(x/√2)) = 0.5·erfc(−x/√2), and 0.5·(1 + tanh(u)) =
		// 1/(1 + e^−2u), both without the float64 cancellation of 1 + …
		{"GeluErf", GeluErf, func(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }, 12, 1.2e-7, 2e-7, func(float64) float64 { return 0 }},
		{"GeluTanh", GeluTanh, func(x float64) float64 { return x / (1 + math.Exp(-2*c*(x+0.044715*x*x*x))) }, 12, 1e-30, 6e-7, func(x float64) float64 { return math.Abs(2 * c * (x + 0.044715*x*x*x)) }},
		{"SiLU", SiLU, func(x float64) float64 { return x / (1 + math.Exp(-x)) }, 30, 1e-30, 6e-7, math.Abs},
		{"Sigmoid", Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, 30, 1e-30, 6e-7, math.Abs},
	}
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, tc := range cases {
			worst := 0.0
			for _, n := range vecLens {
				x := vecInputs(r, n, tc.lim)
				y := append([]float32(nil), x...)
				tc.f(y)
				for i, v := range x {
					want := tc.ref(float64(v))
					e := tolCheck(t, tc.name, v, y[i], want, tc.atol*math.Max(1, math.Abs(float64(v))), tc.rtol+tc.arg(float64(v))*2e-7)
					worst = math.Max(worst, e/math.Max(1, math.Abs(want)))
				}
			}
			t.Logf("%s: max error %.3g (absolute, relative above 1)", tc.name, worst)
			// NaN propagates.
			nan := []float32{float32(math.NaN()), 1, float32(math.NaN())}
			nan = append(nan, make([]float32, 30)...)
			nan[20] = float32(math.NaN())
			tc.f(nan)
			for _, i := range []int{0, 2, 20} {
				if !math.IsNaN(float64(nan[i])) {
					t.Fatalf("%s(NaN) = %g at %d, want NaN", tc.name, nan[i], i)
				}
			}
		}
	})
}

func TestVecExpSum(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		worst := 0.0
		for _, n := range vecLens {
			x := vecInputs(r, n, 40)
			for i := 3; i < n; i += 5 {
				x[i] = float32(math.Inf(-1)) // masked scores
			}
			const m = 2.5
			y := append([]float32(nil), x...)
			got := ExpSum(y, m)
			var want float64
			for i, v := range x {
				w := math.Exp(float64(v) - m)
				if float64(v)-m < expLo {
					w = 0 // below the clamp: exactly 0 by contract
				}
				want += w
				// float32 x − m rounds: |x − m|·2⁻²⁴ more relative error.
				rt := 3e-7
				if w > 0 {
					rt += math.Abs(float64(v)-m) * 6e-8
				}
				e := tolCheck(t, "ExpSum", v, y[i], w, 0, rt)
				if w > 0 && math.Abs(float64(v)-m) < 1 {
					worst = math.Max(worst, e/w)
				}
			}
			tolCheck(t, "ExpSum sum", float32(n), got, want, 0, 2e-6)
		}
		t.Logf("exp: max relative error %.3g for |x−m| < 1", worst)
		nan := make([]float32, 40)
		nan[33] = float32(math.NaN())
		if s := ExpSum(nan, 0); !math.IsNaN(float64(s)) {
			t.Fatalf("ExpSum with a NaN = %g, want NaN", s)
		}
	})
}

func TestVecReductions(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, n := range vecLens[1:] {
			x := vecInputs(r, n, 3)
			x[r.IntN(n)] = 7.25 // a unique maximum anywhere, tails included
			if got := Max(x); got != 7.25 {
				t.Fatalf("Max over %d = %g, want 7.25", n, got)
			}
			var sum, mean, ssd float64
			for _, v := range x {
				sum += float64(v)
			}
			mean = sum / float64(n)
			for _, v := range x {
				ssd += (float64(v) - mean) * (float64(v) - mean)
			}
			tolCheck(t, "Sum", float32(n), Sum(x), sum, 1e-5*float64(n), 0)
			tolCheck(t, "SumSqDev", float32(n), SumSqDev(x, float32(mean)), ssd, 1e-5, 1e-5)

			m := vecInputs(r, n, 1)
			for _, withM := range []bool{false, true} {
				y := append([]float32(nil), x...)
				var mm []float32
				if withM {
					mm = m
				}
				ScaleAdd(y, 0.125, mm)
				for i, v := range x {
					want := float64(v) * 0.125
					if withM {
						want += float64(m[i])
					}
					tolCheck(t, "ScaleAdd", v, y[i], want, 1e-7, 1e-7)
				}
			}

			g, b := vecInputs(r, n, 2), vecInputs(r, n, 2)
			for _, withB := range []bool{false, true} {
				y := make([]float32, n)
				var bb []float32
				if withB {
					bb = b
				}
				NormAffine(x, y, g, bb, 0.5, 1.5)
				for i, v := range x {
					want := (float64(v) - 0.5) * 1.5 * float64(g[i])
					if withB {
						want += float64(b[i])
					}
					tolCheck(t, "NormAffine", v, y[i], want, 1e-6, 1e-6)
				}
			}
		}
	})
}

// BenchmarkVecGeluErf times the vector GELU against the scalar loop it
// replaces (one row of a BERT-base FFN activation).
func BenchmarkVecGeluErf(b *testing.B) {
	x := randFloats(rand.New(rand.NewPCG(1, 1)), 3072)
	for _, isa := range Levels() {
		b.Run(isa.String(), func(b *testing.B) {
			prev, _ := SetISA(isa.String())
			defer current.Store(int32(prev))
			y := make([]float32, len(x))
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				copy(y, x)
				GeluErf(y)
			}
		})
	}
}

func BenchmarkVecExpSum(b *testing.B) {
	x := randFloats(rand.New(rand.NewPCG(1, 1)), 128)
	for _, isa := range Levels() {
		b.Run(isa.String(), func(b *testing.B) {
			prev, _ := SetISA(isa.String())
			defer current.Store(int32(prev))
			y := make([]float32, len(x))
			for b.Loop() {
				copy(y, x)
				ExpSum(y, 1)
			}
		})
	}
}
