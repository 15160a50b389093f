package passes

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// constOf returns the tensor of v after a pass (v must have become a constant).
func constOf(t *testing.T, v *ir.Value) *ir.Tensor {
	t.Helper()
	require.True(t, v.IsConst(), "%v is not a constant", v)
	return v.Const
}

func TestFold(t *testing.T) {
	runPassCases(t, foldPass, []passCase{{
		name: "constant chain folds whole",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3))
			w := randConst(b, "w", ir.Float32, 1, -1, 1, 3, 2)
			k := b.Op("Sqrt", b.Op("Add", b.OpA("Transpose", at(ir.Ints("perm", 1, 0)), w), f32s(b, 2)))
			b.Output("y", b.Op("Mul", x, k))
		},
		want: []string{"Mul"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			require.Equal(t, 3, ch.Removed) // Transpose, Add, Sqrt
			k := g.Nodes[0].In(1)
			require.Equal(t, "sqrt_folded", k.Name)
			require.Equal(t, []int64{2, 3}, constOf(t, k).Shape)
			// w, the scalar and the intermediate constants are gone.
			require.Len(t, g.Consts, 1)
			require.Equal(t, 1, ch.Consts, "net: w and 2 dropped, k added")
		},
	}, {
		name: "static shape arithmetic becomes a reshape target",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3, 4))
			s := b.Op("Shape", x)
			d0 := b.OpA("Gather", at(ir.Int("axis", 0)), s, i64(b, 0))
			tgt := b.OpA("Concat", at(ir.Int("axis", 0)), d0, i64(b, -1))
			b.Output("y", b.Op("Reshape", x, tgt))
		},
		want: []string{"Reshape"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			require.Equal(t, []int64{2, -1}, constOf(t, g.Nodes[0].In(1)).Int64s())
		},
	}, {
		name: "dims known behind symbols fold",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh("batch", 4, 16))
			d := b.OpA("Gather", at(ir.Int("axis", 0)), b.Op("Shape", x), i64s(b, 2))
			scale := b.Op("Sqrt", b.OpA("Cast", at(ir.Int("to", 1)), d))
			b.Output("y", b.Op("Div", x, scale))
		},
		want: []string{"Div"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			require.Equal(t, 4.0, constOf(t, g.Nodes[0].In(1)).Float64(0))
		},
	}, {
		name: "shape of a symbolic dim stays",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh("batch", 4))
			d := b.OpA("Gather", at(ir.Int("axis", 0)), b.Op("Shape", x), i64s(b, 0))
			b.Output("y", b.Op("Add", d, i64s(b, 1)))
		},
		want: []string{"Shape", "Gather", "Add"},
	}, {
		name: "graph output folds and keeps its name",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3))
			b.Output("y", b.Op("Neg", x))
			b.Output("k", b.Op("Add", f32(b, 1, 2, 3), f32s(b, 1)))
		},
		want: []string{"Neg"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			require.Equal(t, []float32{2, 3, 4}, constOf(t, g.Outputs[1]).Float32s())
		},
	}, {
		name: "integer arithmetic",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Int32, sh(4))
			k := b.Op("Mul", b.OpA("Cast", at(ir.Int("to", 6)), i64(b, 1, -2, 3, 70000)), b.Const("", ir.FromFloat64(ir.Int32, nil, []float64{3})))
			b.Output("y", b.Op("Add", x, k))
		},
		want: []string{"Add"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			require.Equal(t, []int64{3, -6, 9, 210000}, constOf(t, g.Nodes[0].In(1)).Int64s())
		},
	}, {
		name: "over the fold limit stays",
		opts: Options{FoldLimit: 1024},
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(16, 32))
			small := b.Op("Neg", f32(b, 1, 2))             // 8 bytes: folds
			big := b.Op("ConstantOfShape", i64(b, 16, 32)) // 2 KiB: stays
			b.Output("y", b.Op("Add", x, big))
			b.Output("z", b.Op("Neg", small))
		},
		want: []string{"ConstantOfShape", "Add"},
	}, {
		name: "growth past the inputs stays",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(1, 128, 256))
			big := b.OpA("Expand", nil, f32s(b, 0.5), i64(b, 1, 128, 256)) // 128 KiB from 4 bytes
			b.Output("y", b.Op("Mul", x, big))
		},
		want: []string{"Expand", "Mul"},
	}})
}

func TestFoldKeepsRandomOps(t *testing.T) {
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh(3))
	r := b.Op("RandomUniformLike", f32(b, 1, 2, 3))
	b.Output("y", b.Op("Mul", x, b.Op("Mul", r, f32s(b, 0))))
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, InferShapes(g))
	ctx := NewContext(g)
	calls := 0
	ctx.Opts.Eval = func(n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) { calls++; return refEval(n, in) }
	ch, err := foldPass(g, ctx)
	require.NoError(t, err)
	require.Equal(t, Change{}, ch)
	require.Zero(t, calls, "a random op is never evaluated at compile time")
	require.Equal(t, []string{"RandomUniformLike", "Mul", "Mul"}, ops(g))
}

