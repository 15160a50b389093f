package llama

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/ir"
)

var ggufTiny = Config{Dim: 64, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 270, MaxSeq: 32, RopeTheta: 10000, NormEps: 1e-5}

// reparse serializes w and parses it back.
func reparse(t *testing.T, w *gguf.Writer) *gguf.File {
	t.Helper()
	b, err := w.Bytes()
	require.NoError(t, err)
	f, err := gguf.Parse(b)
	require.NoError(t, err)
	return f
}

// TestFromGGUFLayout: keys map to the config, matrices are transposed to
// [in, out] (f32) or kept [out, in] (q8_0), a missing output is tied.
func TestFromGGUFLayout(t *testing.T) {
	w, err := RandomGGUF(ggufTiny, ir.Float32, 1)
	require.NoError(t, err)
	f := reparse(t, w)
	cfg, wt, err := FromGGUF(f)
	require.NoError(t, err)
	require.Equal(t, ggufTiny, cfg)
	raw, err := f.Tensor("blk.1.attn_k.weight") // [out 32, in 64]
	require.NoError(t, err)
	require.Equal(t, []int64{32, 64}, raw.Shape)
	require.Equal(t, []int64{64, 32}, wt.Layers[1].Wk.Shape)
	require.Equal(t, raw.Float32s()[5*64+17], wt.Layers[1].Wk.Float32s()[17*32+5], "Wk[in 17][out 5] = W[out 5][in 17]")

	cfgT := ggufTiny
	cfgT.TiedEmbeddings = true
	w, err = RandomGGUF(cfgT, ir.Q8_0, 1)
	require.NoError(t, err)
	f = reparse(t, w)
	cfg, wt, err = FromGGUF(f)
	require.NoError(t, err)
	require.True(t, cfg.TiedEmbeddings)
	emb, err := f.Tensor("token_embd.weight")
	require.NoError(t, err)
	require.Equal(t, ir.Q8_0, wt.Output.DType)
	require.Equal(t, []int64{270, 64}, wt.Output.Shape)
	require.Equal(t, &emb.Data[0], &wt.Output.Data[0], "the tied classifier shares the file's bytes")
	require.Equal(t, ir.Q8_0, wt.Embed.DType, "the embedding stays as stored")
	require.Equal(t, &emb.Data[0], &wt.Embed.Data[0], "the embedding shares the file's bytes")
	q, err := f.Tensor("blk.0.ffn_down.weight")
	require.NoError(t, err)
	require.Equal(t, &q.Data[0], &wt.Layers[0].W2.Data[0], "q8_0 matrices are zero-copy")
}

// TestFromGGUFKeys: optional keys, rope scaling, rope_freqs.
func TestFromGGUFKeys(t *testing.T) {
	w, err := RandomGGUF(ggufTiny, ir.Float32, 1)
	require.NoError(t, err)
	require.NoError(t, w.Set("llama.rope.scaling.type", "linear"))
	require.NoError(t, w.Set("llama.rope.scaling.factor", float32(4)))
	require.NoError(t, w.Set("llama.rope.dimension_count", uint32(8)))
	ff := ir.FromFloat32([]int64{4}, []float32{1, 2, 4, 8})
	require.NoError(t, w.AddTensor("rope_freqs.weight", ff))
	cfg, _, err := FromGGUF(reparse(t, w))
	require.NoError(t, err)
	require.Equal(t, 4.0, cfg.RopeScale)
	require.Equal(t, 8, cfg.RopeDim)
	require.Equal(t, []float32{1, 2, 4, 8}, cfg.RopeFreqFactors)
	c, s := ropeCaches(3, 8, 10000, 4, cfg.RopeFreqFactors)
	// pair 1 at position 2: angle = 2/4 · 10000^(-2/8) / 2 = 0.025.
	require.InDelta(t, 0.99968751, c.Float32s()[2*4+1], 1e-6)
	require.InDelta(t, 0.02499740, s.Float32s()[2*4+1], 1e-6)
}

func TestFromGGUFErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(w *gguf.Writer)
		want string
	}{
		{"arch", func(w *gguf.Writer) { w.Set("general.architecture", "gpt2") }, `unsupported architecture "gpt2"`},
		{"no arch", func(w *gguf.Writer) { w.Set("general.architecture", "") }, "no general.architecture"},
		{"no eps", func(w *gguf.Writer) { w.Set("llama.attention.layer_norm_rms_epsilon", "x") }, "want a float"},
		{"heads", func(w *gguf.Writer) { w.Set("llama.attention.head_count", uint32(5)) }, "not a multiple of heads 5"},
		{"yarn", func(w *gguf.Writer) {
			w.Set("llama.rope.scaling.type", "yarn")
			w.Set("llama.rope.scaling.factor", float32(2))
		}, `unsupported rope scaling "yarn"`},
		{"vocab", func(w *gguf.Writer) { w.Set("llama.vocab_size", uint32(100)) }, "vocab_size = 100"},
		{"missing", nil, `tensor "blk.1.ffn_up.weight" is missing`},
		{"shape", func(w *gguf.Writer) { w.AddTensor("blk.1.ffn_up.weight", ir.NewTensor(ir.Float32, []int64{64, 96})) }, `"blk.1.ffn_up.weight" has shape [64 96], want [out, in] = [96 64]`},
		{"dtype", func(w *gguf.Writer) { w.AddTensor("blk.1.ffn_up.weight", ir.NewTensor(ir.Int32, []int64{96, 64})) }, "unsupported dtype i32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ggufTiny
			w, err := RandomGGUF(cfg, ir.Float32, 1)
			require.NoError(t, err)
			// Rebuild without blk.1.ffn_up.weight for the tensor cases.
			f := reparse(t, w)
			nw := gguf.NewWriter()
			for _, kv := range f.Metadata {
				require.NoError(t, nw.Set(kv.Key, kv.Value))
			}
			for _, info := range f.Tensors {
				if info.Name == "blk.1.ffn_up.weight" && (tc.edit == nil || tc.name == "shape" || tc.name == "dtype") {
					continue
				}
				x, err := f.Tensor(info.Name)
				require.NoError(t, err)
				require.NoError(t, nw.AddTensor(info.Name, x))
			}
			if tc.edit != nil {
				tc.edit(nw)
			}
			_, _, err = FromGGUF(reparse(t, nw))
			require.ErrorContains(t, err, tc.want)
		})
	}
}
