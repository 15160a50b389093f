package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
)

func newGenerateCmd() *cobra.Command {
	var (
		n       int
		ids     bool
		prompt  string
		stop    string
		ctxLen  int
		sampler llm.SamplerOptions
		opts    func() weft.Options
	)
	cmd := &cobra.Command{
		Use:   "generate MODEL.bin [-n N] [--ids] [-p IDS] [--temp T] [--top-k K] [--top-p P] [--seed S]",
		Short: "generate tokens with a language model, streamed",
		Long: "Generate with a llama2.c checkpoint (.bin): compile a decode graph (and a\n" +
			"prefill graph for longer prompts), feed the prompt, sample and stream each\n" +
			"token as it comes. These checkpoints carry no tokenizer, so the prompt (-p)\n" +
			"and the output are token ids (--ids, the default and only mode for .bin).\n" +
			"Token ids go to stdout, space-separated; timing metrics go to stderr.\n" +
			"Generation stops after -n tokens, at a stop token (--stop, not printed), or\n" +
			"when the context (--ctx) is full. --temp 0 is greedy decoding.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if ext := strings.ToLower(filepath.Ext(path)); ext != ".bin" {
				return fmt.Errorf("generate %s: %w model type %q (want a llama2.c checkpoint, .bin)", path, ir.ErrUnsupported, ext)
			}
			_ = ids // ids are the only output form for llama2.c checkpoints
			promptIDs, err := parseIDs(prompt)
			if err != nil {
				return fmt.Errorf("generate: -p: %w", err)
			}
			if len(promptIDs) == 0 {
				return fmt.Errorf("generate: -p: the prompt needs at least one token id (1 is BOS)")
			}
			stopIDs, err := parseIDs(stop)
			if err != nil {
				return fmt.Errorf("generate: --stop: %w", err)
			}
			if n < 1 {
				return fmt.Errorf("generate: -n %d: want at least 1 token", n)
			}
			if err := sampler.Validate(); err != nil {
				return fmt.Errorf("generate: %w", err)
			}
			t0 := time.Now()
			cfg, w, err := llama.LoadLlama2C(path)
			if err != nil {
				return err
			}
			capacity := cfg.MaxSeq
			if ctxLen > 0 {
				if ctxLen > cfg.MaxSeq {
					return fmt.Errorf("generate: --ctx %d exceeds the model's context of %d", ctxLen, cfg.MaxSeq)
				}
				capacity = ctxLen
			}
			if len(promptIDs) > capacity {
				return fmt.Errorf("generate: the prompt has %d tokens, the context holds %d", len(promptIDs), capacity)
			}
			seqs := []int{1}
			if len(promptIDs) > 1 {
				b := 2
				for b < len(promptIDs) && b < capacity {
					b *= 2
				}
				seqs = append(seqs, min(b, capacity))
			}
			var runners []llm.Runner
			for _, s := range seqs {
				g, err := llama.Build(cfg, w, llama.Mode{Seq: s, Capacity: capacity})
				if err != nil {
					return fmt.Errorf("generate %s: %w", path, err)
				}
				m, err := weft.New(g, opts())
				if err != nil {
					return fmt.Errorf("generate %s: compile the %d-token graph: %w", path, s, err)
				}
				runners = append(runners, m)
			}
			model, err := llm.New(runners...)
			if err != nil {
				return fmt.Errorf("generate %s: %w", path, err)
			}
			stderr := cmd.ErrOrStderr()
			fmt.Fprintf(stderr, "weft: %s: dim %d, %d layers, %d heads (%d kv), vocab %d, context %d; loaded and compiled in %v\n",
				path, cfg.Dim, cfg.Layers, cfg.Heads, cfg.KVHeads, cfg.Vocab, capacity, time.Since(t0).Round(time.Millisecond))
			ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer cancel()
			out := cmd.OutOrStdout()
			first := true
			met, err := model.Generate(ctx, promptIDs, llm.Options{MaxTokens: n, Stop: stopIDs, Sampler: sampler}, func(tok int32) bool {
				sep := " "
				if first {
					sep, first = "", false
				}
				// Unbuffered: each id appears as soon as it is sampled.
				_, werr := fmt.Fprintf(out, "%s%d", sep, tok)
				return werr == nil
			})
			fmt.Fprintln(out)
			fmt.Fprintf(stderr, "weft: %v\n", met)
			return err
		},
	}
	opts = addOptFlag(cmd)
	f := cmd.Flags()
	f.IntVarP(&n, "tokens", "n", 256, "the most tokens to generate")
	f.BoolVar(&ids, "ids", true, "read and write token ids (the only mode for llama2.c checkpoints)")
	f.StringVarP(&prompt, "prompt", "p", "1", "prompt token ids, comma-separated (1 is BOS)")
	f.StringVar(&stop, "stop", "1,2", "stop token ids, comma-separated (llama2.c: BOS 1 starts a new story, EOS 2); \"\" for none")
	f.IntVar(&ctxLen, "ctx", 0, "KV cache capacity in tokens (0: the model's context length)")
	f.Float64Var(&sampler.Temperature, "temp", 0, "sampling temperature; 0 is greedy")
	f.IntVar(&sampler.TopK, "top-k", 0, "keep the K most likely tokens (0: all)")
	f.Float64Var(&sampler.TopP, "top-p", 0, "nucleus sampling: keep the most likely tokens up to this total probability (0: off)")
	f.Float64Var(&sampler.MinP, "min-p", 0, "keep tokens at least this fraction as likely as the best (0: off)")
	f.Float64Var(&sampler.RepetitionPenalty, "repeat-penalty", 0, "penalize tokens seen in the last --repeat-window tokens (1 or 0: off)")
	f.IntVar(&sampler.RepeatWindow, "repeat-window", 64, "tokens of history the repetition penalty looks at (0: all)")
	f.Uint64Var(&sampler.Seed, "seed", 0, "random seed for sampling")
	return cmd
}

// parseIDs parses comma-separated token ids ("" is none).
func parseIDs(s string) ([]int32, error) {
	var out []int32
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		v, err := strconv.ParseInt(part, 10, 32)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%q is not a token id", part)
		}
		out = append(out, int32(v))
	}
	return out, nil
}
