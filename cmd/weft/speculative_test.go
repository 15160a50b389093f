package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/tokenizer"
)

const tinyLlama = "../../examples/tinyllama/tinyllama.gguf"

// TestGenerateSpeculative: with a draft (the target's first layers, or a
// q8_0 copy of the target), greedy generate prints exactly what it prints
// without one, and reports the acceptance on stderr; sampling with a seed
// reproduces itself.
func TestGenerateSpeculative(t *testing.T) {
	if _, err := os.Stat(tinyLlama); err != nil {
		t.Skip("examples/tinyllama is absent")
	}
	q8 := filepath.Join(t.TempDir(), "q8.gguf")
	code, _, errOut := cli(t, "quantize", tinyLlama, q8, "--type", "q8_0")
	require.Equal(t, 0, code, errOut)
	base := []string{"generate", tinyLlama, "-p", "The meaning of life is", "-n", "40", "--stop", ""}
	code, want, errOut := cli(t, base...)
	require.Equal(t, 0, code, errOut)
	for _, draft := range [][]string{{"--draft-layers", "2", "-k", "3"}, {"--draft", q8, "-k", "5"}, {"--draft", q8, "--draft-p-min", "0.3", "-k", "4"}, {"--draft", q8, "-k", "1"}} {
		code, got, errOut := cli(t, append(base, draft...)...)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, want, got, "draft %v", draft)
		require.Contains(t, errOut, "generated 40 (stop: max tokens)")
		require.Contains(t, errOut, "speculative k="+draft[len(draft)-1]+": accepted ")
		require.Contains(t, errOut, "weft: draft ")
	}
	// Sampling: the same seed, the same text.
	samp := append(base, "--draft", q8, "--temp", "0.8", "--seed", "9")
	code, a, errOut := cli(t, samp...)
	require.Equal(t, 0, code, errOut)
	code, b, errOut := cli(t, samp...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, a, b)
}

// TestSpeculativeFlagErrors: the draft flags' misuse and a draft of
// another vocabulary fail with clear errors.
func TestSpeculativeFlagErrors(t *testing.T) {
	tiny := tinyGGUF(t, "f32")
	other := filepath.Join(t.TempDir(), "other.gguf")
	cfg := llmPresets["tiny"]
	cfg.Vocab = 300
	require.NoError(t, llama.GenerateGGUF(cfg, ir.Float32, 3, other))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--draft-layers", "2"}, "--draft-layers 2: " + tiny + " has 2 layers"},
		{[]string{"--draft-layers", "1", "--draft", tiny}, "give one draft"},
		{[]string{"--draft-layers", "-1"}, "--draft-layers -1"},
		{[]string{"--draft-layers", "1", "-k", "0"}, "-k 0"},
		{[]string{"--draft-layers", "1", "--draft-p-min", "1.5"}, "--draft-p-min 1.5"},
		{[]string{"--draft-layers", "1", "--overflow", "slide"}, "unsupported"},
		{[]string{"--draft", other}, "vocabulary of 300 tokens"},
		{[]string{"--draft", filepath.Join(t.TempDir(), "none.gguf")}, "draft:"},
	} {
		code, _, errOut := cli(t, append([]string{"generate", tiny, "--ids", "-p", "1,5", "-n", "4"}, tc.args...)...)
		require.Equal(t, 1, code, "%v", tc.args)
		require.Contains(t, errOut, tc.want, "%v", tc.args)
	}
}

// TestSameVocab: equal sizes with other token strings are refused.
func TestSameVocab(t *testing.T) {
	mk := func(toks ...string) *tokenizer.Tokenizer {
		tk, err := tokenizer.New(&tokenizer.Vocab{Model: "llama", Tokens: toks, BOS: 1, EOS: 2, UNK: 0, PAD: -1, SEP: -1, CLS: -1})
		require.NoError(t, err)
		return tk
	}
	a := &llmModel{path: "a", cfg: llama.Config{Vocab: 5}, tok: mk("<unk>", "<s>", "</s>", "x", "y")}
	b := &llmModel{path: "b", cfg: llama.Config{Vocab: 5}, tok: mk("<unk>", "<s>", "</s>", "x", "z")}
	require.NoError(t, sameVocab(a, a))
	require.ErrorContains(t, sameVocab(a, b), `token 4 is "z" in the draft, "y" in the target`)
	ids := &llmModel{path: "c", cfg: llama.Config{Vocab: 5}}
	require.NoError(t, sameVocab(a, ids))
}

// TestBenchSpeculative: bench --draft adds the speculative run, with the
// same output as the plain one, to the JSON.
func TestBenchSpeculative(t *testing.T) {
	path := tinyGGUF(t, "f32")
	code, out, errOut := cli(t, "bench", path, "--prefill", "8", "--decode", "12", "--draft-layers", "1", "-k", "3", "--json")
	require.Equal(t, 0, code, errOut)
	var r struct {
		DecodeTokS float64          `json:"decode_tok_s"`
		Spec       *specBenchResult `json:"speculative"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.NotNil(t, r.Spec, out)
	s := r.Spec
	require.True(t, s.SameOutput)
	require.Equal(t, 12, s.DecodeTokens)
	require.Equal(t, 3, s.K)
	require.Greater(t, s.DecodeTokS, 0.0)
	require.Greater(t, s.Speedup, 0.0)
	require.LessOrEqual(t, s.Accepted, s.Proposed)
	require.Equal(t, s.DecodeTokens, s.Accepted+s.TargetPasses)
	code, out, errOut = cli(t, "bench", path, "--prefill", "8", "--decode", "12", "--draft-layers", "1")
	require.Equal(t, 0, code, errOut)
	require.True(t, strings.Contains(out, "speculative, draft ") && strings.Contains(out, "the same tokens"), out)
}
