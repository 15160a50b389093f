package passes

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func castTo(b *ir.Builder, x *ir.Value, onnxType int64) *ir.Value {
	return b.OpA("Cast", at(ir.Int("to", onnxType)), x)
}

func TestSimplify(t *testing.T) {
	// ONNX dtype codes for Cast: 1 f32, 6 i32, 7 i64, 10 f16, 11 f64.
	runPassCases(t, simplifyPass, []passCase{{
		name: "reshape to the same shape",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3))
			b.Output("y", b.Op("Relu", b.Op("Reshape", x, i64(b, 2, 3))))
		},
		want: []string{"Relu"},
	}, {
		name: "unsqueeze then squeeze cancel, symbols included",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh("batch", 3))
			u := b.Op("Unsqueeze", x, i64(b, 1))
			b.Output("y", b.Op("Relu", b.Op("Squeeze", u, i64(b, 1))))
		},
		want: []string{"Relu"},
	}, {
		name: "flatten, reshape back",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3, 4))
			f := b.OpA("Flatten", at(ir.Int("axis", 1)), x)
			b.Output("y", b.Op("Neg", b.Op("Reshape", f, i64(b, 2, 3, 4))))
		},
		want: []string{"Neg"},
	}, {
		name: "reshape chain keeps the last",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3, 4))
			r1 := b.Op("Reshape", x, i64(b, 6, 4))
			b.Output("y", b.Op("Reshape", r1, i64(b, 4, -1)))
		},
		want: []string{"Reshape"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			require.Same(t, g.Inputs[0], g.Nodes[0].In(0))
		},
	}, {
		name: "reshape chain with a 0 (copy) dim uses the static shape",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3, 4))
			r1 := b.Op("Reshape", x, i64(b, 6, 4))
			y := b.Op("Reshape", r1, i64(b, 0, 2, 2)) // 0 copies the 6 of r1, not x's 2
			b.Output("y", y)
		},
		want: []string{"Reshape"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			require.Same(t, g.Inputs[0], g.Nodes[0].In(0))
			require.Equal(t, []int64{6, 2, 2}, g.Nodes[0].In(1).Const.Int64s())
		},
	}, {
		name: "reshape chain with a computed target stays",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh("n", 4))
			r1 := b.Op("Reshape", x, i64(b, -1))
			s := b.Op("Shape", x)
			b.Output("y", b.Op("Reshape", r1, s))
		},
		want: []string{"Reshape", "Shape", "Reshape"},
	}, {
		name: "exporter-style target keeping the input's own dims",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh("?", "?", 8))
			dim := func(v *ir.Value, i int64) *ir.Value {
				g := b.OpA("Gather", at(ir.Int("axis", 0)), b.Op("Shape", v), i64s(b, i))
				return b.Op("Unsqueeze", g, i64(b, 0))
			}
			r := b.Op("Reshape", x, b.OpA("Concat", at(ir.Int("axis", 0)), dim(x, 0), dim(x, -2), i64(b, 4, -1)))
			f := b.Op("Reshape", r, b.OpA("Concat", at(ir.Int("axis", 0)),
				b.Op("Slice", b.Op("Shape", r), i64(b, 0), i64(b, 2), nil, nil), i64(b, -1)))
			b.Output("y", f)
		},
		want: []string{"Reshape", "Reshape"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			require.Equal(t, []int64{0, 0, 4, -1}, g.Nodes[0].In(1).Const.Int64s())
			require.Equal(t, []int64{0, 0, -1}, g.Nodes[1].In(1).Const.Int64s())
		},
	}, {
		name: "computed targets from other dims or other values stay",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh("?", "?", 8))
			z := b.Input("z", ir.Float32, sh("?", "?", 8))
			dim := func(v *ir.Value, i int64) *ir.Value {
				g := b.OpA("Gather", at(ir.Int("axis", 0)), b.Op("Shape", v), i64s(b, i))
				return b.Op("Unsqueeze", g, i64(b, 0))
			}
			b.Output("y", b.Op("Reshape", x, b.OpA("Concat", at(ir.Int("axis", 0)), dim(x, 1), dim(x, 0), i64(b, 8))))
			b.Output("w", b.Op("Reshape", x, b.OpA("Concat", at(ir.Int("axis", 0)), dim(z, 0), i64(b, -1))))
		},
		want: []string{"Shape", "Gather", "Unsqueeze", "Shape", "Gather", "Unsqueeze", "Concat", "Reshape",
			"Shape", "Gather", "Unsqueeze", "Concat", "Reshape"},
	}, {
		name: "transposes compose",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3, 4))
			t1 := b.OpA("Transpose", at(ir.Ints("perm", 1, 2, 0)), x)
			b.Output("y", b.OpA("Transpose", at(ir.Ints("perm", 0, 2, 1)), t1))
		},
		want: []string{"Transpose"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			require.Equal(t, []int64{1, 0, 2}, g.Nodes[0].AttrInts("perm", nil))
			require.Equal(t, "f32[3,2,4]", typeOf(g.Outputs[0]))
		},
	}, {
		name: "transposes that cancel, default perm",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3))
			t1 := b.Op("Transpose", x)
			b.Output("y", b.Op("Exp", b.OpA("Transpose", at(ir.Ints("perm", 1, 0)), t1)))
		},
		want: []string{"Exp"},
	}, {
		name: "neutral constants",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3))
			v := b.Op("Mul", x, f32s(b, 1))
			v = b.Op("Add", zeros(b, 1, 3), v)
			v = b.Op("Sub", v, f32s(b, 0))
			v = b.Op("Div", v, fill(b, ir.Float32, 1, 2, 1))
			v = b.Op("Mul", fill(b, ir.Float32, 1, 3), v)
			b.Output("y", b.Op("Tanh", v))
		},
		want: []string{"Tanh"},
	}, {
		name: "a neutral constant that broadcasts wider stays",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3))
			b.Output("y", b.Op("Tanh", b.Op("Mul", x, fill(b, ir.Float32, 1, 2, 3))))
			b.Output("z", b.Op("Tanh", b.Op("Sub", f32s(b, 0), x))) // 0 - x is not x
			b.Output("w", b.Op("Tanh", b.Op("Mul", x, f32(b, 1, 1, 2))))
		},
		want: []string{"Mul", "Tanh", "Sub", "Tanh", "Mul", "Tanh"},
	}, {
		name: "integer neutral constants",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Int64, sh(4))
			b.Output("y", b.Op("Neg", b.Op("Div", b.Op("Add", x, i64s(b, 0)), i64(b, 1, 1, 1, 1))))
		},
		want: []string{"Neg"},
	}, {
		name: "casts",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(4))
			i := b.Input("i", ir.Int32, sh(4))
			b.Output("same", b.Op("Neg", castTo(b, x, 1)))
			b.Output("roundtrip", b.Op("Neg", castTo(b, castTo(b, x, 11), 1))) // f32 -> f64 -> f32
			b.Output("lossy", b.Op("Neg", castTo(b, castTo(b, x, 6), 1)))      // f32 -> i32 -> f32 stays
			b.Output("int", b.Op("Neg", castTo(b, castTo(b, i, 7), 6)))        // i32 -> i64 -> i32
			b.Output("shortcut", b.Op("Neg", castTo(b, castTo(b, i, 7), 11)))  // i32 -> i64 -> f64: i32 -> f64
			b.Output("narrowing", b.Op("Neg", castTo(b, castTo(b, x, 10), 1))) // f32 -> f16 -> f32 stays
			b.Output("like", b.Op("Neg", b.Op("CastLike", x, f32s(b, 0))))     // CastLike to its own dtype
		},
		want: []string{"Neg", "Neg", "Cast", "Cast", "Neg", "Neg", "Cast", "Neg", "Cast", "Cast", "Neg", "Neg"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			// The shortcut Cast reads i directly.
			require.Same(t, g.Inputs[1], g.Nodes[6].In(0))
			require.Equal(t, ir.Float64, g.Nodes[6].Outputs[0].DType)
		},
	}, {
		name: "dropout in inference",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3))
			d := b.OpN("Dropout", 2, nil, x, f32s(b, 0.5))
			b.Output("y", b.Op("Relu", d[0]))
			// training_mode true: stays (its mask is random, and so is y).
			e := b.OpN("Dropout", 1, nil, x, f32s(b, 0), b.Const("", ir.FromFloat64(ir.Bool, nil, []float64{1})))
			b.Output("z", b.Op("Relu", e[0]))
		},
		want: []string{"Relu", "Dropout", "Relu"},
	}, {
		name: "expand to the same shape, single concat",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3))
			e := b.Op("Expand", x, i64(b, 1, 3))
			c := b.OpA("Concat", at(ir.Int("axis", 0)), e)
			b.Output("y", b.Op("Sin", c))
			b.Output("z", b.Op("Expand", x, i64(b, 2, 2, 3))) // grows: stays
		},
		want: []string{"Sin", "Expand"},
	}, {
		name: "graph output: the bypassing value takes the name",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3))
			r := b.Op("Relu", x)
			b.Output("y", b.Op("Reshape", r, i64(b, 2, 3)))
		},
		want: []string{"Relu"},
	}, {
		name: "graph output fed by an input or another output stays",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 3))
			r := b.Op("Relu", x)
			b.Output("r", r)
			b.Output("y", b.Op("Mul", x, f32s(b, 1)))
			b.Output("z", b.Op("Mul", r, f32s(b, 1)))
		},
		want: []string{"Relu", "Mul", "Mul"},
	}})
}

