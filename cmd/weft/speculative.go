package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
)

// draftFlags are generate's and bench's flags for speculative decoding.
type draftFlags struct {
	path   string // --draft: a draft model file
	layers int    // --draft-layers: the target's first layers as the draft
	k      int    // -k: tokens proposed per round
	minP   float64
}

// addDraftFlags registers --draft, --draft-layers and -k on cmd.
func addDraftFlags(cmd *cobra.Command) *draftFlags {
	d := &draftFlags{}
	f := cmd.Flags()
	f.StringVar(&d.path, "draft", "", "speculative decoding: a smaller draft model (.gguf or .bin) with the target's vocabulary proposes tokens")
	f.IntVar(&d.layers, "draft-layers", 0, "speculative decoding: the draft is the target's own first N layers (its final norm and classifier; no extra weights)")
	f.IntVarP(&d.k, "draft-tokens", "k", 4, "speculative decoding: tokens the draft proposes per round, which the target verifies in one run")
	f.Float64Var(&d.minP, "draft-p-min", 0, "speculative decoding: end a round's proposals when the draft's top token probability is below this (0: always -k)")
	return d
}

// enabled reports whether a draft was asked for.
func (d *draftFlags) enabled() bool { return d.path != "" || d.layers != 0 }

// validate checks the flags against each other.
func (d *draftFlags) validate() error {
	if d.path != "" && d.layers != 0 {
		return fmt.Errorf("--draft and --draft-layers: give one draft")
	}
	if d.layers < 0 {
		return fmt.Errorf("--draft-layers %d: want a positive layer count", d.layers)
	}
	if d.enabled() && (d.k < 1 || d.k > llm.MaxDraftTokens) {
		return fmt.Errorf("-k %d: want 1 to %d draft tokens per round", d.k, llm.MaxDraftTokens)
	}
	if !(d.minP >= 0 && d.minP <= 1) {
		return fmt.Errorf("--draft-p-min %v: want a probability in [0, 1]", d.minP)
	}
	return nil
}

// targetSeqs adds the target's verification graph length (k+1) to seqs.
func (d *draftFlags) targetSeqs(seqs []int) []int {
	if !d.enabled() {
		return seqs
	}
	return append(seqs, d.k+1)
}

// load loads the draft for target: the file --draft (its own context
// length; a draft holding less than the target stops proposing when full)
// or the target's first --draft-layers layers. Both must share the
// target's vocabulary: size, and token strings where both have them.
func (d *draftFlags) load(target *llmModel, expect int, prefill []int, kvType ir.DType, o weft.Options) (*llmModel, error) {
	var dm *llmModel
	var err error
	if d.path != "" {
		if dm, err = loadLLM(d.path, 0, expect, prefill, kvType, o); err != nil {
			return nil, fmt.Errorf("draft: %w", err)
		}
	} else if dm, err = loadFirstLayers(target.path, d.layers, target.capacity, expect, prefill, kvType, o); err != nil {
		return nil, fmt.Errorf("draft: %w", err)
	}
	if err := sameVocab(target, dm); err != nil {
		dm.Close()
		return nil, err
	}
	return dm, nil
}

// loadFirstLayers loads the model at path keeping only its first n layers
// (the final norm and classifier kept), with capacity tokens at most.
func loadFirstLayers(path string, n, capacity, expect int, prefill []int, kvType ir.DType, o weft.Options) (*llmModel, error) {
	t0 := time.Now()
	m := &llmModel{path: fmt.Sprintf("%s (first %d layers)", path, n), capacity: capacity}
	var w *llama.Weights
	var err error
	if strings.ToLower(filepath.Ext(path)) == ".bin" {
		m.cfg, w, err = llama.LoadLlama2C(path)
	} else {
		if m.file, err = gguf.Open(path); err != nil {
			return nil, err
		}
		m.cfg, w, err = llama.FromGGUF(m.file)
		m.file.DropMetadata()
	}
	if err != nil {
		m.Close()
		return nil, err
	}
	if n >= m.cfg.Layers {
		m.Close()
		return nil, fmt.Errorf("--draft-layers %d: %s has %d layers; a draft keeps fewer", n, path, m.cfg.Layers)
	}
	dw := *w
	dw.Layers = w.Layers[:n]
	m.cfg.Layers = n
	m.weights = weightBytes(&dw)
	// The draft only decodes and prefills (Feed): its prefill buckets
	// compute the last token's logits only, as loadLLM's do.
	factory := func(seq, capacity int) (llm.Runner, error) {
		g, err := llama.Build(m.cfg, &dw, llama.Mode{Seq: seq, Capacity: capacity, KVType: kvType, LastLogits: seq >= lastLogitsSeq, Ungrouped: !cpuOnly(o.Target)})
		if err != nil {
			return nil, err
		}
		return weft.New(g, o)
	}
	if m.model, err = llm.NewGrowing(factory, prefill, min(expect, capacity), capacity); err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", m.path, err)
	}
	m.load = time.Since(t0)
	return m, nil
}

