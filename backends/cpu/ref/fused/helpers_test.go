package fused

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"

	// The unfused kernels the fused ones are checked against (and that
	// FusedMatMul and FusedConv call through the registry).
	_ "github.com/weftrt/weft/backends/cpu/ref/elementwise"
	_ "github.com/weftrt/weft/backends/cpu/ref/layout"
	_ "github.com/weftrt/weft/backends/cpu/ref/nn"
	_ "github.com/weftrt/weft/backends/cpu/ref/reduce"
)

var floatTypes = []ir.DType{ir.Float32, ir.Float64, ir.Float16, ir.BFloat16}

// at builds an attribute list.
func at(opts ...ir.AttrOption) []ir.AttrOption { return opts }

// run calls the registered kernel of op on a one-output node with attrs.
func run(op string, attrs []ir.AttrOption, in ...*ir.Tensor) (*ir.Tensor, error) {
	return runCtx(&ref.Context{}, op, attrs, in...)
}

func runCtx(ctx *ref.Context, op string, attrs []ir.AttrOption, in ...*ir.Tensor) (*ir.Tensor, error) {
	k, ok := ref.Lookup(op)
	if !ok {
		return nil, fmt.Errorf("no kernel for %s", op)
	}
	n := &ir.Node{Name: "n_" + op, Op: op, Attrs: ir.Attrs{}, Outputs: []*ir.Value{{}}}
	for _, a := range attrs {
		a(n.Attrs)
	}
	out, err := k(ctx, n, in)
	if err != nil {
		return nil, err
	}
	if len(out) != 1 {
		return nil, fmt.Errorf("%s returned %d outputs", op, len(out))
	}
	return out[0], out[0].Check()
}

// must is run that fails the test on error.
func must(t *testing.T, op string, attrs []ir.AttrOption, in ...*ir.Tensor) *ir.Tensor {
	t.Helper()
	out, err := run(op, attrs, in...)
	require.NoError(t, err, "%s", op)
	return out
}

// tensor builds a tensor of dtype dt (values rounded to dt).
func tensor(dt ir.DType, shape []int64, vals ...float64) *ir.Tensor {
	return ir.FromFloat64(dt, shape, vals)
}

// scalar64 is a rank-0 f64 tensor.
func scalar64(v float64) *ir.Tensor { return ref.Scalar(ir.Float64, v) }

// random returns a tensor of dt with values uniform in [-r, r], rounded to dt.
func random(rng *rand.Rand, dt ir.DType, shape []int64, r float64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, (2*rng.Float64()-1)*r)
	}
	return t
}

// roundTo rounds an f64 tensor to dt once per element.
func roundTo(dt ir.DType, t *ir.Tensor) *ir.Tensor {
	out := ir.NewTensor(dt, t.Shape)
	for i := 0; i < t.Len(); i++ {
		out.SetFloat64(i, t.Float64(i))
	}
	return out
}

// eps is the unit roundoff of dt.
func eps(dt ir.DType) float64 {
	switch dt {
	case ir.Float32:
		return 0x1p-24
	case ir.Float16:
		return 0x1p-11
	case ir.BFloat16:
		return 0x1p-8
	}
	return 0x1p-53
}

// tiny is the spacing of dt's subnormals (an absolute floor for comparisons).
func tiny(dt ir.DType) float64 {
	switch dt {
	case ir.Float16:
		return 0x1p-24
	case ir.Float64:
		return 1e-300
	}
	return 1e-40
}

// requireNear checks dtype and shape and that every element is within
// ulps units of roundoff of want (relative), or scale·ulps·eps absolutely:
// |got-want| <= ulps·eps(dt)·(|want| + scale) + tiny(dt). NaN matches NaN
// and infinities must match exactly.
func requireNear(t *testing.T, want, got *ir.Tensor, ulps, scale float64, msg string) {
	t.Helper()
	require.Equal(t, want.DType, got.DType, "%s: dtype", msg)
	require.Equal(t, want.Shape, got.Shape, "%s: shape", msg)
	e := eps(want.DType)
	if want.DType == ir.Float64 {
		// Both sides compute in float64, but Go contracts x*y+z into fused
		// multiply-adds on arm64 (not on amd64), so the fused kernel and the
		// op chain may differ by a few ulps there.
		ulps, scale = max(ulps, 16), max(scale, 1)
	}
	for i := 0; i < want.Len(); i++ {
		w, g := want.Float64(i), got.Float64(i)
		switch {
		case math.IsNaN(w):
			require.True(t, math.IsNaN(g), "%s: element %d: got %v, want NaN", msg, i, g)
		case math.IsInf(w, 0):
			require.Equal(t, w, g, "%s: element %d", msg, i)
		default:
			tol := ulps*e*(math.Abs(w)+scale) + tiny(want.DType)
			require.InDelta(t, w, g, tol, "%s: element %d: got %v, want %v", msg, i, g, w)
		}
	}
}

