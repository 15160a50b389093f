package recurrent

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// runOp runs one recurrent node on the given inputs (nil: absent) and
// returns its nOut outputs.
func runOp(t *testing.T, op string, attrs ir.Attrs, nOut int, ins ...*ir.Tensor) ([]*ir.Tensor, error) {
	t.Helper()
	g := ir.NewGraph("g")
	env := backends.NewEnv(nil)
	vals := make([]*ir.Value, len(ins))
	for i, x := range ins {
		if x != nil {
			vals[i] = g.AddInput("", x.DType, ir.ShapeOf(x.Shape))
			env.Set(vals[i], x)
		}
	}
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	n := g.AddNode(op, "", vals, nOut, attrs)
	if err := ref.RunNode(&ref.Context{Env: env}, n); err != nil {
		return nil, err
	}
	out := make([]*ir.Tensor, nOut)
	for i, v := range n.Outputs {
		out[i] = env.Get(v)
	}
	return out, nil
}

func f32(shape []int64, v ...float64) *ir.Tensor { return ir.FromFloat64(ir.Float32, shape, v) }

func str(s string) *ir.Attr      { return &ir.Attr{Kind: ir.AttrString, Str: s} }
func strs(s ...string) *ir.Attr  { return &ir.Attr{Kind: ir.AttrStrings, Strings: s} }
func flt(f float32) *ir.Attr     { return &ir.Attr{Kind: ir.AttrFloat, Float: f} }
func flts(f ...float32) *ir.Attr { return &ir.Attr{Kind: ir.AttrFloats, Floats: f} }
func intAttr(v int64) *ir.Attr   { return &ir.Attr{Kind: ir.AttrInt, Int: v} }
func shape(d ...int64) []int64   { return d }
func i32(v ...int64) *ir.Tensor  { return ir.FromFloat64(ir.Int32, []int64{int64(len(v))}, toF(v)) }
func toF(v []int64) (out []float64) {
	for _, x := range v {
		out = append(out, float64(x))
	}
	return out
}

// near checks t's shape and values against want within a float32 tolerance.
func near(t *testing.T, want []float64, wantShape []int64, got *ir.Tensor) {
	t.Helper()
	require.Equal(t, wantShape, got.Shape)
	require.Equal(t, len(want), got.Len())
	for i, w := range want {
		require.InDelta(t, w, got.Float64(i), 1e-6*(1+math.Abs(w)), "element %d", i)
	}
}

func TestActivations(t *testing.T) {
	tests := []struct {
		act  activation
		x    float64
		want float64
	}{
		{activation{name: "relu"}, -2, 0},
		{activation{name: "relu"}, 3, 3},
		{activation{name: "tanh"}, 0.5, 0.46211715726000974},
		{activation{name: "sigmoid"}, 0, 0.5},
		{activation{name: "sigmoid"}, 2, 0.8807970779778823},
		{activation{name: "affine", alpha: 2, beta: 1}, 3, 7},
		{activation{name: "leakyrelu", alpha: 0.1}, -2, -0.2},
		{activation{name: "leakyrelu", alpha: 0.1}, 2, 2},
		{activation{name: "thresholdedrelu", alpha: 1}, 0.5, 0},
		{activation{name: "thresholdedrelu", alpha: 1}, 1.5, 1.5},
		{activation{name: "scaledtanh", alpha: 2, beta: 0.5}, 1, 2 * 0.46211715726000974},
		{activation{name: "hardsigmoid", alpha: 0.2, beta: 0.5}, 1, 0.7},
		{activation{name: "hardsigmoid", alpha: 0.2, beta: 0.5}, 5, 1},
		{activation{name: "hardsigmoid", alpha: 0.2, beta: 0.5}, -5, 0},
		{activation{name: "elu", alpha: 2}, -1, 2 * (0.36787944117144233 - 1)},
		{activation{name: "elu", alpha: 2}, 1, 1},
		{activation{name: "softsign"}, -3, -0.75},
		{activation{name: "softplus"}, 0, 0.6931471805599453},
		{activation{name: "softplus"}, 1000, 1000},
		{activation{name: "softplus"}, -1000, 0},
	}
	for _, tc := range tests {
		require.InDelta(t, tc.want, tc.act.apply(tc.x), 1e-12, "%s(%v)", tc.act.name, tc.x)
	}
}

func TestParseActivations(t *testing.T) {
	n := &ir.Node{Attrs: ir.Attrs{
		"activations":      strs("LeakyRelu", "Tanh", "HardSigmoid", "Elu"),
		"activation_alpha": flts(0.5, 0.25),
		"activation_beta":  flts(0.75),
	}}
	acts, err := parseActivations(n, []string{"Sigmoid", "Tanh"}, 2)
	require.NoError(t, err)
	require.Equal(t, [][]activation{
		{{"leakyrelu", 0.5, 0}, {"tanh", 0, 0}},
		{{"hardsigmoid", 0.25, 0.75}, {"elu", 1, 0}}, // Elu gets no alpha left: default
	}, acts)

	acts, err = parseActivations(&ir.Node{}, []string{"Sigmoid", "Tanh", "Tanh"}, 2)
	require.NoError(t, err)
	require.Equal(t, "sigmoid", acts[1][0].name)

	_, err = parseActivations(&ir.Node{Attrs: ir.Attrs{"activations": strs("Gelu")}}, []string{"Tanh"}, 1)
	require.True(t, errors.Is(err, ir.ErrUnsupported))
	_, err = parseActivations(&ir.Node{Attrs: ir.Attrs{"activations": strs("Tanh", "Tanh", "Tanh")}}, []string{"Tanh"}, 2)
	require.Error(t, err)
}

// TestRNNByHand: hidden size 1, identity activation, W = 1, R = 0.5:
// h1 = 1, h2 = 2 + 0.5*1 = 2.5, for every float dtype.
func TestRNNByHand(t *testing.T) {
	for _, dt := range []ir.DType{ir.Float32, ir.Float64, ir.Float16, ir.BFloat16} {
		x := ir.FromFloat64(dt, shape(2, 1, 1), []float64{1, 2})
		w := ir.FromFloat64(dt, shape(1, 1, 1), []float64{1})
		r := ir.FromFloat64(dt, shape(1, 1, 1), []float64{0.5})
		out, err := runOp(t, "RNN", ir.Attrs{"activations": strs("Affine")}, 2, x, w, r)
		require.NoError(t, err, "%v", dt)
		require.Equal(t, dt, out[0].DType)
		near(t, []float64{1, 2.5}, shape(2, 1, 1, 1), out[0])
		near(t, []float64{2.5}, shape(1, 1, 1), out[1])
	}
}
