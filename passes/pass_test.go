package passes

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func pipelineNames(level int) []string {
	var names []string
	for _, p := range Pipeline(level) {
		names = append(names, p.Name)
	}
	return names
}

func TestPipelineLevels(t *testing.T) {
	require.Equal(t, []string{"infer", "quantize"}, pipelineNames(0))
	require.Equal(t, []string{"infer", "identity", "dce", "fold", "simplify", "cse", "quantize", "final-dce"}, pipelineNames(1))
	require.Equal(t, []string{"infer", "identity", "dce", "lower", "lower-dce", "fold", "simplify", "cse",
		"patterns", "convbn", "fuse", "quantize", "hfuse", "final-dce"}, pipelineNames(2))
	require.Equal(t, pipelineNames(MaxLevel), Names())
}

// TestPassOrder checks the ordering constraints, as the Go compiler's
// passOrder check does at start-up.
func TestPassOrder(t *testing.T) {
	names := Names()
	seen := map[string]bool{}
	for _, p := range passes {
		require.False(t, seen[p.Name], "duplicate pass %q", p.Name)
		seen[p.Name] = true
		require.NotNil(t, p.Fn, p.Name)
	}
	for _, c := range passOrder {
		i, j := slices.Index(names, c[0]), slices.Index(names, c[1])
		require.True(t, i >= 0 && j >= 0, "passOrder names unknown pass: %v", c)
		require.Less(t, i, j, "%s must run before %s", c[0], c[1])
	}
	// Every level keeps the Required passes.
	for lvl := 0; lvl <= MaxLevel; lvl++ {
		got := pipelineNames(lvl)
		for _, p := range passes {
			if p.Required {
				require.Contains(t, got, p.Name)
			}
		}
	}
}

