package passes

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// convInput adds an input [1, 3, 5, 5] and a Conv to 4 channels with
// random weights (and a bias when withBias).
func convNode(b *ir.Builder, dt ir.DType, withBias bool) *ir.Value {
	x := b.Input("x", dt, sh(1, 3, 5, 5))
	w := randConst(b, "w", dt, 1, -1, 1, 4, 3, 3, 3)
	var bias *ir.Value
	if withBias {
		bias = randConst(b, "b", dt, 2, -1, 1, 4)
	}
	return b.OpA("Conv", at(ir.Ints("pads", 1, 1, 1, 1)), x, w, bias)
}

func TestConvBN(t *testing.T) {
	runPassCases(t, convBNPass, []passCase{{
		name: "batch normalization as lowered: Mul + Add by [C,1,1]",
		build: func(b *ir.Builder) {
			c := convNode(b, ir.Float32, true)
			s := randConst(b, "s", ir.Float32, 3, 0.5, 2, 4, 1, 1)
			sh := randConst(b, "t", ir.Float32, 4, -1, 1, 4, 1, 1)
			b.Output("y", b.Op("Relu", b.Op("Add", b.Op("Mul", c, s), sh)))
		},
		want: []string{"Conv", "Relu"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			require.Equal(t, 2, ch.Fused)
			conv := g.Nodes[0]
			require.Equal(t, []int64{4, 3, 3, 3}, conv.In(1).Const.Shape)
			require.Equal(t, []int64{4}, conv.In(2).Const.Shape)
			require.Equal(t, "f32[1,4,5,5]", typeOf(conv.Outputs[0]))
			require.Len(t, g.Consts, 2, "the old weights, bias and affine constants are gone")
		},
	}, {
		name: "no bias; [1,C,1,1] scale, scale on the left",
		build: func(b *ir.Builder) {
			c := convNode(b, ir.Float32, false)
			b.Output("y", b.Op("Mul", randConst(b, "s", ir.Float32, 3, -2, 2, 1, 4, 1, 1), c))
		},
		want: []string{"Conv"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			require.Equal(t, "y", g.Nodes[0].Outputs[0].Name, "the graph output keeps its value and name")
			require.Len(t, g.Nodes[0].Inputs, 3)
		},
	}, {
		name: "lone Add of a per-channel bias, then Sub and Div",
		build: func(b *ir.Builder) {
			c := convNode(b, ir.Float32, true)
			v := b.Op("Add", c, randConst(b, "t", ir.Float32, 4, -1, 1, 4, 1, 1))
			v = b.Op("Sub", v, f32s(b, 0.25))
			v = b.Op("Div", v, randConst(b, "d", ir.Float32, 5, 1, 3, 4, 1, 1))
			b.Output("y", v)
		},
		want: []string{"Conv"},
	}, {
		name: "float64",
		build: func(b *ir.Builder) {
			c := convNode(b, ir.Float64, true)
			b.Output("y", b.Op("Mul", c, randConst(b, "s", ir.Float64, 3, 0.5, 2, 4, 1, 1)))
		},
		want: []string{"Conv"},
	}, {
		name: "float16 within its rounding",
		rel:  4e-3,
		build: func(b *ir.Builder) {
			c := convNode(b, ir.Float16, true)
			b.Output("y", b.Op("Add", b.Op("Mul", c, randConst(b, "s", ir.Float16, 3, 0.5, 2, 4, 1, 1)), randConst(b, "t", ir.Float16, 4, -1, 1, 4, 1, 1)))
		},
		want: []string{"Conv"},
	}, {
		name: "conv output used twice stays",
		build: func(b *ir.Builder) {
			c := convNode(b, ir.Float32, true)
			b.Output("y", b.Op("Mul", c, randConst(b, "s", ir.Float32, 3, 0.5, 2, 4, 1, 1)))
			b.Output("z", b.Op("Relu", c))
		},
		want: []string{"Conv", "Mul", "Relu"},
	}, {
		name: "conv output that is a graph output stays",
		build: func(b *ir.Builder) {
			c := convNode(b, ir.Float32, true)
			b.Output("c", c)
			b.Output("y", b.Op("Mul", c, randConst(b, "s", ir.Float32, 3, 0.5, 2, 4, 1, 1)))
		},
		want: []string{"Conv", "Mul"},
	}, {
		name: "the second affine op stops at a second reader",
		build: func(b *ir.Builder) {
			c := convNode(b, ir.Float32, true)
			m := b.Op("Mul", c, randConst(b, "s", ir.Float32, 3, 0.5, 2, 4, 1, 1))
			b.Output("y", b.Op("Add", m, randConst(b, "t", ir.Float32, 4, -1, 1, 4, 1, 1)))
			b.Output("z", b.Op("Exp", m))
		},
		want: []string{"Conv", "Add", "Exp"},
	}, {
		name: "not per channel, broadcasting wider, non-constant or reversed operands stay",
		build: func(b *ir.Builder) {
			c1 := convNode(b, ir.Float32, true)
			b.Output("spatial", b.Op("Mul", c1, randConst(b, "s1", ir.Float32, 3, 0.5, 2, 1, 5, 5)))
			x := b.G.Inputs[0]
			w := b.G.Consts[0]
			conv := func() *ir.Value { return b.OpA("Conv", at(ir.Ints("pads", 1, 1, 1, 1)), x, w) }
			b.Output("rank5", b.Op("Mul", conv(), randConst(b, "s2", ir.Float32, 3, 0.5, 2, 1, 1, 4, 1, 1)))
			b.Output("runtime", b.Op("Add", conv(), b.Input("t", ir.Float32, sh(4, 1, 1))))
			b.Output("reversed", b.Op("Sub", randConst(b, "s3", ir.Float32, 3, 0.5, 2, 4, 1, 1), conv()))
			b.Output("recip", b.Op("Div", randConst(b, "s4", ir.Float32, 3, 0.5, 2, 4, 1, 1), conv()))
		},
		want: []string{"Conv", "Mul", "Conv", "Mul", "Conv", "Add", "Conv", "Sub", "Conv", "Div"},
	}, {
		name: "a shared weight is copied, not changed",
		build: func(b *ir.Builder) {
			c := convNode(b, ir.Float32, true)
			b.Output("y", b.Op("Mul", c, randConst(b, "s", ir.Float32, 3, 0.5, 2, 4, 1, 1)))
			b.Output("z", b.OpA("Conv", at(ir.Ints("pads", 1, 1, 1, 1)), b.G.Inputs[0], b.G.Consts[0], b.G.Consts[1]))
		},
		want: []string{"Conv", "Conv"},
	}, {
		name: "integer conv stays",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(1, 2, 4, 4))
			w := randConst(b, "w", ir.Float32, 1, -1, 1, 2, 2, 1, 1)
			c := b.Op("Conv", x, w)
			q := b.OpA("Cast", at(ir.Int("to", 7)), c)
			b.Output("y", b.Op("Mul", q, b.Const("", ir.FromInt64([]int64{2, 1, 1}, []int64{2, 3}))))
		},
		want: []string{"Conv", "Cast", "Mul"},
	}})
}

// A Conv inside an If branch folds there; one reading a runtime weight does not.
func TestConvBNSubgraph(t *testing.T) {
	runPassCases(t, convBNPass, []passCase{{
		name: "in a branch",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(1, 3, 5, 5))
			c := b.Input("c", ir.Bool, sh())
			w := randConst(b, "w", ir.Float32, 1, -1, 1, 4, 3, 3, 3)
			then := sub(b, "then")
			conv := then.OpA("Conv", at(ir.Ints("pads", 1, 1, 1, 1)), x, w)
			then.Output("t", then.Op("Add", conv, randConst(then, "t", ir.Float32, 4, -1, 1, 4, 1, 1)))
			els := sub(b, "else")
			els.Output("e", els.OpA("Conv", at(ir.Ints("pads", 1, 1, 1, 1)), x, w))
			b.Output("y", b.OpA("If", at(ir.GraphAttr("then_branch", then.G), ir.GraphAttr("else_branch", els.G)), c))
		},
		want: []string{"If"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			require.Equal(t, []string{"Conv"}, ops(g.Nodes[0].AttrGraph("then_branch")))
			require.Len(t, g.Consts, 1, "the else branch still reads w")
		},
	}})
}
