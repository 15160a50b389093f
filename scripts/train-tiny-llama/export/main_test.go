package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/npy"
)

// writeRun writes a tiny train.py output directory: model.json and one
// .npy per tensor whose values encode the tensor's index and position.
func writeRun(t *testing.T, c config, skip string) (string, map[string][]float32) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "weights"), 0o755))
	m := model{Config: c, Params: 0}
	for i := range c.Vocab {
		m.Tokens = append(m.Tokens, string(rune('a'+i)))
		m.Scores = append(m.Scores, -float32(i))
		m.TokenType = append(m.TokenType, 1)
	}
	vals := map[string][]float32{}
	for k, tn := range tensorNames(c) {
		n := int64(1)
		for _, d := range tn.shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(k) + float32(i)/1000
		}
		vals[tn.name] = v
		m.Params += n
		if tn.name == skip {
			continue
		}
		require.NoError(t, npy.WriteFile(filepath.Join(dir, "weights", tn.name+".npy"), ir.FromFloat32(tn.shape, v)))
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.json"), b, 0o644))
	return dir, vals
}

var tiny = config{Vocab: 6, Dim: 4, Layers: 2, Heads: 2, KVHeads: 1, FFN: 6, Ctx: 8, Eps: 1e-5, RopeTheta: 10000}

func TestExport(t *testing.T) {
	dir, vals := writeRun(t, tiny, "")
	out := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, export(dir, out, "tiny"))
	f, err := gguf.Open(out)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, "llama", f.Architecture())
	for key, want := range map[string]uint32{
		"llama.embedding_length": 4, "llama.block_count": 2, "llama.feed_forward_length": 6,
		"llama.attention.head_count": 2, "llama.attention.head_count_kv": 1,
		"llama.context_length": 8, "llama.rope.dimension_count": 2, "tokenizer.ggml.eos_token_id": 2,
	} {
		got, err := f.Uint32(key)
		require.NoError(t, err, key)
		require.Equal(t, want, got, key)
	}
	scores, err := f.Float32s("tokenizer.ggml.scores")
	require.NoError(t, err)
	require.Equal(t, []float32{0, -1, -2, -3, -4, -5}, scores)
	require.Len(t, f.Tensors, 2+2*9+1)
	// attn_k is [kv_dim, dim] = [2, 4] in weft order: GGUF ne = [4, 2].
	ti, ok := f.TensorInfo("blk.1.attn_k.weight")
	require.True(t, ok)
	require.Equal(t, []int64{2, 4}, ti.Shape)
	for name, want := range vals {
		got, err := f.Tensor(name)
		require.NoError(t, err, name)
		require.Equal(t, want, got.Float32s(), name)
	}
}

func TestExportErrors(t *testing.T) {
	dir, _ := writeRun(t, tiny, "blk.1.ffn_up.weight")
	err := export(dir, filepath.Join(t.TempDir(), "m.gguf"), "tiny")
	require.ErrorContains(t, err, "blk.1.ffn_up.weight.npy")

	// A weight of the wrong shape names the file and both shapes.
	dir, _ = writeRun(t, tiny, "")
	bad := filepath.Join(dir, "weights", "blk.0.attn_q.weight.npy")
	require.NoError(t, npy.WriteFile(bad, ir.FromFloat32([]int64{4, 2}, make([]float32, 8))))
	err = export(dir, filepath.Join(t.TempDir(), "m.gguf"), "tiny")
	require.ErrorContains(t, err, "blk.0.attn_q.weight.npy")
	require.ErrorContains(t, err, "want float32 [4 4]")

	// An inconsistent config is reported, not written.
	c := tiny
	c.Heads = 3
	dir, _ = writeRun(t, tiny, "")
	m := model{Config: c, Tokens: []string{"a"}, Scores: []float32{0}, TokenType: []int32{1}}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.json"), b, 0o644))
	err = export(dir, filepath.Join(t.TempDir(), "m.gguf"), "tiny")
	require.ErrorContains(t, err, "not a multiple of heads")
	require.ErrorContains(t, err, "vocab 6 but 1 tokens")
}
