package passes

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// lnSpec describes a decomposed LayerNorm as exporters write it.
type lnSpec struct {
	axes       []int64
	square     string // "pow" or "mul"
	inv        string // "div", "recip" or "div1" (Mul by Div(1, ·))
	eps        float32
	gamma      *ir.Tensor // nil: no Mul
	beta       *ir.Tensor // nil: no Add
	swap       bool       // operands of Add(eps), Mul(·, inv), Mul(γ), Add(β) swapped
	exponent   float32    // Pow exponent (0: 2)
	meanAxes   []int64    // axes of the first ReduceMean (nil: axes)
	extraUse   bool       // the variance is also a graph output
	noSubtract bool       // RMSNorm: no mean subtracted
}

func bin(b *ir.Builder, op string, swap bool, x, y *ir.Value) *ir.Value {
	if swap {
		return b.Op(op, y, x)
	}
	return b.Op(op, x, y)
}

func buildNorm(b *ir.Builder, x *ir.Value, s lnSpec) *ir.Value {
	d := x
	if !s.noSubtract {
		ma := s.meanAxes
		if ma == nil {
			ma = s.axes
		}
		d = b.Op("Sub", x, b.Op("ReduceMean", x, i64(b, ma...)))
	}
	var sq *ir.Value
	if s.square == "mul" {
		sq = b.Op("Mul", d, d)
	} else {
		e := s.exponent
		if e == 0 {
			e = 2
		}
		sq = b.Op("Pow", d, f32s(b, e))
	}
	v := b.Op("ReduceMean", sq, i64(b, s.axes...))
	if s.extraUse {
		b.Output("variance", v)
	}
	std := b.Op("Sqrt", bin(b, "Add", s.swap, v, f32s(b, s.eps)))
	var y *ir.Value
	switch s.inv {
	case "recip":
		y = bin(b, "Mul", s.swap, d, b.Op("Reciprocal", std))
	case "div1":
		y = bin(b, "Mul", s.swap, d, b.Op("Div", f32s(b, 1), std))
	default:
		y = b.Op("Div", d, std)
	}
	if s.gamma != nil {
		y = bin(b, "Mul", s.swap, y, b.Const("gamma", s.gamma))
	}
	if s.beta != nil {
		y = bin(b, "Add", s.swap, y, b.Const("beta", s.beta))
	}
	return y
}

// ramp returns an f32 tensor of the shape with values start, start+step, ...
func ramp(shape []int64, start, step float32) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, float64(start+step*float32(i)))
	}
	return t
}

func normCase(name string, s lnSpec, want ...string) rewriteCase {
	return rewriteCase{name: name, want: want, build: func(b *ir.Builder) {
		b.Output("y", buildNorm(b, b.Input("x", ir.Float32, sh(2, 3, 8)), s))
	}}
}

func TestPatternsLayerNorm(t *testing.T) {
	g8, b8 := ramp([]int64{8}, 0.5, 0.25), ramp([]int64{8}, -1, 0.3)
	ln := []string{"LayerNormalization"}
	runRewriteCases(t, patternsPass, []rewriteCase{
		normCase("torch form", lnSpec{axes: []int64{-1}, eps: 1e-5, gamma: g8, beta: b8}, ln...),
		normCase("Mul(d,d), reciprocal, swapped", lnSpec{axes: []int64{2}, square: "mul", inv: "recip", eps: 1e-6, gamma: g8, beta: b8, swap: true}, ln...),
		normCase("Div(1, std)", lnSpec{axes: []int64{-1}, inv: "div1", eps: 1e-5, gamma: g8, beta: b8}, ln...),
		normCase("no affine", lnSpec{axes: []int64{-1}, eps: 1e-5}, ln...),
		normCase("gamma only", lnSpec{axes: []int64{-1}, eps: 1e-5, gamma: g8}, ln...),
		normCase("gamma [1,1,8]", lnSpec{axes: []int64{-1}, eps: 1e-5, gamma: ramp([]int64{1, 1, 8}, 1, 0.1), beta: b8}, ln...),
		normCase("two axes", lnSpec{axes: []int64{-2, -1}, eps: 1e-5, gamma: ramp([]int64{3, 8}, 1, 0.1), beta: ramp([]int64{3, 8}, 0, 0.1)}, ln...),
		// gamma that broadcasts over the normalized axes stays a Mul.
		normCase("gamma [8] over two axes", lnSpec{axes: []int64{-2, -1}, eps: 1e-5, gamma: g8}, "LayerNormalization", "Mul"),
		normCase("gamma [3,1] stays", lnSpec{axes: []int64{-1}, eps: 1e-5, gamma: ramp([]int64{3, 1}, 1, 0.5)}, "LayerNormalization", "Mul"),
		// negative: wrong axis, wrong exponent, different axes, multi-use.
		normCase("not the last axis", lnSpec{axes: []int64{1}, eps: 1e-5, gamma: g8, beta: b8}),
		normCase("cube", lnSpec{axes: []int64{-1}, exponent: 3, eps: 1e-5}),
		normCase("mean over another axis", lnSpec{axes: []int64{-1}, meanAxes: []int64{1}, eps: 1e-5}, "ReduceMean", "Sub", "RMSNormalization"),
		normCase("variance read elsewhere", lnSpec{axes: []int64{-1}, eps: 1e-5, gamma: g8, extraUse: true}),
	})
}

