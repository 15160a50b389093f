package fused

import (
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// The activation attributes of FusedMatMul and FusedConv.
const (
	attrActivation = "activation"
	attrAlpha      = "activation_alpha"
	attrBeta       = "activation_beta"
)

// activation returns the scalar function named by n's activation attribute
// ("" is the identity). Each one is the float64 formula of the standalone
// reference kernel it stands for (Relu, LeakyRelu, Sigmoid, Tanh, Gelu with
// approximate "none" or "tanh", SiLU, Clip), so that fused and unfused
// graphs agree. Float attributes are float32, widened exactly.
func activation(n *ir.Node) (func(float64) float64, error) {
	switch name := n.AttrString(attrActivation, ""); name {
	case "":
		return nil, nil
	case "Relu":
		return func(x float64) float64 {
			if x < 0 {
				return 0
			}
			return x
		}, nil
	case "LeakyRelu":
		alpha := float64(n.AttrFloat(attrAlpha, 0.01))
		return func(x float64) float64 {
			if x < 0 {
				return alpha * x
			}
			return x
		}, nil
	case "Sigmoid":
		return sigmoid, nil
	case "Tanh":
		return math.Tanh, nil
	case "Gelu":
		return func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }, nil
	case "GeluTanh":
		c := math.Sqrt(2 / math.Pi)
		return func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(c*(x+0.044715*x*x*x))) }, nil
	case "SiLU":
		return silu, nil
	case "Clip":
		// Absent bounds are unbounded, as Clip's absent inputs are.
		lo, hi := math.Inf(-1), math.Inf(1)
		if n.Has(attrAlpha) {
			lo = float64(n.AttrFloat(attrAlpha, 0))
		}
		if n.Has(attrBeta) {
			hi = float64(n.AttrFloat(attrBeta, 0))
		}
		// Raise to lo, then lower to hi (hi wins when lo > hi); NaN stays NaN.
		return func(x float64) float64 {
			if x < lo {
				x = lo
			}
			if x > hi {
				x = hi
			}
			return x
		}, nil
	default:
		return nil, ref.Unsupported("%s activation %q", n.Op, name)
	}
}

// sigmoid is 1/(1+e^-x), evaluated without overflowing e^-x (the formula of
// the Sigmoid reference kernel).
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// silu is x·sigmoid(x).
func silu(x float64) float64 { return x * sigmoid(x) }

// applyAct applies f (nil: identity) to every element of y in place.
func applyAct(f func(float64) float64, y []float64) {
	if f == nil {
		return
	}
	for i, v := range y {
		y[i] = f(v)
	}
}
