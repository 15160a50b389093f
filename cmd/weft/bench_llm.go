package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/internal/membw"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
)

// llmBenchFlags are bench's flags for language models (GGUF, llama2.c).
type llmBenchFlags struct {
	prefill, decode, ctx int
	kvType               func() (ir.DType, error)
	draft                *draftFlags
}

// addLLMBenchFlags registers --prefill, --decode and --ctx on bench.
func addLLMBenchFlags(cmd *cobra.Command) *llmBenchFlags {
	lf := &llmBenchFlags{}
	f := cmd.Flags()
	f.IntVar(&lf.prefill, "prefill", 128, "language models: prompt tokens to prefill (in chunks of at most 256)")
	f.IntVar(&lf.decode, "decode", 64, "language models: tokens to decode one at a time after the prefill")
	f.IntVar(&lf.ctx, "ctx", 0, "language models: KV cache capacity (0: prefill + decode + 1)")
	lf.kvType = kvTypeFlag(cmd)
	lf.draft = addDraftFlags(cmd)
	return lf
}

// isLLMPath reports whether bench treats path as a language model.
func isLLMPath(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".gguf" || ext == ".bin"
}

// llmBenchResult is one language-model benchmark.
type llmBenchResult struct {
	Model         string  `json:"model"`
	Version       string  `json:"weft_version"`
	OptLevel      int     `json:"opt_level"`
	PrefillTokens int     `json:"prefill_tokens"`
	DecodeTokens  int     `json:"decode_tokens"`
	Capacity      int     `json:"ctx"`
	KVType        string  `json:"kv_type"`
	LoadMs        float64 `json:"load_ms"`
	TTFTMs        float64 `json:"ttft_ms"`
	PrefillTokS   float64 `json:"prefill_tok_s"`
	DecodeTokS    float64 `json:"decode_tok_s"`
	WeightBytes   int64   `json:"weight_bytes_per_token"`
	DecodeGBs     float64 `json:"decode_weight_gb_s"`
	PeakRSS       int64   `json:"peak_rss_bytes,omitempty"`
	// KVBytes is the KV cache's memory at the benchmark's capacity,
	// TouchedBytes the model file's pages resident after the run (the
	// weights it touched: every matrix, plus the embedding rows and
	// metadata it read; Linux only), and RSSBudget the bound on the peak
	// RSS: the touched weights (the weights a token reads where
	// TouchedBytes is not measured), plus the KV cache, plus 64 MiB.
	KVBytes      int64 `json:"kv_cache_bytes"`
	TouchedBytes int64 `json:"touched_weight_bytes,omitempty"`
	RSSBudget    int64 `json:"rss_budget_bytes"`
	// ReadGBs is the streaming read bandwidth measured in the same run
	// with the same threads (membw's best reader, named by ReadReader), and DecodeBWFrac the share of
	// it that decode's weight traffic reached.
	ReadGBs    float64 `json:"read_bandwidth_gb_s,omitempty"`
	ReadReader string  `json:"read_bandwidth_reader,omitempty"`
	// ReadBestGBs is that reader's fastest pass; DecodeBestBWFrac (the
	// fastest step's share) is of it, best against best, as DecodeBWFrac
	// (the mean rate's share) is of the median pass ReadGBs.
	ReadBestGBs float64 `json:"read_bandwidth_best_gb_s,omitempty"`
	// ReadPlainGBs is the plain Go loop's figure alone (a STREAM-like
	// read without vector loads or prefetch), for comparison with
	// figures measured that way.
	ReadPlainGBs float64 `json:"read_bandwidth_plain_gb_s,omitempty"`
	DecodeBWFrac float64 `json:"decode_bandwidth_fraction,omitempty"`
	// DecodeBestTokS is the fastest single decode step as a rate, and
	// DecodeBestBWFrac its weight traffic as a share of ReadBestGBs (on a
	// busy machine both best cases are closer to the hardware than the
	// typical ones).
	DecodeBestTokS   float64 `json:"decode_best_tok_s,omitempty"`
	DecodeBestBWFrac float64 `json:"decode_best_bandwidth_fraction,omitempty"`
	// Speculative is the same generation with a draft (--draft).
	Speculative *specBenchResult `json:"speculative,omitempty"`
}

