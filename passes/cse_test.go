package passes

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func TestCSE(t *testing.T) {
	runPassCases(t, csePass, []passCase{{
		name: "same op, inputs and attributes",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3))
			a := b.OpA("Softmax", at(ir.Int("axis", 1)), x)
			c := b.OpA("Softmax", at(ir.Int("axis", 1)), x)
			b.Output("y", b.Op("Add", a, c))
		},
		want: []string{"Softmax", "Add"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			require.Same(t, g.Nodes[1].In(0), g.Nodes[1].In(1))
			require.Equal(t, 1, ch.Removed)
			require.Equal(t, 1, ch.Rewired)
		},
	}, {
		name: "chains merge in one pass",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(4))
			a := b.Op("Exp", b.Op("Neg", x))
			c := b.Op("Exp", b.Op("Neg", x))
			b.Output("y", b.Op("Mul", a, c))
		},
		want: []string{"Neg", "Exp", "Mul"},
	}, {
		name: "different attributes, inputs or input order stay",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3))
			z := b.Input("z", ir.Float32, sh(2, 3))
			a := b.OpA("Softmax", at(ir.Int("axis", 1)), x)
			c := b.OpA("Softmax", at(ir.Int("axis", 0)), x)
			d := b.Op("Sub", x, z)
			e := b.Op("Sub", z, x)
			f := b.OpA("LeakyRelu", at(ir.Float("alpha", 0.1)), x)
			h := b.OpA("LeakyRelu", at(ir.Float("alpha", 0.2)), x)
			b.Output("y", b.Op("Sum", a, c, d, e, f, h))
		},
		want: []string{"Softmax", "Softmax", "Sub", "Sub", "LeakyRelu", "LeakyRelu", "Sum"},
	}, {
		name: "equal small constants merge, so their readers do",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3))
			a := b.Op("Mul", x, f32(b, 1, 2, 3))
			c := b.Op("Mul", x, f32(b, 1, 2, 3))
			d := b.Op("Mul", x, f32(b, 1, 2, 4))                                                                                        // other bytes
			e := b.Op("Mul", b.Input("xd", ir.Float64, sh(3)), b.Const("", ir.FromFloat64(ir.Float64, []int64{3}, []float64{1, 2, 3}))) // other dtype
			b.Output("y", b.Op("Sum", a, c, d))
			b.Output("z", e)
		},
		want: []string{"Mul", "Mul", "Mul", "Sum"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			require.Len(t, g.Consts, 3)
			require.Equal(t, 1, ch.Consts)
		},
	}, {
		name: "tensor attributes compare by content",
		build: func(b *ir.Builder) {
			shp := i64(b, 2, 3)
			v1 := ir.FromFloat32([]int64{1}, []float32{7})
			v2 := ir.FromFloat32([]int64{1}, []float32{7})
			v3 := ir.FromFloat32([]int64{1}, []float32{8})
			x := b.Input("x", ir.Float32, sh(2, 3))
			a := b.OpA("ConstantOfShape", at(ir.TensorAttr("value", v1)), shp)
			c := b.OpA("ConstantOfShape", at(ir.TensorAttr("value", v2)), shp)
			d := b.OpA("ConstantOfShape", at(ir.TensorAttr("value", v3)), shp)
			b.Output("y", b.Op("Sum", x, a, c, d))
		},
		want: []string{"ConstantOfShape", "ConstantOfShape", "Sum"},
	}, {
		name: "graph outputs keep their names",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3))
			a := b.Op("Relu", x)
			b.Output("y", b.Op("Neg", a))
			b.Output("z", b.Op("Relu", x)) // merges: the first Relu's value is renamed z
			b.Output("w", b.Op("Neg", a))  // stays: y cannot also be w
		},
		want: []string{"Relu", "Neg", "Neg"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			require.Same(t, g.Nodes[0].Outputs[0], g.Outputs[1])
		},
	}, {
		name: "multi-output nodes",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(4, 2))
			p := b.OpN("Split", 2, at(ir.Int("axis", 0), ir.Int("num_outputs", 2)), x)
			q := b.OpN("Split", 2, at(ir.Int("axis", 0), ir.Int("num_outputs", 2)), x)
			b.Output("y", b.Op("Sum", b.Op("Sub", p[0], q[1]), b.Op("Sub", q[0], p[1])))
		},
		want: []string{"Split", "Sub", "Sum"},
	}})
}

func TestCSESubgraphs(t *testing.T) {
	runPassCases(t, csePass, []passCase{{
		name: "branch constants merge into the outer ones; nodes stay per graph",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3))
			c := b.Input("c", ir.Bool, sh())
			k := f32(b, 1, 2, 3)
			outer := b.Op("Mul", x, k)
			then := sub(b, "then")
			then.Output("t", then.Op("Add", then.Op("Mul", x, f32(then, 1, 2, 3)), outer))
			els := sub(b, "else")
			els.Output("e", els.Op("Mul", x, f32(els, 1, 2, 3)))
			b.Output("y", b.OpA("If", at(ir.GraphAttr("then_branch", then.G), ir.GraphAttr("else_branch", els.G)), c))
		},
		want: []string{"Mul", "If"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			k := g.Consts[0]
			for _, name := range []string{"then_branch", "else_branch"} {
				br := g.Nodes[1].AttrGraph(name)
				require.Empty(t, br.Consts, name)
				require.Same(t, k, br.Nodes[0].In(1), name)
			}
		},
	}})

	// Loop bodies and If nodes never merge, even when they look alike.
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh(3))
	c := b.Input("c", ir.Bool, sh())
	branches := func() []ir.AttrOption {
		then, els := sub(b, "then"), sub(b, "else")
		then.Output("t", then.Op("Neg", x))
		els.Output("e", els.Op("Abs", x))
		return at(ir.GraphAttr("then_branch", then.G), ir.GraphAttr("else_branch", els.G))
	}
	b.Output("y", b.Op("Add", b.OpA("If", branches(), c), b.OpA("If", branches(), c)))
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, InferShapes(g))
	runPass(t, g, csePass)
	require.Equal(t, []string{"If", "If", "Add"}, ops(g))
}
