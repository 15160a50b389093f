package llama

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// Llama110M is the geometry of a ~110M-parameter llama (llama2.c's
// stories110M shape): dim 768, 12 layers, 12 heads, FFN 2048, vocab 32000.
var Llama110M = Config{Dim: 768, HiddenDim: 2048, Layers: 12, Heads: 12, KVHeads: 12, Vocab: 32000,
	MaxSeq: 1024, RopeTheta: 10000, NormEps: 1e-5}

// GenerateGGUF writes RandomGGUF(cfg, dtype, seed) to path.
func GenerateGGUF(cfg Config, dtype ir.DType, seed uint64, path string) error {
	gw, err := RandomGGUF(cfg, dtype, seed)
	if err != nil {
		return err
	}
	if err := gw.WriteFile(path); err != nil {
		return fmt.Errorf("llama: generate: %w", err)
	}
	return nil
}

// RandomGGUF builds a GGUF model of cfg's geometry whose weights are
// uniform random numbers drawn from seed (the same seed, config and dtype
// give the same bytes), written the way llama.cpp's converter writes
// them: arch "llama" (or "qwen2" when cfg.RopeNeoX and cfg.AttnBias are
// set), matrices [out, in] in dtype (f32, f16, bf16, q8_0, q4_0, q4_1,
// q5_0, q5_1, q4_k or q6_k), norms and biases f32, output.weight present unless
// cfg.TiedEmbeddings. It carries a synthetic SentencePiece vocabulary
// (see SyntheticVocab) so that text prompts work. Models like this are for
// tests and benchmarks: their output is noise.
func RandomGGUF(cfg Config, dtype ir.DType, seed uint64) (*gguf.Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case dtype == ir.Float32 || dtype == ir.Float16 || dtype == ir.BFloat16 || dtype == ir.Q4_K || dtype == ir.Q6_K:
	case quantizedMatMul[dtype]:
	default:
		return nil, fmt.Errorf("llama: generate: %w weight type %v", ir.ErrUnsupported, dtype)
	}
	if cfg.RopeNeoX != cfg.AttnBias || cfg.RopeFreqFactors != nil || cfg.RopeScale > 0 {
		return nil, fmt.Errorf("llama: generate: %w: only plain llama (adjacent RoPE pairs, no biases) or qwen2 (NeoX pairs and q/k/v biases) without rope scaling", ir.ErrUnsupported)
	}
	if cfg.Vocab < 261 {
		return nil, fmt.Errorf("llama: generate: vocab %d is below the 261 tokens of the synthetic vocabulary", cfg.Vocab)
	}
	arch := ArchLlama
	if cfg.RopeNeoX {
		arch = ArchQwen2
	}
	gw := gguf.NewWriter()
	set := func(k string, v any) error { return gw.Set(k, v) }
	u32 := func(v int) uint32 { return uint32(v) }
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", arch},
		{"general.name", fmt.Sprintf("weft random %s %dx%d seed %d", arch, cfg.Layers, cfg.Dim, seed)},
		{arch + ".context_length", u32(cfg.MaxSeq)},
		{arch + ".embedding_length", u32(cfg.Dim)},
		{arch + ".block_count", u32(cfg.Layers)},
		{arch + ".feed_forward_length", u32(cfg.HiddenDim)},
		{arch + ".attention.head_count", u32(cfg.Heads)},
		{arch + ".attention.head_count_kv", u32(cfg.KVHeads)},
		{arch + ".rope.freq_base", float32(cfg.RopeTheta)},
		{arch + ".rope.dimension_count", u32(cfg.RotaryDim())},
		{arch + ".attention.layer_norm_rms_epsilon", cfg.NormEps},
	} {
		if err := set(kv.k, kv.v); err != nil {
			return nil, fmt.Errorf("llama: generate: %w", err)
		}
	}
	if err := setSyntheticVocab(gw, cfg.Vocab); err != nil {
		return nil, fmt.Errorf("llama: generate: %w", err)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c6c616d61))
	var err error
	add := func(name string, dt ir.DType, lo, hi float64, shape ...int64) {
		if err != nil {
			return
		}
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(lo + (hi-lo)*rng.Float64())
		}
		t := ir.FromFloat32(shape, x)
		if dt != ir.Float32 {
			if dt.IsQuantized() {
				t, err = quant.Quantize(t, dt)
			} else {
				t, err = convertFloat(t, dt)
			}
			if err != nil {
				err = fmt.Errorf("tensor %s: %w", name, err)
				return
			}
		}
		err = gw.AddTensor(name, t)
	}
	d, h, kv, v := int64(cfg.Dim), int64(cfg.HiddenDim), int64(cfg.KVDim()), int64(cfg.Vocab)
	a, ah := 1/math.Sqrt(float64(d)), 1/math.Sqrt(float64(h))
	add("token_embd.weight", dtype, -1, 1, v, d)
	for l := 0; l < cfg.Layers; l++ {
		p := "blk." + strconv.Itoa(l) + "."
		add(p+"attn_norm.weight", ir.Float32, 0.8, 1.2, d)
		add(p+"attn_q.weight", dtype, -a, a, d, d)
		add(p+"attn_k.weight", dtype, -a, a, kv, d)
		add(p+"attn_v.weight", dtype, -a, a, kv, d)
		if cfg.AttnBias {
			add(p+"attn_q.bias", ir.Float32, -0.1, 0.1, d)
			add(p+"attn_k.bias", ir.Float32, -0.1, 0.1, kv)
			add(p+"attn_v.bias", ir.Float32, -0.1, 0.1, kv)
		}
		add(p+"attn_output.weight", dtype, -a, a, d, d)
		add(p+"ffn_norm.weight", ir.Float32, 0.8, 1.2, d)
		add(p+"ffn_gate.weight", dtype, -a, a, h, d)
		add(p+"ffn_up.weight", dtype, -a, a, h, d)
		add(p+"ffn_down.weight", dtype, -ah, ah, d, h)
	}
	add("output_norm.weight", ir.Float32, 0.8, 1.2, d)
	if !cfg.TiedEmbeddings {
		add("output.weight", dtype, -a, a, v, d)
	}
	if err != nil {
		return nil, fmt.Errorf("llama: generate: %w", err)
	}
	return gw, nil
}