func TestPatternsRMSNorm(t *testing.T) {
	g8 := ramp([]int64{8}, 0.5, 0.25)
	rms := []string{"RMSNormalization"}
	runRewriteCases(t, patternsPass, []rewriteCase{
		normCase("llama form", lnSpec{noSubtract: true, axes: []int64{-1}, inv: "recip", eps: 1e-6, gamma: g8}, rms...),
		normCase("Div form, Mul(x,x)", lnSpec{noSubtract: true, axes: []int64{-1}, square: "mul", eps: 1e-6, gamma: g8, swap: true}, rms...),
		normCase("Div(1, ·), no gamma", lnSpec{noSubtract: true, axes: []int64{-1}, inv: "div1", eps: 1e-5}, rms...),
		normCase("gamma then beta", lnSpec{noSubtract: true, axes: []int64{-1}, eps: 1e-5, gamma: g8, beta: g8}, "RMSNormalization", "Add"),
		normCase("first axis", lnSpec{noSubtract: true, axes: []int64{0}, inv: "recip", eps: 1e-6, gamma: g8}),
		normCase("variance read elsewhere", lnSpec{noSubtract: true, axes: []int64{-1}, eps: 1e-5, extraUse: true}),
	})
}

// The LayerNorm node: attributes, parameters, output value and name kept.
func TestPatternsLayerNormNode(t *testing.T) {
	g := typedGraph(t, func(b *ir.Builder) {
		y := buildNorm(b, b.Input("x", ir.Float32, sh("n", 3, 8)), lnSpec{axes: []int64{-1}, eps: 1e-3, gamma: ramp([]int64{1, 8}, 1, 0), beta: ramp([]int64{8}, 0, 1)})
		y.Producer.Name = "ln/add"
		b.Output("y", y)
	})
	y := g.Outputs[0]
	ch := runPass(t, g, patternsPass)
	require.Equal(t, Change{Fused: 8, Consts: -1, BytesSaved: -32}, ch) // 9 nodes -> 1; γ reshaped to [8]
	require.Equal(t, []string{"LayerNormalization"}, ops(g))
	n := g.Nodes[0]
	require.Same(t, y, n.Outputs[0])
	require.Same(t, n, y.Producer)
	require.Equal(t, "ln/add", n.Name)
	require.Equal(t, int64(-1), n.AttrInt("axis", 0))
	require.InDelta(t, 1e-3, n.AttrFloat("epsilon", 0), 1e-9)
	require.Equal(t, "f32[8]", typeOf(n.Inputs[1]))
	require.Equal(t, "beta", n.Inputs[2].Name)
	require.Equal(t, "f32[n,3,8]", typeOf(y))
}