// maxAbs is the largest magnitude in t (0 for an empty tensor).
func maxAbs(t *ir.Tensor) float64 {
	m := 0.0
	for i := 0; i < t.Len(); i++ {
		m = max(m, math.Abs(t.Float64(i)))
	}
	return m
}

// requireUnsupported checks that err wraps ir.ErrUnsupported and mentions each fragment.
func requireUnsupported(t *testing.T, err error, fragments ...string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, errors.Is(err, ir.ErrUnsupported), "want an unsupported error, got %v", err)
	for _, f := range fragments {
		require.Contains(t, err.Error(), f)
	}
}

// requireErr checks that err is a plain (not unsupported) error mentioning each fragment.
func requireErr(t *testing.T, err error, fragments ...string) {
	t.Helper()
	require.Error(t, err)
	require.False(t, errors.Is(err, ir.ErrUnsupported), "want a plain error, got %v", err)
	for _, f := range fragments {
		require.Contains(t, err.Error(), f)
	}
}

// activationCase is an activation name with attributes, and how the chain of
// unfused ops applies it.
type activationCase struct {
	name  string
	attrs []ir.AttrOption
	// apply runs the unfused ops of the activation on x.
	apply func(t *testing.T, x *ir.Tensor) *ir.Tensor
}

func unary(op string, attrs ...ir.AttrOption) func(*testing.T, *ir.Tensor) *ir.Tensor {
	return func(t *testing.T, x *ir.Tensor) *ir.Tensor { return must(t, op, attrs, x) }
}

// activationCases covers every activation FusedMatMul and FusedConv accept.
var activationCases = []activationCase{
	{"", nil, func(_ *testing.T, x *ir.Tensor) *ir.Tensor { return x }},
	{"Relu", nil, unary("Relu")},
	{"LeakyRelu", nil, unary("LeakyRelu")},
	{"LeakyRelu", at(ir.Float(attrAlpha, 0.3)), unary("LeakyRelu", ir.Float("alpha", 0.3))},
	{"Sigmoid", nil, unary("Sigmoid")},
	{"Tanh", nil, unary("Tanh")},
	{"Gelu", nil, unary("Gelu")},
	{"GeluTanh", nil, unary("Gelu", ir.Str("approximate", "tanh"))},
	{"SiLU", nil, func(t *testing.T, x *ir.Tensor) *ir.Tensor { return must(t, "Mul", nil, x, must(t, "Sigmoid", nil, x)) }},
	{"Clip", at(ir.Float(attrAlpha, -0.5), ir.Float(attrBeta, 0.75)), func(t *testing.T, x *ir.Tensor) *ir.Tensor {
		return must(t, "Clip", nil, x, ref.Scalar(x.DType, float64(float32(-0.5))), ref.Scalar(x.DType, 0.75))
	}},
	{"Clip", at(ir.Float(attrBeta, 6)), func(t *testing.T, x *ir.Tensor) *ir.Tensor {
		return must(t, "Clip", nil, x, nil, ref.Scalar(x.DType, 6))
	}},
	{"Clip", at(ir.Float(attrAlpha, 0)), func(t *testing.T, x *ir.Tensor) *ir.Tensor {
		return must(t, "Clip", nil, x, ref.Scalar(x.DType, 0))
	}},
}

// attrsOf returns the fused node's attributes for an activation case.
func (c activationCase) attrsOf(extra ...ir.AttrOption) []ir.AttrOption {
	out := append([]ir.AttrOption{}, extra...)
	if c.name != "" {
		out = append(out, ir.Str(attrActivation, c.name))
	}
	return append(out, c.attrs...)
}

// randDim returns a size in [1, hi], often 1 or an odd size.
func randDim(rng *rand.Rand, hi int) int64 {
	if rng.IntN(4) == 0 {
		return 1
	}
	return int64(1 + rng.IntN(hi))
}