// sameVocab checks that the draft can propose the target's tokens.
func sameVocab(target, draft *llmModel) error {
	if target.cfg.Vocab != draft.cfg.Vocab {
		return fmt.Errorf("draft %s has a vocabulary of %d tokens, target %s of %d: speculative decoding needs the same vocabulary",
			draft.path, draft.cfg.Vocab, target.path, target.cfg.Vocab)
	}
	if target.tok == nil || draft.tok == nil {
		return nil // ids only: the sizes agree
	}
	tt, dt := target.tok.Vocab().Tokens, draft.tok.Vocab().Tokens
	for i := range min(len(tt), len(dt)) {
		if tt[i] != dt[i] {
			return fmt.Errorf("draft %s and target %s have different vocabularies: token %d is %q in the draft, %q in the target",
				draft.path, target.path, i, dt[i], tt[i])
		}
	}
	return nil
}

// specBenchResult is the speculative part of `weft bench --draft`: the
// same prompt and token count as the plain run, greedy.
type specBenchResult struct {
	Draft          string  `json:"draft"`
	K              int     `json:"k"`
	DraftMinP      float64 `json:"draft_p_min"`
	DecodeTokens   int     `json:"decode_tokens"`
	DecodeTokS     float64 `json:"decode_tok_s"`
	Proposed       int     `json:"proposed"`
	Accepted       int     `json:"accepted"`
	AcceptanceRate float64 `json:"acceptance_rate"`
	TargetPasses   int     `json:"target_passes"`
	TokensPerPass  float64 `json:"tokens_per_pass"`
	DraftMs        float64 `json:"draft_ms"`
	VerifyMs       float64 `json:"verify_ms"`
	SameOutput     bool    `json:"same_output"`
	Speedup        float64 `json:"speedup"` // decode tok/s over the plain run's
}

// options are the speculative options for a generation of o.
func (d *draftFlags) options(o llm.Options) llm.SpecOptions {
	return llm.SpecOptions{Options: o, K: d.k, DraftMinP: d.minP}
}

// benchSpeculative times a greedy speculative generation of plain's token
// count after prompt and compares its output and decode rate with plain's.
func benchSpeculative(ctx context.Context, target, draft *llmModel, df *draftFlags, prompt, plain []int32, plainTokS float64) (*specBenchResult, error) {
	var got []int32
	emit := func(t int32) bool { got = append(got, t); return true }
	// The warm-up runs the draft's decode and the target's verification
	// graph once each (first runs pay one-time costs).
	opts := df.options(llm.Options{MaxTokens: df.k + 2})
	if _, err := llm.Speculate(ctx, target.model, draft.model, prompt, opts, emit); err != nil {
		return nil, fmt.Errorf("bench: speculative warm-up: %w", err)
	}
	got = got[:0]
	opts.MaxTokens = len(plain)
	met, err := llm.Speculate(ctx, target.model, draft.model, prompt, opts, emit)
	if err != nil {
		return nil, fmt.Errorf("bench: speculative: %w", err)
	}
	r := &specBenchResult{Draft: draft.path, K: df.k, DraftMinP: df.minP, DecodeTokens: max(met.Generated-1, 0), DecodeTokS: met.DecodeTokensPerSec(),
		Proposed: met.Proposed, Accepted: met.Accepted, AcceptanceRate: met.AcceptanceRate(), TargetPasses: met.DecodeSteps,
		TokensPerPass: met.TokensPerPass(), DraftMs: ms(met.DraftTime), VerifyMs: ms(met.VerifyTime),
		SameOutput: fmt.Sprint(got) == fmt.Sprint(plain)}
	if plainTokS > 0 {
		r.Speedup = r.DecodeTokS / plainTokS
	}
	return r, nil
}
