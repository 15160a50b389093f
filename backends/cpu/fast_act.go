package cpu

import (
	"math"

	"github.com/weftrt/weft/ir"
)

// fastAct returns the epilogue activation of a fused node: fusedAct's,
// except that exact Gelu uses geluF32 (float32 arithmetic, within a few
// float32 ulps of the float64 formula) instead of float64 math.Erf.
func fastAct(n *ir.Node) (func(y []float32), bool) {
	if n.AttrString("activation", "") == "Gelu" {
		return geluF32, true
	}
	return fusedAct(n)
}

// geluF32 replaces y by 0.5·y·(1 + erf(y/√2)). erf is Abramowitz and
// Stegun 7.1.26 (absolute error below 1.5e-7) with exp evaluated in float32
// (expF32); beyond |x| = 5.9 it is ±1 in float32 anyway.
func geluF32(y []float32) {
	const (
		p  = 0.3275911
		a1 = 0.254829592
		a2 = -0.284496736
		a3 = 1.421413741
		a4 = -1.453152027
		a5 = 1.061405429
	)
	for i, v := range y {
		x := v * (1 / math.Sqrt2)
		ax := x
		if ax < 0 {
			ax = -ax
		}
		var e float32 = 1
		if ax < 5.9 {
			t := 1 / (1 + p*ax)
			poly := t * (a1 + t*(a2+t*(a3+t*(a4+t*a5))))
			e = 1 - poly*expF32(-ax*ax)
		}
		if x < 0 {
			e = -e
		}
		y[i] = 0.5 * v * (1 + e)
	}
}

// expF32 is e^x for x in [-88, 0] in float32: x = k·ln2 + r with |r| ≤
// ln2/2, e^r by a degree-6 Taylor polynomial (relative error about 2e-7),
// 2^k by building the exponent bits.
func expF32(x float32) float32 {
	if x < -87 {
		return 0
	}
	const (
		ln2hi = 0.693145751953125
		ln2lo = 1.428606765330187045e-06
	)
	k := float32(int32(x*1.4426950408889634 - 0.5))
	r := x - k*ln2hi - k*ln2lo
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return p * math.Float32frombits(uint32(int32(k)+127)<<23)
}
