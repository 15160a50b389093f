package llama

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
)

func tinyModel(t *testing.T) (Config, *Weights) {
	t.Helper()
	cfg, w, err := ParseLlama2C(checkpoint(tiny, tinyFloats))
	require.NoError(t, err)
	return cfg, w
}

func TestBuildInterface(t *testing.T) {
	cfg, w := tinyModel(t)
	g, err := Build(cfg, w, Mode{Seq: 2, Capacity: 3})
	require.NoError(t, err)
	require.NoError(t, passes.InferShapes(g))
	var ins, outs []string
	for _, v := range g.Inputs {
		ins = append(ins, v.Name+" "+v.DType.String()+"["+v.Shape.String()+"]")
	}
	for _, v := range g.Outputs {
		outs = append(outs, v.Name+" "+v.DType.String()+"["+v.Shape.String()+"]")
	}
	require.Equal(t, []string{"tokens i64[1,2]", "positions i64[1,2]",
		"cache_key.0 f32[1,1,3,2]", "cache_value.0 f32[1,1,3,2]", "cache_key.1 f32[1,1,3,2]", "cache_value.1 f32[1,1,3,2]"}, ins)
	require.Equal(t, []string{"logits f32[1,2,5]"}, outs)
	ops := map[string]int{}
	for _, n := range g.Nodes {
		ops[n.Op]++
	}
	require.Equal(t, 4, ops["RotaryEmbedding"])
	require.Equal(t, 4, ops["KVCacheUpdate"])
	require.Equal(t, 2, ops["KVAttention"])

	// LastLogits: one more input, and the logits of one token.
	g, err = Build(cfg, w, Mode{Seq: 2, Capacity: 3, LastLogits: true})
	require.NoError(t, err)
	require.NoError(t, passes.InferShapes(g))
	require.Equal(t, InputLogitsIndex, g.Inputs[len(g.Inputs)-1].Name)
	require.Equal(t, "f32[1,1,5]", g.Outputs[0].DType.String()+"["+g.Outputs[0].Shape.String()+"]")
	require.Equal(t, 5, ops["RMSNormalization"])
}

func TestBuildErrors(t *testing.T) {
	cfg, w := tinyModel(t)
	for _, tc := range []struct {
		name string
		mode Mode
		want string
	}{
		{"zero seq", Mode{Seq: 0, Capacity: 3}, "seq 0"},
		{"seq over capacity", Mode{Seq: 3, Capacity: 2}, "capacity 2"},
		{"capacity over max", Mode{Seq: 1, Capacity: 4}, "max_seq 3"},
		{"q8_0 cache, head size 2", Mode{Seq: 1, Capacity: 3, KVType: ir.Q8_0}, "unsupported"},
		{"i8 cache", Mode{Seq: 1, Capacity: 3, KVType: ir.Int8}, "want f32, f16 or q8_0"},
	} {
		_, err := Build(cfg, w, tc.mode)
		require.ErrorContains(t, err, tc.want, tc.name)
	}
	bad := *w
	bad.Layers = append([]Layer(nil), w.Layers...)
	bad.Layers[1].Wk = ir.NewTensor(ir.Float32, []int64{2, 4})
	_, err := Build(cfg, &bad, Mode{Seq: 1, Capacity: 3})
	require.ErrorContains(t, err, "layer 1 wk has shape [2 4], want [4 2]")
	bad.Layers = bad.Layers[:1]
	bad.Output = nil
	cfg.TiedEmbeddings = false
	_, err = Build(cfg, &bad, Mode{Seq: 1, Capacity: 3})
	require.ErrorContains(t, err, "1 layers of weights, config says 2")
	require.ErrorContains(t, err, "classifier is missing")
	cfg.NormEps = 0
	_, err = Build(cfg, w, Mode{Seq: 1, Capacity: 3})
	require.ErrorContains(t, err, "epsilon")
}

// TestRopeCaches: row p, column i holds cos/sin of p · theta^(-2i/headDim).
func TestRopeCaches(t *testing.T) {
	c, s := RopeCaches(3, 4, 100)
	require.Equal(t, []int64{3, 2}, c.Shape)
	// theta^(-2/4) = 0.1: angles row 2 = [2, 0.2].
	require.InDeltaSlice(t, []float32{1, 1, 0.5403023, 0.9950042, -0.4161468, 0.9800666}, c.Float32s(), 1e-6)
	require.InDeltaSlice(t, []float32{0, 0, 0.84147098, 0.09983342, 0.90929743, 0.19866933}, s.Float32s(), 1e-6)
}

// Graphs built from tied weights share one transposed classifier (so the
// backend packs it once); a different embedding table gets its own.
func TestBuildSharesTiedClassifier(t *testing.T) {
	cfg, w0 := tinyModel(t)
	cfg.TiedEmbeddings = true
	w := &Weights{Embed: w0.Embed, Layers: w0.Layers, FinalNorm: w0.FinalNorm} // no Output: tied
	classifier := func(w *Weights, mode Mode) *ir.Tensor {
		g, err := Build(cfg, w, mode)
		require.NoError(t, err)
		for _, c := range g.Consts {
			if c.Name == "output.weight" {
				return c.Const
			}
		}
		t.Fatal("no output.weight constant")
		return nil
	}
	prefill := classifier(w, Mode{Seq: 2, Capacity: 3})
	decode := classifier(w, Mode{Seq: 1, Capacity: 3})
	require.Same(t, prefill, decode)
	require.Equal(t, Transpose2D(w.Embed).Data, prefill.Data)

	other := *w
	other.Embed = ir.NewTensor(ir.Float32, w.Embed.Shape)
	copy(other.Embed.Data, w.Embed.Data)
	require.NotSame(t, prefill, classifier(&other, Mode{Seq: 1, Capacity: 3}))
}
