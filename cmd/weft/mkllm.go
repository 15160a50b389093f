package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
)

// llmPresets are the geometries `weft mkllm` knows by name.
var llmPresets = map[string]llama.Config{
	"llama-110m": llama.Llama110M,
	"tiny": {Dim: 64, HiddenDim: 128, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 512, MaxSeq: 256,
		RopeTheta: 10000, NormEps: 1e-5},
	// Qwen2-0.5B's published geometry (its config.json): hidden 896, 24
	// layers, 14 query and 2 key/value heads, intermediate 4864, vocabulary
	// 151936, RoPE base 1e6, RMSNorm epsilon 1e-6, tied embeddings; the
	// recorded context is 4096 (the model's own is 32768).
	"qwen2-0.5b": {Dim: 896, HiddenDim: 4864, Layers: 24, Heads: 14, KVHeads: 2, Vocab: 151936,
		MaxSeq: 4096, RopeTheta: 1e6, NormEps: 1e-6, TiedEmbeddings: true},
}

// presetArch is the architecture a preset implies when --arch is not given.
var presetArch = map[string]string{"qwen2-0.5b": llama.ArchQwen2}

func newMkLLMCmd() *cobra.Command {
	var (
		out, preset, dtype, arch string
		seed                     uint64
		tied                     bool
		ctxLen                   int
	)
	cmd := &cobra.Command{
		Use:   "mkllm -o OUT.gguf [--preset llama-110m|qwen2-0.5b|tiny] [--type f16] [--arch llama|qwen2] [--seed S]",
		Short: "write a GGUF language model with random weights (for tests and benchmarks)",
		Long: "Write a GGUF model of a preset geometry whose weights are uniform random\n" +
			"numbers from --seed (the same flags give the same file), laid out as\n" +
			"llama.cpp writes them (arch llama, or qwen2 with NeoX RoPE and q/k/v\n" +
			"biases), matrices in --type (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1,\n" +
			"q4_k or q6_k), with a synthetic SentencePiece vocabulary. Its output is\n" +
			"noise: it measures speed and memory, not quality.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("mkllm: -o OUT.gguf is required")
			}
			cfg, ok := llmPresets[preset]
			if !ok {
				return fmt.Errorf("mkllm: unknown preset %q (llama-110m, qwen2-0.5b, tiny)", preset)
			}
			if a, ok := presetArch[preset]; ok && !cmd.Flags().Changed("arch") {
				arch = a
			}
			dt, err := ir.ParseDType(strings.ToLower(dtype))
			if err != nil {
				return fmt.Errorf("mkllm: --type: %w", err)
			}
			switch arch {
			case llama.ArchLlama:
			case llama.ArchQwen2:
				cfg.RopeNeoX, cfg.AttnBias = true, true
			default:
				return fmt.Errorf("mkllm: --arch %q: %w (llama or qwen2)", arch, ir.ErrUnsupported)
			}
			cfg.TiedEmbeddings = cfg.TiedEmbeddings || tied
			if ctxLen > 0 {
				cfg.MaxSeq = ctxLen
			}
			if err := llama.GenerateGGUF(cfg, dt, seed, out); err != nil {
				return fmt.Errorf("mkllm: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "weft: wrote %s: %s %s, dim %d, %d layers, vocab %d, %v weights, seed %d\n",
				out, preset, arch, cfg.Dim, cfg.Layers, cfg.Vocab, dt, seed)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "the GGUF file to write")
	f.StringVar(&preset, "preset", "llama-110m", "geometry: llama-110m (dim 768, 12 layers, 12 heads, ffn 2048, vocab 32000), qwen2-0.5b (dim 896, 24 layers, 14/2 heads, ffn 4864, vocab 151936, tied; implies --arch qwen2) or tiny")
	f.StringVar(&dtype, "type", "f16", "weight type of the matrices")
	f.StringVar(&arch, "arch", "llama", "architecture conventions: llama or qwen2")
	f.Uint64Var(&seed, "seed", 1, "random seed")
	f.BoolVar(&tied, "tied", false, "tie the classifier to the token embeddings (no output.weight)")
	f.IntVar(&ctxLen, "ctx", 0, "context length to record (0: the preset's)")
	return cmd
}