// geluSpec builds GELU in one of its export orders.
func buildGelu(b *ir.Builder, x *ir.Value, form string, c float32) *ir.Value {
	half, one := f32s(b, 0.5), f32s(b, 1)
	switch form {
	case "torch": // Mul(Mul(x, Add(Erf(Div(x, √2)), 1)), 0.5)
		e := b.Op("Add", b.Op("Erf", b.Op("Div", x, f32s(b, c))), one)
		return b.Op("Mul", b.Op("Mul", x, e), half)
	case "half first": // Mul(Mul(x, 0.5), Add(1, Erf(Mul(x, 1/√2))))
		e := b.Op("Add", one, b.Op("Erf", b.Op("Mul", x, f32s(b, c))))
		return b.Op("Mul", b.Op("Mul", x, half), e)
	case "half outside": // Mul(0.5, Mul(Add(...), x))
		e := b.Op("Add", b.Op("Erf", b.Op("Mul", f32s(b, c), x)), one)
		return b.Op("Mul", half, b.Op("Mul", e, x))
	case "tanh": // 0.5·x·(1+tanh(√(2/π)·(x+0.044715·x³)))
		cube := b.Op("Mul", f32s(b, 0.044715), b.Op("Pow", x, f32s(b, 3)))
		th := b.Op("Tanh", b.Op("Mul", b.Op("Add", x, cube), f32s(b, c)))
		return b.Op("Mul", b.Op("Mul", half, x), b.Op("Add", one, th))
	case "tanh x·x·x":
		cube := b.Op("Mul", b.Op("Mul", b.Op("Mul", x, x), x), f32s(b, 0.044715))
		th := b.Op("Tanh", b.Op("Mul", f32s(b, c), b.Op("Add", cube, x)))
		return b.Op("Mul", b.Op("Mul", x, b.Op("Add", th, one)), half)
	}
	panic(form)
}

func geluCase(name, form string, c float32, want ...string) rewriteCase {
	return rewriteCase{name: name, want: want, build: func(b *ir.Builder) {
		b.Output("y", buildGelu(b, b.Input("x", ir.Float32, sh(3, 7)), form, c))
	}}
}

func TestPatternsGelu(t *testing.T) {
	sqrt2, isqrt2, k := float32(math.Sqrt2), float32(1/math.Sqrt2), float32(math.Sqrt(2/math.Pi))
	gelu := []string{"Gelu"}
	runRewriteCases(t, patternsPass, []rewriteCase{
		geluCase("torch", "torch", 1.4142135, gelu...),
		geluCase("half first", "half first", isqrt2, gelu...),
		geluCase("half outside", "half outside", 0.70710678, gelu...),
		geluCase("tanh", "tanh", k, gelu...),
		geluCase("tanh x·x·x", "tanh x·x·x", 0.7978846, gelu...),
		geluCase("wrong √2", "torch", 1.5),
		geluCase("wrong √(2/π)", "tanh", 0.9),
		geluCase("exact √2", "torch", sqrt2, gelu...),
		{name: "erf read elsewhere", build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3, 7))
			erf := b.Op("Erf", b.Op("Div", x, f32s(b, 1.4142135)))
			b.Output("y", b.Op("Mul", b.Op("Mul", x, b.Op("Add", erf, f32s(b, 1))), f32s(b, 0.5)))
			b.Output("erf", erf)
		}},
		{name: "coefficient 0.6", build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3, 7))
			e := b.Op("Add", b.Op("Erf", b.Op("Div", x, f32s(b, 1.4142135))), f32s(b, 1))
			b.Output("y", b.Op("Mul", b.Op("Mul", x, e), f32s(b, 0.6)))
		}},
		{name: "erf of another value", build: func(b *ir.Builder) {
			x, z := b.Input("x", ir.Float32, sh(3, 7)), b.Input("z", ir.Float32, sh(3, 7))
			e := b.Op("Add", b.Op("Erf", b.Op("Div", z, f32s(b, 1.4142135))), f32s(b, 1))
			b.Output("y", b.Op("Mul", b.Op("Mul", x, e), f32s(b, 0.5)))
		}},
	})
	g := typedGraph(t, func(b *ir.Builder) { b.Output("y", buildGelu(b, b.Input("x", ir.Float32, sh(2)), "tanh", k)) })
	runPass(t, g, patternsPass)
	require.Equal(t, "tanh", g.Nodes[0].AttrString("approximate", ""))
	g = typedGraph(t, func(b *ir.Builder) { b.Output("y", buildGelu(b, b.Input("x", ir.Float32, sh(2)), "torch", sqrt2)) })
	require.Equal(t, Change{Fused: 4}, runPass(t, g, patternsPass)) // 5 nodes -> 1
	require.Equal(t, "none", g.Nodes[0].AttrString("approximate", ""))
}