func TestSimplifySubgraph(t *testing.T) {
	runPassCases(t, simplifyPass, []passCase{{
		name: "a branch reads a bypassed outer value",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3))
			c := b.Input("c", ir.Bool, sh())
			m := b.Op("Exp", x)
			one := b.Op("Mul", m, f32s(b, 1)) // bypassed: the branches read m
			then := sub(b, "then")
			then.Output("t", then.Op("Neg", then.Op("Add", one, f32s(then, 0))))
			els := sub(b, "else")
			els.Output("e", els.Op("Abs", one))
			b.Output("y", b.OpA("If", at(ir.GraphAttr("then_branch", then.G), ir.GraphAttr("else_branch", els.G)), c))
		},
		want: []string{"Exp", "If"},
		check: func(t *testing.T, g *ir.Graph, _ Change) {
			then := g.Nodes[1].AttrGraph("then_branch")
			require.Equal(t, []string{"Neg"}, ops(then))
			require.Same(t, g.Nodes[0].Outputs[0], then.Nodes[0].In(0))
		},
	}})
}

func TestExactCast(t *testing.T) {
	for _, c := range []struct {
		from, to ir.DType
		want     bool
	}{
		{ir.Float32, ir.Float64, true}, {ir.Float16, ir.Float32, true}, {ir.BFloat16, ir.Float32, true},
		{ir.Float16, ir.BFloat16, false}, {ir.BFloat16, ir.Float16, false}, {ir.Float64, ir.Float32, false},
		{ir.Float32, ir.Int32, false}, {ir.Int32, ir.Float32, false}, {ir.Int32, ir.Float64, true},
		{ir.Int16, ir.Float32, true}, {ir.Int16, ir.Float16, false}, {ir.Int8, ir.Float16, true},
		{ir.Uint8, ir.Int8, false}, {ir.Int8, ir.Uint8, false}, {ir.Uint8, ir.Int16, true},
		{ir.Int32, ir.Int64, true}, {ir.Int64, ir.Int32, false}, {ir.Uint32, ir.Int64, true},
		{ir.Int64, ir.Float64, false}, {ir.Bool, ir.Int8, true}, {ir.Int8, ir.Bool, false},
		{ir.Bool, ir.Float16, true}, {ir.Uint64, ir.Int64, false},
	} {
		require.Equal(t, c.want, exactCast(c.from, c.to), "%v -> %v", c.from, c.to)
	}
}
