package passes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/backends"
	_ "github.com/weftrt/weft/backends/cpu" // registers the reference kernels
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// refEval evaluates one node with the reference kernels: the constant
// evaluator the weft package hands to the passes.
func refEval(n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	env := backends.NewEnv(nil)
	for i, v := range n.Inputs {
		if v != nil {
			env.Set(v, in[i])
		}
	}
	if err := ref.RunNode(&ref.Context{Ctx: context.Background(), Env: env}, n); err != nil {
		return nil, err
	}
	out := make([]*ir.Tensor, len(n.Outputs))
	for i, o := range n.Outputs {
		out[i] = env.Get(o)
	}
	return out, nil
}

// symSize is the size random inputs give every symbolic dim.
const symSize = 3

// randomInputs draws inputs for g's inputs (symbolic dims: symSize).
func randomInputs(g *ir.Graph, seed uint64) []*ir.Tensor {
	rng := rand.New(rand.NewPCG(seed, 7))
	ins := make([]*ir.Tensor, len(g.Inputs))
	for i, v := range g.Inputs {
		dims := v.Shape.Ints()
		for k, d := range dims {
			if d < 0 {
				dims[k] = symSize
			}
		}
		t := ir.NewTensor(v.DType, dims)
		for j := 0; j < t.Len(); j++ {
			switch {
			case v.DType.IsFloat():
				t.SetFloat64(j, rng.Float64()*4-2)
			case v.DType == ir.Bool:
				t.SetInt64(j, int64(rng.IntN(2)))
			default:
				t.SetInt64(j, int64(rng.IntN(11)-5))
			}
		}
		ins[i] = t
	}
	return ins
}

// runRef runs g on inputs with the reference kernels.
func runRef(t *testing.T, g *ir.Graph, inputs []*ir.Tensor) []*ir.Tensor {
	t.Helper()
	out, err := ref.RunGraph(context.Background(), g, nil, inputs)
	require.NoError(t, err)
	return out
}

// requireClose compares outputs: integers exactly, floats within rel
// relative error (absolute near zero).
func requireClose(t *testing.T, want, got []*ir.Tensor, rel float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		require.Equal(t, w.DType, g.DType, "output %d dtype", i)
		require.Equal(t, w.Shape, g.Shape, "output %d shape", i)
		for j := 0; j < w.Len(); j++ {
			a, b := w.Float64(j), g.Float64(j)
			if !w.DType.IsFloat() {
				require.Equal(t, w.Int64(j), g.Int64(j), "output %d element %d", i, j)
				continue
			}
			if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
				continue // exact, infinities and NaNs included
			}
			require.LessOrEqual(t, math.Abs(a-b), rel*math.Max(1, math.Abs(a)), "output %d element %d: want %v, got %v", i, j, a, b)
		}
	}
}

// passCase is one specification of a pass: a graph before, the ops
// expected after, and numeric equivalence on random inputs.
type passCase struct {
	name  string
	build func(b *ir.Builder)
	want  []string // the top-level ops after the pass
	check func(t *testing.T, g *ir.Graph, ch Change)
	rel   float64 // tolerance (0: 1e-5)
	opts  Options // Eval defaults to refEval
}

// runPassCases builds each case twice, runs inference on both and pass
// on one (with the reference evaluator), checks the ops, the graph's
// validity and types, and that both graphs compute the same outputs.
func runPassCases(t *testing.T, pass func(*ir.Graph, *Context) (Change, error), cases []passCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			build := func() *ir.Graph {
				b := ir.NewBuilder("t")
				c.build(b)
				g, err := b.Build()
				require.NoError(t, err)
				require.NoError(t, InferShapes(g))
				return g
			}
			before, after := build(), build()
			ctx := NewContext(after)
			ctx.Opts = c.opts
			if ctx.Opts.Eval == nil {
				ctx.Opts.Eval = refEval
			}
			ch, err := pass(after, ctx)
			require.NoError(t, err)
			require.NoError(t, ir.VerifyTyped(after), "\n%s", ir.Text(after))
			require.Equal(t, c.want, ops(after), "\n%s", ir.Text(after))
			for i, o := range before.Outputs {
				require.Equal(t, o.Name, after.Outputs[i].Name, "output %d keeps its name", i)
				require.Equal(t, typeOf(o), typeOf(after.Outputs[i]), "output %d keeps its type", i)
			}
			if c.check != nil {
				c.check(t, after, ch)
			}
			rel := c.rel
			if rel == 0 {
				rel = 1e-5
			}
			for seed := uint64(1); seed <= 3; seed++ {
				in := randomInputs(before, seed)
				requireClose(t, runRef(t, before, in), runRef(t, after, in), rel)
			}
		})
	}
}

// randConst adds a float constant of dtype dt with random values in [lo, hi).
func randConst(b *ir.Builder, name string, dt ir.DType, seed uint64, lo, hi float64, dims ...int64) *ir.Value {
	rng := rand.New(rand.NewPCG(seed, 11))
	t := ir.NewTensor(dt, dims)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, lo+rng.Float64()*(hi-lo))
	}
	return b.Const(name, t)
}

// fill adds a constant of dtype dt and shape dims, every element v.
func fill(b *ir.Builder, dt ir.DType, v float64, dims ...int64) *ir.Value {
	t := ir.NewTensor(dt, dims)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, v)
	}
	return b.Const(fmt.Sprintf("fill%v", v), t)
}