// mlp builds a small model that exercises every pass: Gemm, an Identity, a
// dead branch, BatchNormalization with constant statistics.
func mlp(t *testing.T) *ir.Graph {
	b := ir.NewBuilder("mlp")
	x := b.Input("x", ir.Float32, sh("batch", 4))
	w := b.Const("w", ir.FromFloat32([]int64{3, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
	bias := b.Const("bias", ir.FromFloat32([]int64{3}, []float32{0.5, -0.5, 1}))
	h := b.OpA("Gemm", at(ir.Int("transB", 1), ir.Float("alpha", 0.5)), x, w, bias)
	h.Producer.Name = "fc"
	r := b.Op("Relu", b.Op("Identity", h))
	b.Op("Exp", b.Op("Neg", x)) // dead
	u := b.Op("Unsqueeze", r, b.Const("axes", ir.FromInt64([]int64{2}, []int64{2, 3})))
	stat := func(name string, v ...float32) *ir.Value { return b.Const(name, ir.FromFloat32([]int64{3}, v)) }
	bn := b.OpA("BatchNormalization", at(ir.Float("epsilon", 1)),
		u, stat("gamma", 1, 2, 3), stat("beta", 0, 1, 2), stat("mean", 1, 1, 1), stat("var", 3, 8, 0))
	bn.Producer.Name = "bn"
	b.Output("y", b.Op("Flatten", bn))
	g, err := b.Build()
	require.NoError(t, err)
	return g
}

func TestRunLevels(t *testing.T) {
	for lvl, want := range [][]string{
		{"Gemm", "Identity", "Relu", "Neg", "Exp", "Unsqueeze", "BatchNormalization", "Flatten"},
		{"Gemm", "Relu", "Unsqueeze", "BatchNormalization", "Flatten"},
		{"MatMul", "Fused", "Unsqueeze", "Fused", "Flatten"},
	} {
		g := mlp(t)
		rep, err := Run(g, Options{Level: lvl, Verify: true, Eval: refEval})
		require.NoError(t, err)
		// Every level computes what -O0 computes.
		g0 := mlp(t)
		_, err = Run(g0, Options{Level: 0})
		require.NoError(t, err)
		for seed := uint64(1); seed <= 3; seed++ {
			in := randomInputs(g0, seed)
			requireClose(t, runRef(t, g0, in), runRef(t, g, in), 1e-5)
		}
		var ops []string
		for _, n := range g.Nodes {
			ops = append(ops, n.Op)
		}
		require.Equal(t, want, ops, "-O%d", lvl)
		require.NoError(t, ir.VerifyTyped(g), "-O%d", lvl)
		require.Equal(t, "f32[batch,3]", typeOf(g.Outputs[0]))
		require.Equal(t, "y", g.Outputs[0].Name)
		require.Len(t, rep.Passes, len(Pipeline(lvl)))
	}
}

func TestRunReport(t *testing.T) {
	g := mlp(t)
	rep, err := Run(g, Options{Level: 2, Verify: true})
	require.NoError(t, err)
	byName := map[string]Change{}
	for _, p := range rep.Passes {
		byName[p.Name] = p.Change
	}
	require.Equal(t, Change{Removed: 1, Rewired: 1}, byName["identity"])
	require.Equal(t, Change{Removed: 2}, byName["dce"]) // Neg, Exp
	// Gemm -> MatMul, Mul, Add (w transposed into a new constant); BN -> Mul, Add.
	require.Equal(t, 2, byName["lower"].Removed)
	require.Equal(t, 5, byName["lower"].Added)
	require.Equal(t, -4, byName["lower"].Consts)
	// lower-dce drops w and the four statistics; the report says so.
	require.Equal(t, 5, byName["lower-dce"].Consts)
	require.Equal(t, int64(12*4+4*3*4), byName["lower-dce"].BytesSaved)
	golden(t, "report_O2", rep.String())
	require.Equal(t, 5, rep.Total().Removed) // Identity, Neg, Exp, Gemm, BN
}

func TestRunPrintAfter(t *testing.T) {
	var out bytes.Buffer
	g := mlp(t)
	_, err := Run(g, Options{Level: 1, Verify: true, PrintAfter: "identity", Out: &out})
	require.NoError(t, err)
	golden(t, "mlp_after_identity", out.String())

	_, err = Run(mlp(t), Options{Level: 1, PrintAfter: "lower", Out: &out})
	require.ErrorContains(t, err, `pass "lower" runs only at -O2 and above, not at -O1`)
	_, err = Run(mlp(t), Options{Level: 1, PrintAfter: "nosuch", Out: &out})
	require.ErrorContains(t, err, `no pass "nosuch" at -O1 (passes: infer, identity, dce, fold, simplify, cse, quantize, final-dce)`)
}

func TestGoldenO2(t *testing.T) {
	g := mlp(t)
	_, err := Run(g, Options{Level: 2, Verify: true})
	require.NoError(t, err)
	golden(t, "mlp_O2", ir.Text(g))
}

// golden compares got with testdata/name.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), got)
}

func TestContextCaches(t *testing.T) {
	g := mlp(t)
	ctx := NewContext(g)
	calls := 0
	a := &Analysis{Name: "count", Run: func(g *ir.Graph, _ *Context) any { calls++; return len(g.Nodes) }}
	require.Equal(t, 8, ctx.Get(a))
	require.Equal(t, 8, ctx.Get(a))
	require.Equal(t, 1, calls)
	u1 := ctx.Uses()
	require.Same(t, u1, ctx.Uses())
	ctx.Invalidate()
	require.Equal(t, 8, ctx.Get(a))
	require.Equal(t, 2, calls)
	require.NotSame(t, u1, ctx.Uses())

	// The Gemm output is read by the Identity only; the graph output by
	// the graph.
	h := g.Nodes[0].Outputs[0]
	require.Equal(t, 1, ctx.Uses().Count(h))
	require.Equal(t, 1, ctx.Uses().Count(g.Outputs[0]))
}

// A pass that breaks the graph is caught by Verify and named.
func TestRunVerifyCatchesBrokenPass(t *testing.T) {
	saved := passes[1]
	defer func() { passes[1] = saved }()
	passes[1] = Pass{Name: "identity", Level: 1, Fn: func(g *ir.Graph, _ *Context) (Change, error) {
		g.Nodes[0], g.Nodes[1] = g.Nodes[1], g.Nodes[0] // out of topological order
		return Change{Rewired: 1}, nil
	}}
	_, err := Run(mlp(t), Options{Level: 1, Verify: true})
	require.ErrorContains(t, err, "graph invalid after identity")
}

func TestRunErrors(t *testing.T) {
	_, err := Run(mlp(t), Options{Level: 1, PrintAfter: "dce"})
	require.ErrorContains(t, err, "without an Out writer")

	// An inference error stops the pipeline and names the pass and node.
	g := mlp(t)
	g.Outputs[0].Shape = sh("batch", 4)
	_, err = Run(g, Options{Level: 2, Verify: true})
	require.ErrorContains(t, err, "passes: infer: graph \"mlp\": node Flatten: output 0: inferred shape [batch,3], declared [batch,4]")

	// A broken input graph is reported before any pass runs.
	g = mlp(t)
	g.Nodes[0], g.Nodes[1] = g.Nodes[1], g.Nodes[0]
	_, err = Run(g, Options{Verify: true})
	require.ErrorContains(t, err, "passes: input graph")
}

func TestChangeString(t *testing.T) {
	require.Equal(t, "no change", Change{}.String())
	require.Equal(t, "2 removed, 1 fused, 3 consts added, 12 const bytes added",
		Change{Removed: 2, Fused: 1, Consts: -3, BytesSaved: -12}.String())
	var c Change
	c.Add(Change{Removed: 1, BytesSaved: 8})
	c.Add(Change{Removed: 2, Typed: 1})
	require.Equal(t, Change{Removed: 3, Typed: 1, BytesSaved: 8}, c)
}
