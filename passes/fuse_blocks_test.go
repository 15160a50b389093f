package passes

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// fuseEvalNode evaluates one node with the reference kernels (constant folding),
// as the weft package wires it in.
func fuseEvalNode(n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	env := backends.NewEnv(nil)
	for i, v := range n.Inputs {
		if v != nil && i < len(in) {
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

// fuseRandConst adds a constant of random values in [-s, s].
func fuseRandConst(b *ir.Builder, rng *rand.Rand, name string, s float64, shape ...int64) *ir.Value {
	t := ir.NewTensor(ir.Float32, shape)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, (rng.Float64()*2-1)*s)
	}
	return b.Const(name, t)
}

// bertBlock builds one BERT encoder layer as torch.onnx exports it: linear
// layers as MatMul + Add, heads split by Reshape + Transpose (K transposed
// once more for Q·Kᵀ), the attention chain with an additive mask, decomposed
// LayerNorms and the erf form of GELU.
func bertBlock(b *ir.Builder) {
	const s, e, h, d, ff = 6, 16, 2, 8, 32
	rng := rand.New(rand.NewPCG(7, 7))
	x := b.Input("x", ir.Float32, sh(1, s, e))
	mask := b.Input("mask", ir.Float32, sh(1, 1, 1, s))
	linear := func(name string, v *ir.Value, in, out int64) *ir.Value {
		return b.Op("Add", b.Op("MatMul", v, fuseRandConst(b, rng, name+".w", 0.3, in, out)), fuseRandConst(b, rng, name+".b", 0.1, out))
	}
	heads := func(v *ir.Value) *ir.Value {
		return b.OpA("Transpose", at(ir.Ints("perm", 0, 2, 1, 3)), b.Op("Reshape", v, i64(b, 1, s, h, d)))
	}
	layerNorm := func(name string, v *ir.Value) *ir.Value {
		dv := b.Op("Sub", v, b.Op("ReduceMean", v, i64(b, -1)))
		vr := b.Op("ReduceMean", b.Op("Pow", dv, f32s(b, 2)), i64(b, -1))
		n := b.Op("Div", dv, b.Op("Sqrt", b.Op("Add", vr, f32s(b, 1e-12))))
		return b.Op("Add", b.Op("Mul", n, fuseRandConst(b, rng, name+".g", 1, e)), fuseRandConst(b, rng, name+".b", 0.1, e))
	}
	q := heads(linear("q", x, e, e))
	kt := b.OpA("Transpose", at(ir.Ints("perm", 0, 1, 3, 2)), heads(linear("k", x, e, e)))
	v := heads(linear("v", x, e, e))
	scores := b.Op("Add", b.Op("Div", b.Op("MatMul", q, kt), f32s(b, float32(math.Sqrt(d)))), mask)
	ctx := b.Op("MatMul", b.OpA("Softmax", at(ir.Int("axis", -1)), scores), v)
	ctx = b.Op("Reshape", b.OpA("Transpose", at(ir.Ints("perm", 0, 2, 1, 3)), ctx), i64(b, 1, s, e))
	h1 := layerNorm("ln1", b.Op("Add", linear("o", ctx, e, e), x))
	f := linear("ff1", h1, e, ff)
	gelu := b.Op("Mul", b.Op("Mul", f, b.Op("Add", b.Op("Erf", b.Op("Div", f, f32s(b, 1.4142135))), f32s(b, 1))), f32s(b, 0.5))
	b.Output("y", layerNorm("ln2", b.Op("Add", linear("ff2", gelu, ff, e), h1)))
}

// resnetBlock builds a basic ResNet block with BatchNormalization already
// lowered to Mul + Add by channel.
func resnetBlock(b *ir.Builder) {
	const c = 4
	rng := rand.New(rand.NewPCG(3, 9))
	x := b.Input("x", ir.Float32, sh(1, c, 6, 6))
	convBN := func(name string, v *ir.Value) *ir.Value {
		y := b.OpA("Conv", at(ir.Ints("pads", 1, 1, 1, 1), ir.Ints("kernel_shape", 3, 3)), v,
			fuseRandConst(b, rng, name+".w", 0.3, c, c, 3, 3), fuseRandConst(b, rng, name+".b", 0.1, c))
		return b.Op("Add", b.Op("Mul", y, fuseRandConst(b, rng, name+".scale", 1, c, 1, 1)), fuseRandConst(b, rng, name+".shift", 0.2, c, 1, 1))
	}
	h := b.Op("Relu", convBN("conv1", x))
	b.Output("y", b.Op("Relu", b.Op("Add", convBN("conv2", h), x)))
}

// TestBlocksO2 runs whole blocks through the -O0 and -O2 pipelines: -O2
// must compute the same and have at least 30% fewer nodes.
func TestBlocksO2(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *ir.Builder)
		want  []string // ops that must appear at -O2
	}{
		{"bert", bertBlock, []string{"Attention", "LayerNormalization", "FusedMatMul"}},
		{"resnet", resnetBlock, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o0, o2 := ir.NewBuilder(tc.name), ir.NewBuilder(tc.name)
			tc.build(o0)
			tc.build(o2)
			_, err := Run(o0.G, Options{Level: 0, Verify: true, Eval: fuseEvalNode})
			require.NoError(t, err)
			rep, err := Run(o2.G, Options{Level: 2, Verify: true, Eval: fuseEvalNode})
			require.NoError(t, err)
			require.NoError(t, ir.VerifyTyped(o2.G))
			n0, n2 := countNodes(o0.G), len(o2.G.Nodes)
			t.Logf("%s: %d nodes at -O0, %d at -O2 (%.0f%% fewer): %v\n%s", tc.name, n0, n2, 100*float64(n0-n2)/float64(n0), ops(o2.G), rep)
			require.LessOrEqual(t, float64(n2), 0.7*float64(n0))
			for _, op := range tc.want {
				require.Contains(t, ops(o2.G), op)
			}
			sameOutputs(t, o0.G, o2.G)
		})
	}
}

// BenchmarkPatternsFuseBERT measures the patterns and fuse passes on one
// BERT layer (graph building and inference excluded).
func BenchmarkPatternsFuseBERT(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		bb := ir.NewBuilder("bert")
		bertBlock(bb)
		if err := InferShapes(bb.G); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := RecognizePatterns(bb.G); err != nil {
			b.Fatal(err)
		}
		if _, err := Fuse(bb.G); err != nil {
			b.Fatal(err)
		}
	}
}