func TestPatternsSiLU(t *testing.T) {
	x := func(b *ir.Builder) *ir.Value { return b.Input("x", ir.Float32, sh(4, 6)) }
	runRewriteCases(t, patternsPass, []rewriteCase{
		{name: "x·sigmoid(x)", want: []string{"SiLU"}, build: func(b *ir.Builder) {
			v := x(b)
			b.Output("y", b.Op("Mul", v, b.Op("Sigmoid", v)))
		}},
		{name: "sigmoid(x)·x", want: []string{"SiLU"}, build: func(b *ir.Builder) {
			v := x(b)
			b.Output("y", b.Op("Mul", b.Op("Sigmoid", v), v))
		}},
		{name: "SwiGLU keeps its Mul", want: []string{"SiLU", "Mul"}, build: func(b *ir.Builder) {
			gate, up := x(b), b.Input("up", ir.Float32, sh(4, 6))
			b.Output("y", b.Op("Mul", b.Op("Mul", gate, b.Op("Sigmoid", gate)), up))
		}},
		{name: "sigmoid of another value", build: func(b *ir.Builder) {
			v, w := x(b), b.Input("w", ir.Float32, sh(4, 6))
			b.Output("y", b.Op("Mul", v, b.Op("Sigmoid", w)))
		}},
		{name: "sigmoid read elsewhere", build: func(b *ir.Builder) {
			v := x(b)
			s := b.Op("Sigmoid", v)
			b.Output("y", b.Op("Mul", v, s))
			b.Output("s", s)
		}},
		{name: "broadcast grows x", build: func(b *ir.Builder) {
			v := b.Input("x", ir.Float32, sh(6))
			b.Output("y", b.Op("Mul", v, b.Op("Sigmoid", b.Op("Expand", v, i64(b, 4, 6)))))
		}},
	})
}

// Patterns inside an If branch are rewritten there; a pattern split across
// the branch boundary is not.
func TestPatternsInSubgraph(t *testing.T) {
	g := typedGraph(t, func(b *ir.Builder) {
		x := b.Input("x", ir.Float32, sh(2, 3))
		outer := b.Op("Sigmoid", x)
		then, els := sub(b, "then"), sub(b, "else")
		then.Output("t", then.Op("Mul", x, then.Op("Sigmoid", x)))
		els.Output("e", els.Op("Mul", x, outer)) // Sigmoid outside the branch
		b.Output("y", b.OpA("If", at(ir.GraphAttr("then_branch", then.G), ir.GraphAttr("else_branch", els.G)), b.Input("c", ir.Bool, sh())))
	})
	require.Equal(t, Change{Fused: 1}, runPass(t, g, patternsPass))
	require.NoError(t, ir.VerifyTyped(g))
	require.Equal(t, []string{"Sigmoid", "If"}, ops(g))
	require.Equal(t, []string{"SiLU"}, ops(g.Nodes[1].AttrGraph("then_branch")))
	require.Equal(t, []string{"Mul"}, ops(g.Nodes[1].AttrGraph("else_branch")))
}

// Symbolic dims and f16: the patterns need equal dims, not known ones, and
// make their constants in x's dtype.
func TestPatternsSymbolicF16(t *testing.T) {
	g := typedGraph(t, func(b *ir.Builder) {
		x := b.Input("x", ir.Float16, sh("n", "seq", 8))
		m := b.Op("ReduceMean", x, i64(b, -1))
		d := b.Op("Sub", x, m)
		v := b.Op("ReduceMean", b.Op("Mul", d, d), i64(b, -1))
		eps := b.Const("eps", ir.FromFloat64(ir.Float16, nil, []float64{1e-5}))
		b.Output("y", b.Op("Div", d, b.Op("Sqrt", b.Op("Add", v, eps))))
	})
	runPass(t, g, patternsPass)
	require.Equal(t, []string{"LayerNormalization"}, ops(g))
	require.Equal(t, "f16[8]", typeOf(g.Nodes[0].Inputs[1]))
	require.Len(t, g.Nodes[0].Inputs, 2, "no B: zero bias is absent")

	g = typedGraph(t, func(b *ir.Builder) {
		q := b.Input("q", ir.Float32, sh("b", 2, "s", 8))
		k := b.Input("k", ir.Float32, sh("b", 2, "t", 8))
		v := b.Input("v", ir.Float32, sh("b", 2, "t", 8))
		kt := b.OpA("Transpose", at(ir.Ints("perm", 0, 1, 3, 2)), k)
		s := b.Op("Mul", b.Op("MatMul", q, kt), f32s(b, 0.25))
		b.Output("y", b.Op("MatMul", b.OpA("Softmax", at(ir.Int("axis", 3)), s), v))
	})
	runPass(t, g, patternsPass)
	require.Equal(t, []string{"Attention"}, ops(g))
	require.Equal(t, float32(0.25), g.Nodes[0].AttrFloat("scale", 0))
	require.Equal(t, "f32[b,2,s,8]", typeOf(g.Outputs[0]))
}
