package recurrent

import (
	"fmt"
	"math"
	"strings"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// activation is one entry of a recurrent op's activations list with its
// alpha and beta resolved.
type activation struct {
	name        string // lower case
	alpha, beta float64
}

// actInfo says how many of alpha and beta an activation takes and their
// defaults, which are those of the ONNX operator of the same name (Affine
// and ScaledTanh, whose operators are gone, default to the identity-like
// alpha=1, beta=0 and alpha=beta=1).
var actInfo = map[string]struct {
	usesAlpha, usesBeta bool
	alpha, beta         float64
}{
	"relu":            {},
	"tanh":            {},
	"sigmoid":         {},
	"softsign":        {},
	"softplus":        {},
	"affine":          {true, true, 1, 0},
	"leakyrelu":       {true, false, 0.01, 0},
	"thresholdedrelu": {true, false, 1, 0},
	"scaledtanh":      {true, true, 1, 1},
	"hardsigmoid":     {true, true, 0.2, 0.5},
	"elu":             {true, false, 1, 0},
}

// apply evaluates the activation at x.
func (a activation) apply(x float64) float64 {
	switch a.name {
	case "relu":
		return math.Max(0, x)
	case "tanh":
		return math.Tanh(x)
	case "sigmoid":
		return 1 / (1 + math.Exp(-x))
	case "affine":
		return a.alpha*x + a.beta
	case "leakyrelu":
		if x >= 0 {
			return x
		}
		return a.alpha * x
	case "thresholdedrelu":
		if x >= a.alpha {
			return x
		}
		return 0
	case "scaledtanh":
		return a.alpha * math.Tanh(a.beta*x)
	case "hardsigmoid":
		return math.Min(math.Max(a.alpha*x+a.beta, 0), 1)
	case "elu":
		if x >= 0 {
			return x
		}
		return a.alpha * (math.Exp(x) - 1)
	case "softsign":
		return x / (1 + math.Abs(x))
	case "softplus":
		if x > 0 { // log(1+e^x) = x + log(1+e^-x), without overflow
			return x + math.Log1p(math.Exp(-x))
		}
		return math.Log1p(math.Exp(x))
	}
	panic("recurrent: unknown activation " + a.name) // parseActivations rejects these
}

// parseActivations returns perDir activations for each of numDir
// directions. The attribute lists either perDir names (shared by both
// directions) or perDir*numDir (forward first); absent, it is defaults.
// activation_alpha and activation_beta are consumed in list order, each
// value going to the next activation that takes one; activations left
// without a value use their operator's default.
func parseActivations(n *ir.Node, defaults []string, numDir int) ([][]activation, error) {
	perDir := len(defaults)
	names := n.AttrStrings("activations", nil)
	if names == nil {
		for d := 0; d < numDir; d++ {
			names = append(names, defaults...)
		}
	}
	alphas := n.AttrFloats("activation_alpha", nil)
	betas := n.AttrFloats("activation_beta", nil)
	var list []activation
	for _, name := range names {
		key := strings.ToLower(name)
		info, ok := actInfo[key]
		if !ok {
			return nil, ref.Unsupported("activation %q", name)
		}
		a := activation{name: key, alpha: info.alpha, beta: info.beta}
		if info.usesAlpha && len(alphas) > 0 {
			a.alpha, alphas = float64(alphas[0]), alphas[1:]
		}
		if info.usesBeta && len(betas) > 0 {
			a.beta, betas = float64(betas[0]), betas[1:]
		}
		list = append(list, a)
	}
	switch len(list) {
	case perDir * numDir:
	case perDir:
		for d := 1; d < numDir; d++ {
			list = append(list, list[:perDir]...)
		}
	default:
		return nil, fmt.Errorf("activations lists %d functions, want %d per direction", len(list), perDir)
	}
	out := make([][]activation, numDir)
	for d := range out {
		out[d] = list[d*perDir : (d+1)*perDir]
	}
	return out, nil
}
