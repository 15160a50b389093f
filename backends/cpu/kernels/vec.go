package kernels

import "math"

// Vector math over float32 slices: activations, the exponential sums of a
// softmax, and the row statistics of a normalization. On amd64 the bulk of
// each slice runs in AVX-512 (16 lanes) or AVX2 (8 lanes) assembly
// (vec_amd64.s); the tail, and every GOARCH without the assembly, runs the
// scalar Go below, which evaluates the same formulas.
//
// The exponential (expF32) is e^x = 2^k·e^r with k = round(x·log2 e) and
// r = x − k·ln 2 (ln 2 split in a high and a low part, |r| ≤ ln2/2), e^r by
// its degree-6 Taylor polynomial (truncation below 1.2e-7 relative), 2^k
// by building the exponent (VSCALEFPS on AVX-512). Inputs are clamped to
// [−87.34, 88]: below, the result is the smallest normal (about 1.2e-38)
// instead of the true tiny value; above, e^88 (1.65e38) instead of +Inf.
// The functions here only call it where that cannot matter (ExpSum turns
// everything below the clamp into an exact 0). Measured relative error
// against float64 math.Exp: below 3e-7 (vec_test.go).

// Activation selectors shared with the assembly.
const (
	actGeluErf = iota
	actGeluTanh
	actSiLU
	actSigmoid
)

const (
	expLo = -87.33654 // e^expLo is about the smallest normal float32
	expHi = 88.0
)

// GeluErf replaces each x by GELU(x) = 0.5·x·(1 + erf(x/√2)). erf is
// Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7); the form
// x·(1 − q/2) for x ≥ 0 and x·q/2 for x < 0, q = 1 − erf(|x|/√2), avoids
// the cancellation of 1 + erf for negative x. Max absolute error against
// the float64 formula: about 1e-7·max(1, |x|) (vec_test.go).
func GeluErf(x []float32) { act(actGeluErf, x) }

// GeluTanh replaces each x by the tanh approximation of GELU,
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), computed as x·σ(2u)
// (σ the logistic function), which has no cancellation.
func GeluTanh(x []float32) { act(actGeluTanh, x) }

// SiLU replaces each x by x·σ(x) = x / (1 + e^−x).
func SiLU(x []float32) { act(actSiLU, x) }

// Sigmoid replaces each x by σ(x) = 1 / (1 + e^−x).
func Sigmoid(x []float32) { act(actSigmoid, x) }

// act runs the activation over x. The tail past the assembly's body goes
// through the assembly too, padded in a buffer of whole vectors: each
// element's result then depends on its value only, never on where it sits
// in the slice, so that a tensor cut into pieces (one pool task's rows,
// one activation row of a batch) gets the result of the whole — the
// scalar formulas round the last bit differently (no fused multiply-add).
func act(op int, x []float32) {
	n := actArch(op, x)
	if t := x[n:]; len(t) > 0 {
		var buf [16]float32
		copy(buf[:], t)
		if actArch(op, buf[:]) == len(buf) {
			copy(t, buf[:len(t)])
			return
		}
		actGeneric(op, t)
	}
}

// ExpSum replaces each x by e^(x−m) and returns the sum of the results
// (accumulated in float32 lanes). Values with x−m below −87.34 (−Inf
// among them, the masked scores of an attention row) become exactly 0;
// NaN stays NaN. With m the maximum of x it is the numerator and the
// denominator of a softmax.
func ExpSum(x []float32, m float32) float32 {
	n, s := expSumArch(x, m)
	for i := n; i < len(x); i++ {
		e := expClamped(x[i] - m)
		x[i] = e
		s += e
	}
	return s
}

// Max returns the largest element of x (which must not be empty). A NaN
// in x may or may not be returned.
func Max(x []float32) float32 {
	n, m := maxArch(x)
	if n == 0 {
		m = x[0]
	}
	for _, v := range x[n:] {
		if v > m {
			m = v
		}
	}
	return m
}

// Sum returns the sum of x, accumulated in float32 lanes.
func Sum(x []float32) float32 {
	n, s := sumArch(x)
	for _, v := range x[n:] {
		s += v
	}
	return s
}

// SumSqDev returns Σ (x − mean)², accumulated in float32 lanes.
func SumSqDev(x []float32, mean float32) float32 {
	n, s := sumSqDevArch(x, mean)
	for _, v := range x[n:] {
		d := v - mean
		s += d * d
	}
	return s
}

// ScaleAdd replaces each x[i] by x[i]·s + m[i], or by x[i]·s when m is
// nil. A non-nil m must be at least as long as x.
func ScaleAdd(x []float32, s float32, m []float32) {
	if m != nil {
		m = m[:len(x)]
	}
	n := scaleAddArch(x, s, m)
	if m == nil {
		for i := n; i < len(x); i++ {
			x[i] *= s
		}
		return
	}
	for i := n; i < len(x); i++ {
		x[i] = x[i]*s + m[i]
	}
}

// NormAffine writes y[i] = (x[i] − mean)·inv·g[i] + b[i] (no b when b is
// nil): the last step of a layer normalization. y, g and a non-nil b must
// be at least as long as x; y may be x.
func NormAffine(x, y, g, b []float32, mean, inv float32) {
	y, g = y[:len(x)], g[:len(x)]
	if b != nil {
		b = b[:len(x)]
	}
	n := normArch(x, y, g, b, mean, inv)
	for i := n; i < len(x); i++ {
		o := (x[i] - mean) * inv * g[i]
		if b != nil {
			o += b[i]
		}
		y[i] = o
	}
}

// actGeneric is the scalar form of the activations.
func actGeneric(op int, x []float32) {
	switch op {
	case actGeluErf:
		for i, v := range x {
			x[i] = geluErf1(v)
		}
	case actGeluTanh:
		const k0, k1 = 1.5957691216057308, 1.5957691216057308 * 0.044715
		for i, v := range x {
			x[i] = v / (1 + expF32(-(v * (k0 + k1*v*v))))
		}
	case actSiLU:
		for i, v := range x {
			x[i] = v / (1 + expF32(-v))
		}
	case actSigmoid:
		for i, v := range x {
			x[i] = 1 / (1 + expF32(-v))
		}
	}
}

func geluErf1(v float32) float32 {
	const (
		p  = 0.3275911
		a1 = 0.254829592
		a2 = -0.284496736
		a3 = 1.421413741
		a4 = -1.453152027
		a5 = 1.061405429
	)
	az := v * (1 / math.Sqrt2)
	if az < 0 {
		az = -az
	}
	t := 1 / (1 + p*az)
	poly := t * (a1 + t*(a2+t*(a3+t*(a4+t*a5))))
	h := 0.5 * poly * expF32(-az*az)
	if v < 0 {
		return v * h
	}
	return v * (1 - h)
}

// expF32 is the clamped float32 exponential described above.
func expF32(x float32) float32 {
	if x != x {
		return x
	}
	if x < expLo {
		x = expLo
	}
	if x > expHi {
		x = expHi
	}
	const (
		ln2hi = 0.693145751953125
		ln2lo = 1.428606765330187045e-06
	)
	ki := int32(x*math.Log2E+128.5) - 128 // round to nearest: the sum is positive
	k := float32(ki)
	r := x - k*ln2hi - k*ln2lo
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return p * math.Float32frombits(uint32(ki+127)<<23)
}

// expClamped is expF32 that is exactly 0 below the clamp (−Inf included).
func expClamped(x float32) float32 {
	if x < expLo {
		return 0
	}
	return expF32(x)
}