func TestFoldEvaluatorFailures(t *testing.T) {
	build := func() (*ir.Graph, *ir.Value) {
		b := ir.NewBuilder("t")
		x := b.Input("x", ir.Float32, sh(2))
		k := b.Op("Exp", f32(b, 1, 2))
		b.Output("y", b.Op("Add", x, k))
		g, err := b.Build()
		require.NoError(t, err)
		require.NoError(t, InferShapes(g))
		return g, k
	}
	for name, eval := range map[string]func(*ir.Node, []*ir.Tensor) ([]*ir.Tensor, error){
		"error": func(*ir.Node, []*ir.Tensor) ([]*ir.Tensor, error) { return nil, errors.New("boom") },
		"panic": func(*ir.Node, []*ir.Tensor) ([]*ir.Tensor, error) { panic("boom") },
		"wrong type": func(*ir.Node, []*ir.Tensor) ([]*ir.Tensor, error) {
			return []*ir.Tensor{ir.FromInt64([]int64{2}, []int64{1, 2})}, nil
		},
		"wrong shape": func(*ir.Node, []*ir.Tensor) ([]*ir.Tensor, error) {
			return []*ir.Tensor{ir.FromFloat32([]int64{3}, []float32{1, 2, 3})}, nil
		},
		"no outputs": func(*ir.Node, []*ir.Tensor) ([]*ir.Tensor, error) { return nil, nil },
	} {
		t.Run(name, func(t *testing.T) {
			g, k := build()
			ctx := NewContext(g)
			ctx.Opts.Eval = eval
			ch, err := foldPass(g, ctx)
			require.NoError(t, err, "a failed evaluation never fails compilation")
			require.Equal(t, Change{}, ch)
			require.Equal(t, []string{"Exp", "Add"}, ops(g))
			require.False(t, k.IsConst())
		})
	}

	// Without an evaluator only what inference knows folds: integer
	// values computed from static shapes.
	g, k := build()
	ch, err := foldPass(g, NewContext(g))
	require.NoError(t, err)
	require.Equal(t, Change{}, ch)
	require.False(t, k.IsConst())

	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh(2, 5))
	n := b.Op("Div", b.Op("Size", x), i64s(b, 2))
	s := b.Op("Shape", x)
	b.Output("y", b.Op("Reshape", x, b.OpA("Concat", at(ir.Int("axis", 0)), b.Op("Unsqueeze", n, i64(b, 0)), i64(b, -1))))
	b.Output("s", s)
	g, err = b.Build()
	require.NoError(t, err)
	require.NoError(t, InferShapes(g))
	ch, err = foldPass(g, NewContext(g))
	require.NoError(t, err)
	require.Equal(t, 5, ch.Removed) // Size, Div, Shape, Unsqueeze, Concat
	require.Equal(t, []string{"Reshape"}, ops(g))
	require.Equal(t, []int64{5, -1}, constOf(t, g.Nodes[0].In(1)).Int64s())
	require.Equal(t, []int64{2, 5}, constOf(t, g.Outputs[1]).Int64s())
	require.Equal(t, "s", g.Outputs[1].Name)
}

func TestFoldSubgraphs(t *testing.T) {
	runPassCases(t, foldPass, []passCase{{
		name: "inside an If branch, reading outer constants",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3))
			c := b.Input("c", ir.Bool, sh())
			k := f32(b, 1, 2, 3)
			then := sub(b, "then")
			then.Output("t", then.Op("Mul", x, then.Op("Neg", k)))
			els := sub(b, "else")
			els.Output("e", els.Op("Add", x, k))
			b.Output("y", b.OpA("If", at(ir.GraphAttr("then_branch", then.G), ir.GraphAttr("else_branch", els.G)), c))
		},
		want: []string{"If"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			then := g.Nodes[0].AttrGraph("then_branch")
			require.Equal(t, []string{"Mul"}, ops(then))
			require.Equal(t, []float32{-1, -2, -3}, constOf(t, then.Nodes[0].In(1)).Float32s())
			require.Same(t, then, then.Nodes[0].In(1).Graph, "the constant belongs to the branch")
		},
	}, {
		name: "loop body: shape arithmetic of carried values stays",
		build: func(b *ir.Builder) {
			v0 := f32(b, 1)
			body := sub(b, "body")
			body.Input("i", ir.Int64, sh())
			cond := body.Input("cond", ir.Bool, sh())
			v := body.Input("v", ir.Float32, sh(1))
			n := body.OpA("Cast", at(ir.Int("to", 1)), body.Op("Shape", v))
			body.Output("cond_out", cond)
			body.Output("v_out", body.Op("Add", v, n))
			outs := b.OpN("Loop", 1, at(ir.GraphAttr("body", body.G)), i64s(b, 3), nil, v0)
			b.Output("y", outs[0])
		},
		want: []string{"Loop"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			// Folding Shape here would be right (the shape is invariant),
			// but a loop body's values are left to run time on principle.
			require.Equal(t, []string{"Shape", "Cast", "Add"}, ops(g.Nodes[0].AttrGraph("body")))
		},
	}})
}
