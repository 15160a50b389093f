package passes

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func ops(g *ir.Graph) []string {
	var out []string
	for _, n := range g.Nodes {
		out = append(out, n.Op)
	}
	return out
}

func runPass(t *testing.T, g *ir.Graph, fn func(*ir.Graph, *Context) (Change, error)) Change {
	t.Helper()
	ch, err := fn(g, NewContext(g))
	require.NoError(t, err)
	require.NoError(t, ir.Verify(g))
	return ch
}

func TestDCE(t *testing.T) {
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh(4))
	b.Input("unused", ir.Float32, sh(4))
	w := f32(b, 1, 2, 3, 4)
	dead := f32(b, 5, 6, 7, 8)
	b.Op("Exp", b.Op("Add", x, dead)) // dead chain and its constant
	y := b.Op("Mul", x, w)
	b.Output("y", y)
	g, err := b.Build()
	require.NoError(t, err)
	ch := runPass(t, g, dcePass)
	require.Equal(t, Change{Removed: 2, Consts: 1, BytesSaved: 16}, ch)
	require.Equal(t, []string{"Mul"}, ops(g))
	require.Len(t, g.Inputs, 2, "graph inputs are the interface")
	require.Equal(t, []*ir.Value{w}, g.Consts)
	require.Equal(t, Change{}, runPass(t, g, dcePass), "dce is idempotent")
}

func TestDCESubgraphs(t *testing.T) {
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh(4))
	c := b.Input("c", ir.Bool, sh())
	outer := b.Op("Relu", x) // read only inside the then branch
	k := f32(b, 1, 1, 1, 1)  // read only inside the else branch
	then := sub(b, "then")
	then.Op("Neg", outer) // dead inside the branch
	then.Output("t", then.Op("Abs", outer))
	els := sub(b, "else")
	els.Output("e", els.Op("Add", x, k))
	y := b.OpA("If", at(ir.GraphAttr("then_branch", then.G), ir.GraphAttr("else_branch", els.G)), c)
	// A second If whose result is unused dies with its branches.
	t2, e2 := sub(b, "then2"), sub(b, "else2")
	t2.Output("a", t2.Op("Sin", x))
	e2.Output("b", e2.Op("Cos", x))
	b.OpA("If", at(ir.GraphAttr("then_branch", t2.G), ir.GraphAttr("else_branch", e2.G)), c)
	b.Output("y", y)
	g, err := b.Build()
	require.NoError(t, err)
	ch := runPass(t, g, dcePass)
	require.Equal(t, 4, ch.Removed) // Neg, If, Sin, Cos
	require.Equal(t, []string{"Relu", "If"}, ops(g))
	require.Equal(t, []string{"Abs"}, ops(then.G))
	require.Equal(t, []*ir.Value{k}, g.Consts)
}

func TestIdentity(t *testing.T) {
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh(4))
	c := b.Const("c", ir.FromFloat32([]int64{1}, []float32{1}))
	r := b.Op("Relu", b.Op("Identity", b.Op("Identity", x))) // chain: Relu reads x
	r.Name = "inner"
	b.Output("passthrough", b.Op("Identity", x)) // input re-exposed: kept
	b.Output("constout", b.Op("Identity", c))    // constant exposed: kept
	b.Output("y", b.Op("Identity", r))           // r takes the name "y"
	b.Output("y2", b.Op("Identity", r))          // r is already an output: kept
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, InferShapes(g))
	ch := runPass(t, g, identityPass)
	require.Equal(t, 3, ch.Removed)
	require.Equal(t, []string{"Relu", "Identity", "Identity", "Identity"}, ops(g))
	require.Same(t, x, g.Nodes[0].Inputs[0])
	require.Same(t, r, g.Outputs[2])
	require.Equal(t, "y", r.Name)
	for i, name := range []string{"passthrough", "constout", "y", "y2"} {
		require.Equal(t, name, g.Outputs[i].Name)
	}
	require.Equal(t, Change{}, runPass(t, g, identityPass))
}

func TestIdentitySubgraph(t *testing.T) {
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh(4))
	body := sub(b, "then")
	body.Output("t", body.Op("Identity", x)) // outer value as branch output: kept
	inner := body.Op("Neg", body.Op("Identity", x))
	els := sub(b, "else")
	els.Output("e", els.Op("Identity", els.Op("Abs", x))) // bypassed, Abs renamed
	y := b.OpN("If", 1, at(ir.GraphAttr("then_branch", body.G), ir.GraphAttr("else_branch", els.G)), b.Input("c", ir.Bool, sh()))
	b.Output("y", y[0])
	b.Output("n", b.Op("Identity", b.Op("Identity", x))) // chain ending at an input: last one kept
	g, err := b.Build()
	require.NoError(t, err)
	_ = inner
	ch := runPass(t, g, identityPass)
	require.Equal(t, 3, ch.Removed)
	require.Equal(t, []string{"Identity", "Neg"}, ops(body.G))
	require.Same(t, x, body.G.Nodes[1].Inputs[0])
	require.Equal(t, []string{"Abs"}, ops(els.G))
	require.Equal(t, "e", els.G.Outputs[0].Name)
	require.Equal(t, []string{"If", "Identity"}, ops(g))
	require.Same(t, x, g.Nodes[1].Inputs[0])
}