// convertFloat converts an f32 tensor to f16 or bf16 (round to nearest).
func convertFloat(t *ir.Tensor, dt ir.DType) (*ir.Tensor, error) {
	out := ir.NewTensor(dt, t.Shape)
	for i, x := range t.Float32s() {
		out.SetFloat64(i, float64(x))
	}
	return out, nil
}

// SyntheticVocab returns the tokens of the vocabulary GenerateGGUF writes
// for a vocab of n ≥ 261: <unk>, <s>, </s>, the 256 byte tokens <0x00> …
// <0xFF>, the ChatML control tokens <|im_start|> and <|im_end|>, then "▁" +
// each printable ASCII character, each character alone, and fillers
// "▁w<i>" up to n. The file also carries a ChatML chat template.
func SyntheticVocab(n int) (tokens []string, scores []float32, types []int32) {
	tokens = []string{"<unk>", "<s>", "</s>"}
	types = []int32{2, 3, 3}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6)
	}
	tokens = append(tokens, "<|im_start|>", "<|im_end|>")
	types = append(types, 3, 3)
	seen := map[string]bool{}
	push := func(s string) {
		if len(tokens) < n && !seen[s] {
			seen[s] = true
			tokens = append(tokens, s)
			types = append(types, 1)
		}
	}
	for c := byte(' ' + 1); c < 127; c++ {
		push("▁" + string(c))
		push(string(c))
	}
	push("▁")
	for i := 0; len(tokens) < n; i++ {
		push("▁w" + strconv.Itoa(i))
	}
	scores = make([]float32, len(tokens))
	for i := range scores {
		scores[i] = -float32(i)
	}
	return tokens[:n], scores[:n], types[:n]
}

func setSyntheticVocab(gw *gguf.Writer, n int) error {
	toks, scores, types := SyntheticVocab(n)
	for _, kv := range []struct {
		k string
		v any
	}{
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", toks},
		{"tokenizer.ggml.scores", scores},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.unknown_token_id", uint32(0)},
		{"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.ggml.eos_token_id", uint32(2)},
		{"tokenizer.chat_template", chatMLTemplate},
	} {
		if err := gw.Set(kv.k, kv.v); err != nil {
			return err
		}
	}
	return nil
}

// chatMLTemplate is a ChatML chat template (the Jinja form Qwen2 ships).
const chatMLTemplate = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
