package passes

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// randomGraph builds a random chain of the ops fold, simplify and cse
// rewrite (neutral constants, reshape and transpose chains, casts, constant
// subgraphs, shape arithmetic, duplicates), so that the optimized pipeline
// can be checked against -O0 on many shapes of graph.
func randomGraph(seed uint64) (*ir.Graph, error) {
	rng := rand.New(rand.NewPCG(seed, 99))
	b := ir.NewBuilder(fmt.Sprintf("random%d", seed))
	x := b.Input("x", ir.Float32, sh(2, 3, 4))
	vals := []*ir.Value{x}
	pick := func() *ir.Value { return vals[rng.IntN(len(vals))] }
	cnst := func(dims ...int64) *ir.Value {
		t := ir.NewTensor(ir.Float32, dims)
		neutral := rng.IntN(3) == 0
		for i := 0; i < t.Len(); i++ {
			if neutral {
				t.SetFloat64(i, float64(rng.IntN(2)))
			} else {
				t.SetFloat64(i, rng.Float64()+0.5)
			}
		}
		return b.Const("", t)
	}
	for range 12 {
		v := pick()
		var out *ir.Value
		switch rng.IntN(11) {
		case 0, 1: // binary with a constant that broadcasts (maybe a neutral one)
			c := cnst([][]int64{nil, {1}, {int64(v.Shape[len(v.Shape)-1].Size)}, {1, 1, 1, 1}}[rng.IntN(4)]...)
			op := []string{"Add", "Mul", "Sub", "Div"}[rng.IntN(4)]
			if rng.IntN(2) == 0 && (op == "Add" || op == "Mul") {
				out = b.Op(op, c, v)
			} else {
				out = b.Op(op, v, c)
			}
		case 2: // a constant subgraph
			out = b.Op("Add", v, b.Op("Sqrt", b.Op("Mul", cnst(v.Shape[len(v.Shape)-1].Size), cnst(1))))
		case 3:
			out = b.Op([]string{"Tanh", "Neg", "Relu", "Abs"}[rng.IntN(4)], v)
		case 4: // one or two transposes
			out = v
			for range 1 + rng.IntN(2) {
				p := rng.Perm(len(v.Shape))
				perm := make([]int64, len(p))
				for i, a := range p {
					perm[i] = int64(a)
				}
				out = b.OpA("Transpose", at(ir.Ints("perm", perm...)), out)
			}
		case 5: // reshape, sometimes back to x's shape
			target := [][]int64{{24}, {6, 4}, {2, 3, 4}, {4, 6}, {2, 12}, {1, 24}}[rng.IntN(6)]
			out = b.Op("Reshape", v, i64(b, target...))
		case 6:
			u := b.Op("Unsqueeze", v, i64(b, 0))
			if rng.IntN(2) == 0 {
				u = b.Op("Squeeze", u, i64(b, 0))
			}
			out = u
		case 7: // a cast round trip (exact or not)
			mid := []int64{11, 6, 10}[rng.IntN(3)] // f64, i32, f16
			out = castTo(b, castTo(b, v, mid), 1)
		case 8: // a duplicate of an earlier unary op
			out = b.Op("Add", b.Op("Tanh", v), b.Op("Tanh", v))
		case 9: // exporter-style flatten through Shape
			d0 := b.OpA("Gather", at(ir.Int("axis", 0)), b.Op("Shape", v), i64(b, 0))
			out = b.Op("Reshape", v, b.OpA("Concat", at(ir.Int("axis", 0)), d0, i64(b, -1)))
		case 10:
			out = b.OpN("Dropout", 1, nil, v, f32s(b, 0.3))[0]
		}
		vals = append(vals, out)
		if err := InferShapes(b.G); err != nil {
			return nil, err
		}
	}
	b.Output("y", vals[len(vals)-1])
	if o := pick(); o != vals[len(vals)-1] {
		b.Output("z", o)
	}
	return b.Build()
}

// TestPipelineRandomGraphs checks that -O1 and -O2 compute what -O0
// computes on random graphs (and that the result verifies).
func TestPipelineRandomGraphs(t *testing.T) {
	shrunk := 0
	for seed := uint64(1); seed <= 150; seed++ {
		g0, err := randomGraph(seed)
		require.NoError(t, err, "seed %d", seed)
		_, err = Run(g0, Options{Level: 0, Verify: true})
		require.NoError(t, err)
		in := randomInputs(g0, seed)
		want := runRef(t, g0, in)
		for lvl := 1; lvl <= MaxLevel; lvl++ {
			g, err := randomGraph(seed)
			require.NoError(t, err)
			_, err = Run(g, Options{Level: lvl, Verify: true, Eval: refEval})
			require.NoError(t, err, "seed %d -O%d", seed, lvl)
			require.NoError(t, ir.VerifyTyped(g), "seed %d -O%d", seed, lvl)
			require.Len(t, g.Outputs, len(g0.Outputs))
			for i, o := range g0.Outputs {
				require.Equal(t, o.Name, g.Outputs[i].Name, "seed %d -O%d", seed, lvl)
			}
			got := runRef(t, g, in)
			requireClose(t, want, got, 1e-5)
			if countNodes(g) < countNodes(g0) {
				shrunk++
			}
		}
	}
	require.Greater(t, shrunk, 150, "the passes shrink most random graphs")
}