// benchLLM loads the model with a prefill graph of lf.prefill tokens (at
// most maxPrefillSeq: a longer prompt runs in chunks), runs one untimed
// warm-up generation (2 tokens), then times a greedy generation: the
// prefill (TTFT, prefill tok/s) and lf.decode single-token steps (decode
// tok/s). The prompt is deterministic token ids. The read bandwidth is
// measured after the generation, with the same threads.
func benchLLM(path string, o weft.Options, lf *llmBenchFlags) (*llmBenchResult, error) {
	if lf.prefill < 1 || lf.decode < 1 {
		return nil, fmt.Errorf("bench: --prefill %d, --decode %d: want at least 1 each", lf.prefill, lf.decode)
	}
	capacity := lf.ctx
	if capacity == 0 {
		capacity = lf.prefill + lf.decode + 1
	}
	if capacity < lf.prefill+lf.decode+1 {
		return nil, fmt.Errorf("bench: --ctx %d holds fewer than prefill + decode + 1 = %d tokens", capacity, lf.prefill+lf.decode+1)
	}
	kvT, err := lf.kvType()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := lf.draft.validate(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	lm, err := loadLLM(path, capacity, capacity, lf.draft.targetSeqs([]int{min(lf.prefill, maxPrefillSeq)}), kvT, o)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer lm.Close()
	var dm *llmModel
	if lf.draft.enabled() {
		if dm, err = lf.draft.load(lm, capacity, []int{lf.prefill}, kvT, o); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		defer dm.Close()
	}
	prompt := make([]int32, lf.prefill)
	x := uint32(12345)
	for i := range prompt {
		x = x*1664525 + 1013904223
		prompt[i] = int32(x>>8) % int32(lm.cfg.Vocab)
	}
	ctx := context.Background()
	var plain []int32
	emit := func(t int32) bool { plain = append(plain, t); return true }
	if _, err := lm.model.Generate(ctx, prompt, llm.Options{MaxTokens: 2}, emit); err != nil {
		return nil, fmt.Errorf("bench: warm-up: %w", err)
	}
	plain = plain[:0]
	met, err := lm.model.Generate(ctx, prompt, llm.Options{MaxTokens: lf.decode + 1}, emit)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var spec *specBenchResult
	if dm != nil {
		if spec, err = benchSpeculative(ctx, lm, dm, lf.draft, prompt, plain, met.DecodeTokensPerSec()); err != nil {
			return nil, err
		}
	}
	r := &llmBenchResult{Model: path, Version: weftVersion(), OptLevel: o.OptLevel, PrefillTokens: lf.prefill,
		DecodeTokens: met.DecodeSteps, Capacity: capacity, KVType: kvT.String(), LoadMs: ms(lm.load), TTFTMs: ms(met.TimeToFirst),
		PrefillTokS: met.PrefillTokensPerSec(), DecodeTokS: met.DecodeTokensPerSec(), WeightBytes: lm.weights, Speculative: spec}
	r.DecodeGBs = float64(r.WeightBytes) * r.DecodeTokS / 1e9
	if b, ok := peakRSS(); ok {
		r.PeakRSS = b
	}
	mm := lm.model
	r.KVBytes = 2 * int64(mm.Layers*mm.KVHeads*mm.Capacity) * mm.KVType.Bytes(int64(mm.HeadDim))
	touched := r.WeightBytes
	if b, ok := touchedFileBytes(path); ok && b > 0 {
		r.TouchedBytes, touched = b, b
	}
	r.RSSBudget = touched + r.KVBytes + 64<<20
	// After the peak RSS is read: the probe's buffer is not the model's.
	threads := o.Threads
	if threads <= 0 {
		threads = goruntime.GOMAXPROCS(0)
	}
	if met.DecodeFastest > 0 {
		r.DecodeBestTokS = 1 / met.DecodeFastest.Seconds()
	}
	probe := membw.Measure(threads)
	for _, p := range probe {
		if p.Reader == "go" {
			r.ReadPlainGBs = p.GBs
		}
	}
	best := membw.Best(probe)
	r.ReadGBs, r.ReadReader, r.ReadBestGBs = best.GBs, best.Reader, best.BestGBs
	if r.ReadGBs > 0 {
		r.DecodeBWFrac = r.DecodeGBs / r.ReadGBs
	}
	if r.ReadBestGBs > 0 {
		r.DecodeBestBWFrac = float64(r.WeightBytes) * r.DecodeBestTokS / 1e9 / r.ReadBestGBs
	}
	return r, nil
}

func printLLMBench(w io.Writer, r *llmBenchResult, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	fmt.Fprintf(w, "%s (-O%d, KV cache %s, load+compile %.0f ms)\n", r.Model, r.OptLevel, r.KVType, r.LoadMs)
	fmt.Fprintf(w, "  prefill %d tokens: %.1f tok/s, time to first token %.1f ms\n", r.PrefillTokens, r.PrefillTokS, r.TTFTMs)
	fmt.Fprintf(w, "  decode  %d tokens: %.2f tok/s (%.1f MB of weights per token: %.2f GB/s)\n", r.DecodeTokens, r.DecodeTokS,
		float64(r.WeightBytes)/1e6, r.DecodeGBs)
	if s := r.Speculative; s != nil {
		same := "the same tokens"
		if !s.SameOutput {
			same = "OTHER tokens than without the draft"
		}
		fmt.Fprintf(w, "  speculative, draft %s, k %d: decode %.2f tok/s (%.2fx), accepted %d of %d draft tokens (%.1f%%), %d target passes (%.2f tokens each), draft %.0f ms, verify %.0f ms; %s\n",
			s.Draft, s.K, s.DecodeTokS, s.Speedup, s.Accepted, s.Proposed, 100*s.AcceptanceRate, s.TargetPasses, s.TokensPerPass, s.DraftMs, s.VerifyMs, same)
	}
	if r.PeakRSS > 0 {
		what, wb := "weights per token", r.WeightBytes
		if r.TouchedBytes > 0 {
			what, wb = "touched weights", r.TouchedBytes
		}
		fmt.Fprintf(w, "  peak RSS %.1f MB (bound: %.1f MB of %s + %.1f MB of KV cache + 64 MiB = %.1f MB)\n", float64(r.PeakRSS)/1e6,
			float64(wb)/1e6, what, float64(r.KVBytes)/1e6, float64(r.RSSBudget)/1e6)
	}
	if r.ReadGBs > 0 {
		fmt.Fprintf(w, "  read bandwidth (same run and threads, fastest reader %s, median pass) %.2f GB/s: decode moves weights at %.0f%% of it\n",
			r.ReadReader, r.ReadGBs, 100*r.DecodeBWFrac)
		fmt.Fprintf(w, "  (fastest step %.1f tok/s: %.0f%% of the reader's fastest pass, %.2f GB/s)\n",
			r.DecodeBestTokS, 100*r.DecodeBestBWFrac, r.ReadBestGBs)
		if r.ReadPlainGBs > 0 {
			fmt.Fprintf(w, "  (a plain Go read loop, STREAM-like, reached %.2f GB/s: decode at %.0f%% of that)\n",
				r.ReadPlainGBs, 100*r.DecodeGBs/r.ReadPlainGBs)
		}
	}
	return nil
}
