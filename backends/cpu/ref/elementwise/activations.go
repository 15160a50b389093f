package elementwise

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// ONNX's Selu defaults, as the float32 values ONNX stores.
const (
	seluAlpha = 1.67326319217681884765625
	seluGamma = 1.05070102214050292968750
)

// floatActivations lists the activations with float attributes, as
// functions of the node (for its attributes) returning the scalar map.
var floatActivations = map[string]func(n *ir.Node) func(float64) float64{
	"Elu": func(n *ir.Node) func(float64) float64 {
		alpha := attr(n, "alpha", 1)
		return func(x float64) float64 {
			if x < 0 {
				return alpha * math.Expm1(x)
			}
			return x
		}
	},
	"Selu": func(n *ir.Node) func(float64) float64 {
		alpha, gamma := attr(n, "alpha", seluAlpha), attr(n, "gamma", seluGamma)
		return func(x float64) float64 {
			if x > 0 {
				return gamma * x
			}
			return gamma * alpha * math.Expm1(x)
		}
	},
	"Celu": func(n *ir.Node) func(float64) float64 {
		alpha := attr(n, "alpha", 1)
		return func(x float64) float64 {
			return max(0, x) + min(0, alpha*math.Expm1(x/alpha))
		}
	},
	"LeakyRelu": func(n *ir.Node) func(float64) float64 {
		alpha := attr(n, "alpha", 0.01)
		return func(x float64) float64 {
			if x < 0 {
				return alpha * x
			}
			return x
		}
	},
	"HardSigmoid": func(n *ir.Node) func(float64) float64 {
		alpha, beta := attr(n, "alpha", 0.2), attr(n, "beta", 0.5)
		return func(x float64) float64 { return max(0, min(1, alpha*x+beta)) }
	},
	"HardSwish": func(*ir.Node) func(float64) float64 {
		return func(x float64) float64 { return x * max(0, min(1, x/6+0.5)) }
	},
	"ThresholdedRelu": func(n *ir.Node) func(float64) float64 {
		alpha := attr(n, "alpha", 1)
		return func(x float64) float64 {
			if x > alpha {
				return x
			}
			return 0
		}
	},
}

func init() {
	for op, mk := range floatActivations {
		registerUnary(op, 1, func(n *ir.Node, _ []*ir.Tensor) (unary, error) {
			return unary{types: floats, f: mk(n)}, nil
		})
	}
	registerUnary("Gelu", 1, makeGelu)
	registerUnary("Shrink", 1, makeShrink)
	registerUnary("Clip", 3, makeClip)
}

// attr reads a float attribute with its ONNX default. Both are float32
// values (as ONNX stores them), widened exactly to float64.
func attr(n *ir.Node, name string, def float32) float64 {
	return float64(n.AttrFloat(name, def))
}

// makeGelu: x·Φ(x) exactly (approximate="none") or with the tanh formula.
func makeGelu(n *ir.Node, _ []*ir.Tensor) (unary, error) {
	switch a := n.AttrString("approximate", "none"); a {
	case "none":
		return unary{types: floats, f: func(x float64) float64 {
			return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
		}}, nil
	case "tanh":
		c := math.Sqrt(2 / math.Pi)
		return unary{types: floats, f: func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(c*(x+0.044715*x*x*x)))
		}}, nil
	default:
		return unary{}, ref.Unsupported("Gelu approximate=%q", a)
	}
}

// makeShrink: x+bias below -lambd, x-bias above lambd, 0 between. Integer
// inputs are computed in float64 and truncated back.
func makeShrink(n *ir.Node, _ []*ir.Tensor) (unary, error) {
	bias, lambd := attr(n, "bias", 0), attr(n, "lambd", 0.5)
	f := func(x float64) float64 {
		switch {
		case x < -lambd:
			return x + bias
		case x > lambd:
			return x - bias
		}
		return 0
	}
	return unary{
		types: numeric,
		f:     f,
		i:     func(x int64) int64 { return floatToIntBits(f(float64(x)), ir.Int64) },
		u:     func(x uint64) uint64 { return uint64(floatToIntBits(f(float64(x)), ir.Uint64)) },
	}, nil
}

// makeClip: min(max(x, lo), hi) with the optional scalar bounds in[1] and
// in[2] (absent: unbounded). With lo > hi every element becomes hi, as
// ONNX specifies. NaN elements stay NaN.
func makeClip(_ *ir.Node, in []*ir.Tensor) (unary, error) {
	x := in[0]
	var lo, hi *ir.Tensor
	for k, b := range []**ir.Tensor{&lo, &hi} {
		if k+1 >= len(in) || in[k+1] == nil {
			continue
		}
		t := in[k+1]
		if t.DType != x.DType {
			return unary{}, fmt.Errorf("Clip bound (input %d) is %v, input 0 is %v", k+1, t.DType, x.DType)
		}
		if t.Len() != 1 {
			return unary{}, fmt.Errorf("Clip bound (input %d) has shape %v, want a scalar", k+1, t.Shape)
		}
		*b = t
	}
	u := unary{types: numeric}
	fLo, fHi := math.Inf(-1), math.Inf(1)
	iLo, iHi := int64(math.MinInt64), int64(math.MaxInt64)
	uLo, uHi := uint64(0), uint64(math.MaxUint64)
	if lo != nil {
		fLo, iLo, uLo = lo.Float64(0), lo.Int64(0), lo.Uint64(0)
	}
	if hi != nil {
		fHi, iHi, uHi = hi.Float64(0), hi.Int64(0), hi.Uint64(0)
	}
	u.f = func(x float64) float64 { return clamp(x, fLo, fHi) }
	u.i = func(x int64) int64 { return clamp(x, iLo, iHi) }
	u.u = func(x uint64) uint64 { return clamp(x, uLo, uHi) }
	return u, nil
}

// clamp raises x to lo, then lowers it to hi (so hi wins when lo > hi).
// Comparisons with NaN are false, so a NaN x is returned unchanged.
func clamp[T int64 | uint64 | float64](x, lo, hi T) T {
	if x < lo {
		x = lo
	}
	if x > hi {
		x = hi
	}
	return x
}
