package passes

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func sub(b *ir.Builder, name string) *ir.Builder { return &ir.Builder{G: b.G.NewSubgraph(name)} }

func TestInferIf(t *testing.T) {
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh("n", 3))
	c := b.Input("c", ir.Bool, sh())
	then := sub(b, "then")
	t1 := then.Op("Relu", x) // reads the enclosing graph
	then.Output("t", t1)
	then.Output("t2", then.Op("Shape", x))
	els := sub(b, "else")
	e1 := els.OpA("Concat", at(ir.Int("axis", 1)), x, x)
	els.Output("e", e1)
	els.Output("e2", els.Op("Shape", e1))
	ys := b.OpN("If", 2, at(ir.GraphAttr("then_branch", then.G), ir.GraphAttr("else_branch", els.G)), c)
	b.Output("y", ys[0])
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, InferShapes(g))
	require.Equal(t, "f32[n,3]", typeOf(t1))
	require.Equal(t, "f32[n,6]", typeOf(e1))
	require.Equal(t, "f32[n,?]", typeOf(ys[0]))
	require.Equal(t, "i64[2]", typeOf(ys[1]))
	require.NoError(t, ir.VerifyTyped(g))

	// A constant condition picks the branch.
	for i, want := range []string{"f32[n,6]", "f32[n,3]"} {
		ys := b.OpN("If", 2, at(ir.GraphAttr("then_branch", then.G), ir.GraphAttr("else_branch", els.G)),
			b.Const("", ir.FromFloat64(ir.Bool, nil, []float64{float64(i)})))
		require.NoError(t, InferShapes(g))
		require.Equal(t, want, typeOf(ys[0]))
	}

	// Branches that disagree on the dtype are an error.
	b2 := ir.NewBuilder("t")
	x2 := b2.Input("x", ir.Float32, sh(3))
	th, el := sub(b2, "then"), sub(b2, "else")
	th.Output("a", th.Op("Neg", x2))
	el.Output("b", el.Op("Shape", x2))
	named(b2.OpA("If", at(ir.GraphAttr("then_branch", th.G), ir.GraphAttr("else_branch", el.G)), b2.Input("c", ir.Bool, sh())), "branchy")
	require.ErrorContains(t, InferShapes(b2.G), `node "branchy" (If): If output 0 is f32 in then_branch, i64 in else_branch`)
}

func TestInferLoop(t *testing.T) {
	b := ir.NewBuilder("t")
	v0 := f32(b, 1)
	body := sub(b, "body")
	iter := body.Input("i", ir.Invalid, nil)
	cond := body.Input("cond", ir.Invalid, nil)
	v := body.Input("v", ir.Invalid, nil)
	// The carried value grows by one element per iteration.
	v2 := body.OpA("Concat", at(ir.Int("axis", 0)), v, f32(body, 2))
	red := body.Op("ReduceSum", v2)
	body.Output("cond_out", cond)
	body.Output("v_out", v2)
	body.Output("scan", red)
	body.Output("iter", body.Op("Add", iter, i64s(body, 1)))
	outs := b.OpN("Loop", 3, at(ir.GraphAttr("body", body.G)), i64s(b, 5), nil, v0)
	for i, o := range outs {
		b.Output([]string{"v", "s", "it"}[i], o)
	}
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, InferShapes(g))
	require.Equal(t, []string{"i64[]", "bool[]", "f32[?]", "f32[?]", "f32[1]"},
		[]string{typeOf(iter), typeOf(cond), typeOf(v), typeOf(v2), typeOf(red)})
	require.Equal(t, []string{"f32[?]", "f32[5,1]", "i64[5]"}, []string{typeOf(outs[0]), typeOf(outs[1]), typeOf(outs[2])})

	// Inference can run again on its own output (a later pipeline does).
	require.NoError(t, InferShapes(g))
	require.Equal(t, "f32[5,1]", typeOf(outs[1]))
}

func TestInferScan(t *testing.T) {
	for _, tc := range []struct {
		outAxis int64
		want    []string
	}{
		{0, []string{"f32[2]", "f32[seq,3]"}},
		{-1, []string{"f32[2]", "f32[3,seq]"}},
	} {
		b := ir.NewBuilder("t")
		body := sub(b, "body")
		st := body.Input("st", ir.Invalid, nil)
		xs := body.Input("xs", ir.Invalid, nil)
		body.Output("st2", body.Op("Add", st, body.Op("ReduceSum", xs)))
		body.Output("y", body.Op("Mul", xs, xs))
		outs := b.OpN("Scan", 2, at(ir.GraphAttr("body", body.G), ir.Int("num_scan_inputs", 1),
			ir.Ints("scan_output_axes", tc.outAxis)), zeros(b, 2), b.Input("x", ir.Float32, sh("seq", 3)))
		require.NoError(t, InferShapes(b.G))
		require.Equal(t, "f32[3]", typeOf(xs))
		require.Equal(t, tc.want, []string{typeOf(outs[0]), typeOf(outs[1])})
	}
}

// A declared loop-carried shape that inference cannot prove is the model's
// word; one that an iteration contradicts is an error.
func TestInferLoopDeclaredCarried(t *testing.T) {
	build := func(grow bool) (*ir.Graph, *ir.Value) {
		b := ir.NewBuilder("t")
		body := sub(b, "body")
		iter := body.Input("i", ir.Int64, sh())
		cond := body.Input("c", ir.Bool, sh())
		y := body.Input("y", ir.Float32, sh(1))
		var next *ir.Value
		if grow {
			next = body.OpA("Concat", at(ir.Int("axis", 0)), y, y)
		} else {
			// y + x[i:i+1] with a run-time i: inference sees [?].
			st := body.Op("Unsqueeze", iter, i64(body, 0))
			sl := body.Op("Slice", f32(body, 1, 2, 3), st, body.Op("Add", st, i64(body, 1)), nil, nil)
			next = body.Op("Add", y, sl)
		}
		body.Output("c_out", cond)
		body.Output("y_out", next)
		out := b.OpA("Loop", at(ir.GraphAttr("body", body.G)), i64s(b, 3), nil, f32(b, 0))
		b.Output("r", out)
		return b.G, out
	}
	g, out := build(false)
	require.NoError(t, InferShapes(g))
	require.Equal(t, "f32[1]", typeOf(out))
	g, _ = build(true)
	require.ErrorContains(t, InferShapes(g), "carried input 2 is declared [1] but an iteration returns [2]")
}
