package tinyllama

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
	"github.com/weftrt/weft/tokenizer"
)

const model = "tinyllama.gguf"

// The hyperparameters train.py was run with (see scripts/train-tiny-llama).
const (
	vocab, dim, layers, heads, kvHeads, ffn, ctx = 1024, 192, 5, 4, 2, 512, 256
	params                                       = 2422848
)

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), path)
}

func TestFile(t *testing.T) {
	st, err := os.Stat(model)
	require.NoError(t, err)
	require.LessOrEqual(t, st.Size(), int64(10_000_000), "the bundled model must stay within 10 MB")

	f, err := gguf.Open(model)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, "llama", f.Architecture())
	for key, want := range map[string]uint32{
		"llama.context_length":            ctx,
		"llama.embedding_length":          dim,
		"llama.block_count":               layers,
		"llama.feed_forward_length":       ffn,
		"llama.attention.head_count":      heads,
		"llama.attention.head_count_kv":   kvHeads,
		"llama.rope.dimension_count":      dim / heads,
		"tokenizer.ggml.bos_token_id":     1,
		"tokenizer.ggml.eos_token_id":     2,
		"tokenizer.ggml.unknown_token_id": 0,
	} {
		got, err := f.Uint32(key)
		require.NoError(t, err, key)
		require.Equal(t, want, got, key)
	}
	for key, want := range map[string]float32{
		"llama.rope.freq_base":                   10000,
		"llama.attention.layer_norm_rms_epsilon": 1e-5,
	} {
		got, err := f.Float32(key)
		require.NoError(t, err, key)
		require.Equal(t, want, got, key)
	}
	m, err := f.String("tokenizer.ggml.model")
	require.NoError(t, err)
	require.Equal(t, "llama", m)
	bos, err := f.Bool("tokenizer.ggml.add_bos_token")
	require.NoError(t, err)
	require.True(t, bos)

	toks, err := f.Strings("tokenizer.ggml.tokens")
	require.NoError(t, err)
	scores, err := f.Float32s("tokenizer.ggml.scores")
	require.NoError(t, err)
	types, err := f.Int32s("tokenizer.ggml.token_type")
	require.NoError(t, err)
	require.Len(t, toks, vocab)
	require.Len(t, scores, vocab)
	require.Len(t, types, vocab)
	require.Equal(t, []string{"<unk>", "<s>", "</s>"}, toks[:3])
	require.Equal(t, []int32{tokenizer.TypeUnknown, tokenizer.TypeControl, tokenizer.TypeControl}, types[:3])
	for b := 0; b < 256; b++ {
		require.Equal(t, tokenizer.TypeByte, types[3+b])
		require.Equal(t, byteToken(byte(b)), toks[3+b])
	}

	// The tensor table: llama.cpp's names, weft (outer-first) shapes, f32.
	want := map[string][]int64{
		"token_embd.weight":  {vocab, dim},
		"output_norm.weight": {dim},
		"output.weight":      {vocab, dim},
	}
	kvDim := int64(kvHeads * dim / heads)
	for l := 0; l < layers; l++ {
		p := "blk." + strconv.Itoa(l) + "."
		want[p+"attn_norm.weight"] = []int64{dim}
		want[p+"attn_q.weight"] = []int64{dim, dim}
		want[p+"attn_k.weight"] = []int64{kvDim, dim}
		want[p+"attn_v.weight"] = []int64{kvDim, dim}
		want[p+"attn_output.weight"] = []int64{dim, dim}
		want[p+"ffn_norm.weight"] = []int64{dim}
		want[p+"ffn_gate.weight"] = []int64{ffn, dim}
		want[p+"ffn_up.weight"] = []int64{ffn, dim}
		want[p+"ffn_down.weight"] = []int64{dim, ffn}
	}
	require.Len(t, f.Tensors, len(want))
	var n int64
	for _, ti := range f.Tensors {
		shape, ok := want[ti.Name]
		require.True(t, ok, "unexpected tensor %q", ti.Name)
		require.Equal(t, shape, ti.Shape, ti.Name)
		require.Equal(t, ir.Float32, ti.Type, ti.Name)
		k := int64(1)
		for _, d := range ti.Shape {
			k *= d
		}
		n += k
	}
	require.EqualValues(t, params, n)

	// The norm weights are trained, not the initial ones.
	w, err := f.Tensor("output_norm.weight")
	require.NoError(t, err)
	ones := 0
	for _, v := range w.Float32s() {
		if v == 1 {
			ones++
		}
	}
	require.Less(t, ones, dim/2)
}

