package passes

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// cnnBlock builds a small residual CNN as exporters write it: Conv +
// BatchNormalization pairs, a residual Add, an exporter-style computed
// Reshape target, a Dropout, a duplicated Relu, a multiplication by 1 and a
// Gemm head.
func cnnBlock(t *testing.T) *ir.Graph {
	b := ir.NewBuilder("block")
	x := b.Input("x", ir.Float32, sh("n", 3, 8, 8))
	bn := func(name string, v *ir.Value, c int64, seed uint64) *ir.Value {
		return b.OpA("BatchNormalization", at(ir.Float("epsilon", 1e-5)), v,
			randConst(b, name+"_gamma", ir.Float32, seed, 0.5, 1.5, c),
			randConst(b, name+"_beta", ir.Float32, seed+1, -0.5, 0.5, c),
			randConst(b, name+"_mean", ir.Float32, seed+2, -0.2, 0.2, c),
			randConst(b, name+"_var", ir.Float32, seed+3, 0.5, 2, c))
	}
	pads := at(ir.Ints("pads", 1, 1, 1, 1))
	c1 := b.OpA("Conv", pads, x, randConst(b, "w1", ir.Float32, 1, -0.5, 0.5, 8, 3, 3, 3), randConst(b, "b1", ir.Float32, 2, -0.1, 0.1, 8))
	r1 := b.Op("Relu", bn("bn1", c1, 8, 10))
	c2 := b.OpA("Conv", pads, r1, randConst(b, "w2", ir.Float32, 3, -0.3, 0.3, 8, 8, 3, 3))
	sum := b.Op("Add", bn("bn2", c2, 8, 20), r1)
	r2 := b.Op("Relu", sum)
	r2b := b.Op("Relu", sum) // duplicate: cse
	avg := b.Op("Mul", b.Op("GlobalAveragePool", b.Op("Add", r2, r2b)), f32s(b, 1))
	ch := b.OpA("Gather", at(ir.Int("axis", 0)), b.Op("Shape", avg), i64(b, 1)) // 8, statically
	flat := b.Op("Reshape", avg, b.OpA("Concat", at(ir.Int("axis", 0)), i64(b, -1), ch))
	drop := b.OpN("Dropout", 1, nil, flat, f32s(b, 0.1))[0]
	logits := b.OpA("Gemm", at(ir.Int("transB", 1)), drop,
		randConst(b, "fc_w", ir.Float32, 4, -1, 1, 10, 8), randConst(b, "fc_b", ir.Float32, 5, -1, 1, 10))
	b.Output("logits", b.Op("Identity", logits))
	g, err := b.Build()
	require.NoError(t, err)
	return g
}

// TestPipelineCNNBlock runs the whole pipeline at every level on a small
// CNN: each level computes what -O0 computes, and -O2 folds both batch
// normalizations into their convolutions.
func TestPipelineCNNBlock(t *testing.T) {
	ref0 := cnnBlock(t)
	_, err := Run(ref0, Options{Level: 0, Verify: true})
	require.NoError(t, err)
	for lvl := 1; lvl <= MaxLevel; lvl++ {
		g := cnnBlock(t)
		rep, err := Run(g, Options{Level: lvl, Verify: true, Eval: refEval})
		require.NoError(t, err)
		require.NoError(t, ir.VerifyTyped(g))
		t.Logf("%s", rep)
		require.Equal(t, "logits", g.Outputs[0].Name)
		require.Equal(t, "f32[n,10]", typeOf(g.Outputs[0]))
		for seed := uint64(1); seed <= 3; seed++ {
			in := randomInputs(ref0, seed)
			requireClose(t, runRef(t, ref0, in), runRef(t, g, in), 1e-5)
		}
		byName := map[string]PassResult{}
		for _, p := range rep.Passes {
			byName[p.Name] = p
		}
		require.Equal(t, 3, byName["fold"].Change.Removed, "-O%d: the Reshape target (Shape, Gather, Concat) folds: %v", lvl, byName["fold"].Change)
		require.Positive(t, byName["simplify"].Change.Removed, "-O%d: Dropout and x*1 go", lvl)
		require.Equal(t, 1, byName["cse"].Change.Removed, "-O%d: the duplicate Relu merges", lvl)
		if lvl == 2 {
			require.Equal(t, 4, byName["convbn"].Change.Fused, "both batch norms (Mul + Add each) fold")
			var convs int
			for _, n := range g.Nodes {
				require.NotEqual(t, "BatchNormalization", n.Op)
				if n.Op == "Conv" || n.Op == "FusedConv" {
					convs++
				}
			}
			require.Equal(t, 2, convs)
		}
	}
}
