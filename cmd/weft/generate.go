package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
	"github.com/weftrt/weft/tokenizer"
)

func newGenerateCmd() *cobra.Command {
	var (
		n        int
		ids      bool
		prompt   string
		stop     string
		ctxLen   int
		sampler  llm.SamplerOptions
		opts     func() weft.Options
		kvType   func() (ir.DType, error)
		overflow string
		draft    *draftFlags
	)
	cmd := &cobra.Command{
		Use:   "generate MODEL.gguf|MODEL.bin [-p PROMPT] [-n N] [--ids] [--temp T] [--top-k K] [--top-p P] [--seed S]",
		Short: "generate text with a language model, streamed",
		Long: "Generate with a GGUF model (llama or qwen2 architecture) or a llama2.c\n" +
			"checkpoint (.bin): compile a decode graph (and a prefill graph for longer\n" +
			"prompts), feed the prompt, sample and stream each token as it comes.\n" +
			"A GGUF model's own tokenizer encodes the prompt text (-p) and decodes the\n" +
			"output, which streams to stdout as text. With --ids (the only mode for .bin\n" +
			"checkpoints, which carry no tokenizer) the prompt is token ids separated by\n" +
			"commas or spaces (empty: BOS; `weft tokenize` prints such a list) and the\n" +
			"output token ids, space-separated.\n" +
			"Timing metrics (time to first token, prefill and decode tok/s, peak RSS) go\n" +
			"to stderr. Generation stops after -n tokens, at a stop token (--stop; by\n" +
			"default the model's EOS, not printed), or when the context (--ctx) is full\n" +
			"(--overflow stop), or with --overflow slide goes on: the newest half of the\n" +
			"context is prefilled again and older tokens are dropped. --temp 0 is greedy.\n" +
			"The KV cache starts at the pages (256 tokens) the prompt and -n need and\n" +
			"doubles on demand up to --ctx, recompiling the graphs for each size.\n" +
			"--kv-type f16 (the default) halves its memory against f32, q8_0 about\n" +
			"quarters it; the graph writes new entries into the cache in place and\n" +
			"widens it to f32 in registers as attention reads it.\n" +
			"Speculative decoding: with --draft DRAFT (a smaller model with the same\n" +
			"vocabulary) or --draft-layers N (the target's own first N layers) the draft\n" +
			"proposes -k tokens per round (fewer when its top token's probability falls\n" +
			"below --draft-p-min) and the target verifies them in one run;\n" +
			"greedy output is the same as without a draft (the batched and one-token\n" +
			"kernels round each row identically);\n" +
			"sampling follows the same distribution (the speculative sampling rule,\n" +
			"seeded). The acceptance rate, target passes and draft/verify time go to\n" +
			"stderr; `weft bench MODEL --draft ...` compares with plain decoding.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if n < 1 {
				return fmt.Errorf("generate: -n %d: want at least 1 token", n)
			}
			if overflow != "stop" && overflow != "slide" {
				return fmt.Errorf("generate: --overflow %q: want stop or slide", overflow)
			}
			if err := sampler.Validate(); err != nil {
				return fmt.Errorf("generate: %w", err)
			}
			if err := draft.validate(); err != nil {
				return fmt.Errorf("generate: %w", err)
			}
			if draft.enabled() && overflow == "slide" {
				return fmt.Errorf("generate: --overflow slide with a draft: %w (speculative decoding stops when the context is full)", ir.ErrUnsupported)
			}
			ext := strings.ToLower(filepath.Ext(path))
			if ext != ".bin" && ext != ".gguf" {
				return fmt.Errorf("generate %s: %w model type %q (want a GGUF model .gguf or a llama2.c checkpoint .bin)", path, ir.ErrUnsupported, ext)
			}
			isBin := ext == ".bin"
			useIDs := ids || isBin
			var promptIDs []int32
			if useIDs {
				var err error
				if promptIDs, err = parseIDs(prompt); err != nil {
					return fmt.Errorf("generate: -p: %w", err)
				}
				if len(promptIDs) == 0 && isBin {
					promptIDs = []int32{1}
				}
			}
			stopIDs, err := parseIDs(stop)
			if err != nil {
				return fmt.Errorf("generate: --stop: %w", err)
			}
			stopSet := cmd.Flags().Changed("stop")
			if !stopSet && isBin {
				stopIDs = []int32{1, 2}
			}
			// The prefill bucket needs the prompt length: for text, encode
			// with the GGUF's vocabulary first (header only).
			var tok *tokenizer.Tokenizer
			if !useIDs {
				v, err := tokenizer.LoadGGUFVocab(path)
				if err != nil {
					return fmt.Errorf("generate %s: the model's tokenizer: %w (use --ids to give token ids)", path, err)
				}
				if tok, err = tokenizer.New(v); err != nil {
					return fmt.Errorf("generate %s: the model's tokenizer: %w (use --ids to give token ids)", path, err)
				}
				promptIDs = tok.Encode(prompt, true, false)
				if len(promptIDs) == 0 {
					return fmt.Errorf("generate: -p %q encodes to no tokens and the vocabulary adds no BOS: give a prompt", prompt)
				}
				if !stopSet && v.EOS >= 0 {
					stopIDs = []int32{v.EOS}
				}
			} else if len(promptIDs) == 0 {
				return fmt.Errorf("generate: -p: the prompt needs at least one token id")
			}
			var prefill []int
			if len(promptIDs) > 1 {
				prefill = append(prefill, prefillBucket(len(promptIDs), max(ctxLen, len(promptIDs))))
			}
			kvT, err := kvType()
			if err != nil {
				return fmt.Errorf("generate: %w", err)
			}
			lm, err := loadLLM(path, ctxLen, len(promptIDs)+n, draft.targetSeqs(prefill), kvT, opts())
			if err != nil {
				return fmt.Errorf("generate: %w", err)
			}
			defer lm.Close()
			var dm *llmModel
			if draft.enabled() {
				if dm, err = draft.load(lm, len(promptIDs)+n, prefill, kvT, opts()); err != nil {
					return fmt.Errorf("generate: %w", err)
				}
				defer dm.Close()
			}
			if useIDs && !isBin && !stopSet && lm.tok != nil && lm.tok.Vocab().EOS >= 0 {
				stopIDs = []int32{lm.tok.Vocab().EOS}
			}
			if len(promptIDs) > lm.capacity {
				return fmt.Errorf("generate: the prompt has %d tokens, the context holds %d", len(promptIDs), lm.capacity)
			}
			stderr := cmd.ErrOrStderr()
			fmt.Fprintf(stderr, "weft: %s\n", lm.summary())
			if dm != nil {
				fmt.Fprintf(stderr, "weft: draft %s\n", dm.summary())
			}
			ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer cancel()
			out := cmd.OutOrStdout()
			var emit func(int32) bool
			var stream *textStream
			if useIDs {
				first := true
				emit = func(tok int32) bool {
					sep := " "
					if first {
						sep, first = "", false
					}
					// Unbuffered: each id appears as soon as it is sampled.
					_, werr := fmt.Fprintf(out, "%s%d", sep, tok)
					return werr == nil
				}
			} else {
				stream = newTextStream(tok, out, promptIDs)
				emit = func(id int32) bool { return stream.add(id) == nil }
			}
			genOpts := llm.Options{MaxTokens: n, Stop: stopIDs, Sampler: sampler, Slide: overflow == "slide"}
			var met fmt.Stringer
			if dm != nil {
				met, err = llm.Speculate(ctx, lm.model, dm.model, promptIDs, draft.options(genOpts), emit)
			} else {
				met, err = lm.model.Generate(ctx, promptIDs, genOpts, emit)
			}
			if stream != nil {
				stream.flush()
			}
			fmt.Fprintln(out)
			fmt.Fprintf(stderr, "weft: %v%s\n", met, rssNote())
			return err
		},
	}
	opts = addOptFlag(cmd)
	kvType = kvTypeFlag(cmd)
	draft = addDraftFlags(cmd)
	f := cmd.Flags()
	f.IntVarP(&n, "tokens", "n", 256, "the most tokens to generate")
	f.BoolVar(&ids, "ids", false, "read and write token ids (always for llama2.c checkpoints)")
	f.StringVarP(&prompt, "prompt", "p", "", "the prompt: text, or with --ids token ids separated by commas or spaces (empty: BOS)")
	f.StringVar(&stop, "stop", "", "stop token ids, separated by commas or spaces; \"\" for none (default: the model's EOS; llama2.c: 1,2 — BOS starts a new story, EOS 2)")
	f.StringVar(&overflow, "overflow", "stop", "when the context is full: stop, or slide (drop the oldest tokens, re-prefill the newest half)")
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

// parseIDs parses token ids separated by commas and/or white space ("" is
// none), so that `weft tokenize`'s output can be a prompt as it is.
func parseIDs(s string) ([]int32, error) {
	var out []int32
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		v, err := strconv.ParseInt(part, 10, 32)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%q is not a token id", part)
		}
		out = append(out, int32(v))
	}
	return out, nil
}

// rssNote is "; peak RSS N MB" where the platform reports it.
func rssNote() string {
	if b, ok := peakRSS(); ok {
		return fmt.Sprintf("; peak RSS %.1f MB", float64(b)/1e6)
	}
	return ""
}