func byteToken(b byte) string {
	const hex = "0123456789ABCDEF"
	return "<0x" + string(hex[b>>4]) + string(hex[b&15]) + ">"
}

// TestTokenizer checks that weft's tokenizer, built from the file's
// metadata, encodes text to the ids the training script's tokenizer gave
// (the ids the model was trained on).
func TestTokenizer(t *testing.T) {
	var fx struct {
		Cases []struct {
			Text string  `json:"text"`
			IDs  []int32 `json:"ids"`
		} `json:"cases"`
	}
	readJSON(t, "tokenize.json", &fx)
	require.NotEmpty(t, fx.Cases)
	v, err := tokenizer.LoadGGUFVocab(model)
	require.NoError(t, err)
	tok, err := tokenizer.New(v)
	require.NoError(t, err)
	for _, c := range fx.Cases {
		got := tok.Encode(c.Text, true, false)
		require.Equal(t, c.IDs, got, "%q", c.Text)
		text, err := tok.Decode(got, false)
		require.NoError(t, err)
		require.Equal(t, c.Text, text)
	}
}

// TestGreedy runs weft's llama graph on the file and checks that greedy
// decoding continues the prompt with the same 32 tokens as the PyTorch
// model did after training.
func TestGreedy(t *testing.T) {
	var fx struct {
		Prompt    string  `json:"prompt"`
		PromptIDs []int32 `json:"prompt_ids"`
		Greedy    []int32 `json:"greedy_ids"`
		Text      string  `json:"greedy_text"`
	}
	readJSON(t, "greedy.json", &fx)
	require.Len(t, fx.Greedy, 32)

	v, err := tokenizer.LoadGGUFVocab(model)
	require.NoError(t, err)
	tok, err := tokenizer.New(v)
	require.NoError(t, err)
	require.Equal(t, fx.PromptIDs, tok.Encode(fx.Prompt, true, false))

	f, err := gguf.Open(model)
	require.NoError(t, err)
	defer f.Close()
	cfg, w, err := llama.FromGGUF(f)
	require.NoError(t, err)
	require.Equal(t, llama.Config{Dim: dim, HiddenDim: ffn, Layers: layers, Heads: heads, KVHeads: kvHeads,
		Vocab: vocab, MaxSeq: ctx, RopeTheta: 10000, NormEps: 1e-5}, cfg)

	for _, kv := range []ir.DType{ir.Float32, ir.Float16} {
		t.Run(kv.String(), func(t *testing.T) {
			g, err := llama.Build(cfg, w, llama.Mode{Seq: 1, Capacity: 64, KVType: kv})
			require.NoError(t, err)
			r, err := weft.New(g, weft.Options{})
			require.NoError(t, err)
			defer r.Close()
			m, err := llm.New(r)
			require.NoError(t, err)
			var got []int32
			_, err = m.Generate(context.Background(), fx.PromptIDs, llm.Options{MaxTokens: len(fx.Greedy)},
				func(id int32) bool { got = append(got, id); return true })
			require.NoError(t, err)
			require.Equal(t, fx.Greedy, got)
			text, err := tok.Decode(append(append([]int32{}, fx.PromptIDs...), got...), false)
			require.NoError(t, err)
			require.Equal(t, fx.Prompt+fx.Text, text)
		})
	}
}
