package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends/cpu"
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
	f.IntVar(&lf.prefill, "prefill", 128, "language models: prompt tokens to prefill (in chunks of at most 128)")
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
	// DecodeBestTokS is the timed generation's fastest decode step.
	DecodeBestTokS float64 `json:"decode_best_tok_s,omitempty"`
	PeakRSS        int64   `json:"peak_rss_bytes,omitempty"`
	// KVBytes is the KV cache's memory at the benchmark's capacity,
	// TouchedBytes the model file's pages resident after the run (the
	// weights it touched: every matrix, plus the embedding rows and
	// metadata it read; Linux only), and RSSBudget the bound on the peak
	// RSS: the touched weights (the weights a token reads where
	// TouchedBytes is not measured), plus the KV cache, plus 64 MiB.
	KVBytes      int64 `json:"kv_cache_bytes"`
	TouchedBytes int64 `json:"touched_weight_bytes,omitempty"`
	// CopiedBytes is the part of TouchedBytes that the CPU backend holds
	// as copies of weights (cpu.WeightCopyBytes) instead of file pages.
	CopiedBytes int64 `json:"copied_weight_bytes,omitempty"`
	RSSBudget   int64 `json:"rss_budget_bytes"`
	// ReadReader is the read probe's reader (membw's fastest on this
	// machine, chosen by ReadAloneGBs's measurement); pairedStats, the
	// read bandwidth and decode's share of it measured together after the
	// prefill prompt.
	ReadReader string `json:"read_bandwidth_reader,omitempty"`
	pairedStats
	// ReadAloneGBs is the fastest reader's median pass measured on its
	// own before the paired generations (membw.MeasureWith, on the buffer
	// the interleaved passes then read: every reader, one after another),
	// and ReadPlainGBs the plain Go loop's figure there (a STREAM-like
	// read without vector loads or prefetch), for comparison with figures
	// measured that way.
	ReadAloneGBs float64 `json:"read_bandwidth_alone_gb_s,omitempty"`
	ReadPlainGBs float64 `json:"read_bandwidth_plain_gb_s,omitempty"`
	// FromEmpty is decode from an empty context, as llama-bench's tg test
	// times it (absent where the bench's decode starts there already:
	// --prefill 1).
	FromEmpty *emptyBench `json:"from_empty_context,omitempty"`
	// Speculative is the same generation with a draft (--draft).
	Speculative *specBenchResult `json:"speculative,omitempty"`
}

// pairedStats is one generation's decode measured against the read probe
// in the same moments.
//
// A generation runs one pass of the streaming read probe (the result's
// ReadReader) before its first decode step, after every ReadEvery steps
// and after its last, outside the timed steps. ReadGBs is those passes'
// median rate (a mean would follow the pass the host stalls now and then:
// single passes of 3–16 GB/s among 28–39 took one run's mean to 5) and
// PairedDecodeTokS the generation's decode rate over its PairedSteps steps
// that are not among the first settleSteps after a pass (a pass streams
// 256 MB through the caches and lets the workers park, so the steps after
// it measure the probe, not decode). DecodeBWFrac is decode's weight
// traffic as a share of the read bandwidth, stretch by stretch of steps
// against the passes on either side (see StretchFracs), so that the two
// are compared over the same few milliseconds of the machine's life; on a
// shared host the memory system's state moves by tens of percent between
// seconds.
type pairedStats struct {
	ReadGBs    float64 `json:"read_bandwidth_gb_s,omitempty"`
	ReadPasses int     `json:"read_bandwidth_passes,omitempty"`
	ReadEvery  int     `json:"read_bandwidth_every_steps,omitempty"`
	// SettleSteps is how many steps after each pass are left out
	// (settleSteps).
	SettleSteps      int     `json:"paired_settle_steps,omitempty"`
	PairedSteps      int     `json:"paired_decode_steps,omitempty"`
	PairedDecodeTokS float64 `json:"paired_decode_tok_s,omitempty"`
	DecodeBWFrac     float64 `json:"decode_bandwidth_fraction,omitempty"`
	// StretchFracs is each stretch's share (its steps' weight traffic
	// against the faster of the passes before and after it), in
	// generation order; DecodeBWFrac is their median (the lower middle
	// one of an even count).
	StretchFracs []float64 `json:"decode_bandwidth_fraction_stretches,omitempty"`
	// KVReadBytes is the KV cache bytes a counted decode step reads on
	// average: the keys and values of every position up to its own, each
	// KV head's once. DecodeTrafficFrac is the median stretch's weight and
	// KV traffic against its pass, as DecodeBWFrac is its weights'
	// (TrafficFracs, stretch by stretch): what decode moves in all, of
	// which DecodeBWFrac counts the weights only. At 128–192 positions of
	// Llama-110M the KV rows are a tenth of the weights' bytes, and a step
	// cannot take less time than both need.
	KVReadBytes       int64     `json:"decode_kv_read_bytes_per_token,omitempty"`
	DecodeTrafficFrac float64   `json:"decode_traffic_fraction,omitempty"`
	TrafficFracs      []float64 `json:"decode_traffic_fraction_stretches,omitempty"`
	// ReadBestGBs is the fastest of the passes and PairedDecodeBestTokS
	// the generation's fastest step; DecodeBestBWFrac is that step's
	// weight traffic as a share of ReadBestGBs, best against best (on a
	// busy machine both best cases are closer to the hardware than the
	// typical ones).
	ReadBestGBs          float64 `json:"read_bandwidth_best_gb_s,omitempty"`
	PairedDecodeBestTokS float64 `json:"paired_decode_best_tok_s,omitempty"`
	DecodeBestBWFrac     float64 `json:"decode_best_bandwidth_fraction,omitempty"`
}

// emptyBench is decode from an empty context, as llama-bench's tg test
// (and the peer figures quoted from it) measures it: a one-token prompt,
// then DecodeTokens steps, each at a position below DecodeTokens + 1, so
// that the steps read few KV cache rows. DecodeTokS is a timed greedy
// generation's decode rate; pairedStats, a second generation's against
// the read probe, as the result's are after the prefill prompt.
type emptyBench struct {
	DecodeTokens int     `json:"decode_tokens"`
	DecodeTokS   float64 `json:"decode_tok_s"`
	pairedStats
}

// benchLLM loads the model with a prefill graph of lf.prefill tokens (at
// most maxPrefillSeq: a longer prompt runs in chunks), runs one untimed
// warm-up generation (2 tokens), then times a greedy generation: the
// prefill (TTFT, prefill tok/s) and lf.decode single-token steps (decode
// tok/s). The prompt is deterministic token ids. A second timed
// generation decodes as many steps from the prompt's first token alone
// (decode from an empty context, FromEmpty). The read bandwidth is then
// measured with the same threads, interleaved with the decode steps of one
// more generation of each kind (pairedBandwidth).
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
	// Decode from an empty context (llama-bench's tg): the prompt's first
	// token, then the same steps.
	var empty *emptyBench
	if lf.prefill > 1 {
		em, err := lm.model.Generate(ctx, prompt[:1], llm.Options{MaxTokens: lf.decode + 1}, func(int32) bool { return true })
		if err != nil {
			return nil, fmt.Errorf("bench: from an empty context: %w", err)
		}
		empty = &emptyBench{DecodeTokens: em.DecodeSteps, DecodeTokS: em.DecodeTokensPerSec()}
	}
	var spec *specBenchResult
	if dm != nil {
		if spec, err = benchSpeculative(ctx, lm, dm, lf.draft, prompt, plain, met.DecodeTokensPerSec()); err != nil {
			return nil, err
		}
	}
	r := &llmBenchResult{Model: path, Version: weftVersion(), OptLevel: o.OptLevel, PrefillTokens: lf.prefill,
		DecodeTokens: met.DecodeSteps, Capacity: capacity, KVType: kvT.String(), LoadMs: ms(lm.load), TTFTMs: ms(met.TimeToFirst),
		PrefillTokS: met.PrefillTokensPerSec(), DecodeTokS: met.DecodeTokensPerSec(), WeightBytes: lm.weights, FromEmpty: empty, Speculative: spec}
	r.DecodeGBs = float64(r.WeightBytes) * r.DecodeTokS / 1e9
	if b, ok := peakRSS(); ok {
		r.PeakRSS = b
	}
	r.KVBytes = int64(lm.model.Capacity) * kvRowBytes(lm.model)
	touched := r.WeightBytes
	if b, ok := touchedFileBytes(path); ok && b > 0 {
		// Weights the CPU backend copied (to huge pages; Q4_0 repacked)
		// live in memory of their own, and their file pages were
		// released: they count as touched.
		r.CopiedBytes = cpu.WeightCopyBytes()
		b += r.CopiedBytes
		r.TouchedBytes, touched = b, b
	}
	r.RSSBudget = touched + r.KVBytes + 64<<20
	if met.DecodeFastest > 0 {
		r.DecodeBestTokS = 1 / met.DecodeFastest.Seconds()
	}
	// After the peak RSS is read: the probe's buffer is not the model's.
	threads := o.Threads
	if threads <= 0 {
		threads = goruntime.GOMAXPROCS(0)
	}
	if err := pairedBandwidth(ctx, r, lm, prompt, lf.decode, threads); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return r, nil
}

// readSegments is how many stretches of decode steps pairedBandwidth
// separates with probe passes.
const readSegments = 8

// settleSteps is how many decode steps after a probe pass pairedBandwidth
// leaves out of its stretch: the steps the pass still slows. Measured
// with a pass every 16 steps (median step time by its place after the
// pass, 8 passes, --prefill 128 --decode 128, Q4_0): Llama-110M at two
// threads 1912, 1255, 1233, 1140, then 1050–1110 µs (another run 2010,
// 1698, 1586, 1503, then 1355–1495); at one thread 2855, 2198, 1928,
// then 1772–1979; Qwen2-0.5B at two threads 6521, 5800, 5501, then
// 5278–5633; at one 10717, 9408, 8644, then 8197–8587. The fourth step is
// still up to 5% slow at times; it is counted.
// The pass leaves the workers parked (the first step wakes them) and the
// caches holding the probe's buffer: on a VM whose two vCPUs sit on two
// dies each die's L3 keeps part of its worker's weights from step to
// step (kernels.Pool.RestartStream), and that takes two steps to build
// up again. Counting the first step only after a pass made the paired
// rate 5–13% slower than the same decode without passes.
const settleSteps = 3

// pairedBandwidth picks the fastest streaming reader (membw.MeasureWith, on
// the buffer its passes then read) and measures decode against it
// (pairedDecode): after prompt into r.pairedStats, and from an empty
// context into r.FromEmpty's where r has one.
func pairedBandwidth(ctx context.Context, r *llmBenchResult, lm *llmModel, prompt []int32, decode, threads int) error {
	probe := membw.NewProber(threads)
	alone := membw.MeasureWith(probe)
	for _, p := range alone {
		if p.Reader == "go" {
			r.ReadPlainGBs = p.GBs
		}
	}
	best := membw.Best(alone)
	r.ReadAloneGBs, r.ReadReader = best.GBs, best.Reader
	reader, ok := membw.ReaderNamed(best.Reader)
	if !ok {
		return fmt.Errorf("read probe: no reader %q", best.Reader)
	}
	weightGB := float64(r.WeightBytes) / 1e9
	if err := pairedDecode(ctx, &r.pairedStats, lm, probe, reader, weightGB, prompt, decode); err != nil {
		return err
	}
	if r.FromEmpty != nil {
		if err := pairedDecode(ctx, &r.FromEmpty.pairedStats, lm, probe, reader, weightGB, prompt[:1], decode); err != nil {
			return fmt.Errorf("from an empty context: %w", err)
		}
	}
	return nil
}

// pairedDecode runs a greedy generation of prompt with decode steps that
// runs one pass of the probe with reader before the first step, after
// every ReadEvery steps and after the last (the passes run in the token
// callback, outside the timed steps), and fills in st: the read bandwidth
// and decode's share of it (weightGB a step).
// The first settleSteps steps after a pass are not counted: the pass has
// just streamed 256 MB through the caches (the weights and KV rows that
// the steps would find there after the previous step are gone) and left
// the pool's workers parked, so those steps measure the probe's
// disturbance, not decode. The others run back to back, as decode does.
//
// Each stretch of steps between two passes is compared with the faster of
// those two passes, and decode's share is the median stretch's: a shared
// host changes state within a generation (its read bandwidth moves by a
// third when its vCPUs move), and a stretch whose passes and steps
// straddle such a change is an outlier the median leaves out, in either
// direction. The faster pass, not the mean: a pass the host disturbs (its
// vCPU descheduled, another guest streaming) reads at a fraction of the
// machine's bandwidth, and against the mean one such pass made a stretch
// read at several times the bandwidth (a make bench run's Qwen2 row had
// shares of 3.2 and 6.0); the faster pass can only lower a share.
func pairedDecode(ctx context.Context, st *pairedStats, lm *llmModel, probe *membw.Prober, reader membw.Reader, weightGB float64, prompt []int32, decode int) error {
	st.ReadEvery = max(settleSteps+1, decode/readSegments) // at least one step of a stretch counts
	st.SettleSteps = settleSteps
	// passes[i] is pass i's time; stretch i holds the counted steps
	// between passes i and i+1.
	type stretch struct {
		steps int
		t     time.Duration
		kv    int64 // KV cache bytes its steps read
	}
	// A decode step at position p reads the keys and values of positions
	// 0..p: kvRow bytes each.
	kvRow := kvRowBytes(lm.model)
	pos := len(prompt) // the first decode step's position
	var passes []time.Duration
	var stretches []stretch
	var fastestStep time.Duration
	emitted := 0
	settle := 0 // steps still to leave out after the last pass
	emit := func(int32) bool {
		if emitted%st.ReadEvery == 0 || emitted == decode {
			// The pool's workers spin for about 120 µs after a step before
			// they park: let them, so the probe has every core.
			time.Sleep(time.Millisecond)
			passes = append(passes, probe.Pass(reader))
			stretches = append(stretches, stretch{})
			settle = settleSteps
		}
		emitted++
		return true
	}
	onStep := func(d time.Duration) {
		pos++
		if settle > 0 {
			settle--
			return
		}
		s := &stretches[len(stretches)-1]
		s.steps++
		s.t += d
		s.kv += int64(pos) * kvRow
		if fastestStep == 0 || d < fastestStep {
			fastestStep = d
		}
	}
	if _, err := lm.model.Generate(ctx, prompt, llm.Options{MaxTokens: decode + 1, OnStep: onStep}, emit); err != nil {
		return fmt.Errorf("generation with read probes: %w", err)
	}
	var stepTime time.Duration
	st.ReadPasses = len(passes)
	sorted := slices.Sorted(slices.Values(passes))
	st.ReadGBs = probe.GBs(sorted[len(sorted)/2])
	st.ReadBestGBs = probe.GBs(sorted[0])
	var kvBytes int64
	for i, s := range stretches {
		if s.steps == 0 || i+1 >= len(passes) {
			continue
		}
		st.PairedSteps += s.steps
		stepTime += s.t
		kvBytes += s.kv
		read := probe.GBs(min(passes[i], passes[i+1]))
		st.StretchFracs = append(st.StretchFracs, weightGB*float64(s.steps)/s.t.Seconds()/read)
		st.TrafficFracs = append(st.TrafficFracs, (weightGB*float64(s.steps)+float64(s.kv)/1e9)/s.t.Seconds()/read)
	}
	if st.PairedSteps == 0 {
		return nil // every step settled after a pass (--decode below settleSteps+1)
	}
	st.PairedDecodeTokS = float64(st.PairedSteps) / stepTime.Seconds()
	st.DecodeBWFrac = median(st.StretchFracs)
	st.KVReadBytes = kvBytes / int64(st.PairedSteps)
	st.DecodeTrafficFrac = median(st.TrafficFracs)
	st.PairedDecodeBestTokS = 1 / fastestStep.Seconds()
	st.DecodeBestBWFrac = weightGB * st.PairedDecodeBestTokS / st.ReadBestGBs
	return nil
}

// kvRowBytes is the KV cache bytes of one position: the keys and values
// of every layer's KV heads.
func kvRowBytes(m *llm.Model) int64 {
	return 2 * int64(m.Layers*m.KVHeads) * m.KVType.Bytes(int64(m.HeadDim))
}

// median is the middle of x (the lower middle one of an even count).
func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	return s[(len(s)-1)/2]
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
			if r.CopiedBytes > 0 {
				what = fmt.Sprintf("touched weights (%.1f MB of them copied)", float64(r.CopiedBytes)/1e6)
			}
		}
		fmt.Fprintf(w, "  peak RSS %.1f MB (bound: %.1f MB of %s + %.1f MB of KV cache + 64 MiB = %.1f MB)\n", float64(r.PeakRSS)/1e6,
			float64(wb)/1e6, what, float64(r.KVBytes)/1e6, float64(r.RSSBudget)/1e6)
	}
	if r.ReadGBs > 0 {
		printPaired(w, &r.pairedStats, r.ReadReader, r.WeightBytes, "  ")
		fmt.Fprintf(w, "  (read alone, same threads: %s median pass %.2f GB/s; a plain Go loop, STREAM-like, %.2f GB/s)\n",
			r.ReadReader, r.ReadAloneGBs, r.ReadPlainGBs)
	}
	if e := r.FromEmpty; e != nil {
		fmt.Fprintf(w, "  from an empty context (llama-bench's tg: a 1-token prompt, then %d steps): decode %.2f tok/s (%.2f GB/s of weights)\n",
			e.DecodeTokens, e.DecodeTokS, float64(r.WeightBytes)*e.DecodeTokS/1e9)
		if e.ReadGBs > 0 {
			printPaired(w, &e.pairedStats, r.ReadReader, r.WeightBytes, "    ")
		}
	}
	return nil
}

// printPaired prints one paired generation's figures (st), each line
// indented by in.
func printPaired(w io.Writer, st *pairedStats, reader string, weightBytes int64, in string) {
	if st.PairedSteps == 0 {
		fmt.Fprintf(w, "%sread bandwidth between decode steps (%d passes of %s) %.2f GB/s; no decode step to compare with (each was among the %d after a pass: --decode %d or more)\n",
			in, st.ReadPasses, reader, st.ReadGBs, settleSteps, settleSteps+1)
		return
	}
	fmt.Fprintf(w, "%sread bandwidth between decode steps (%d passes of %s, one every %d steps) %.2f GB/s; decode in that generation (the %d steps not among the %d after each pass) %.2f tok/s, %.2f GB/s of weights\n",
		in, st.ReadPasses, reader, st.ReadEvery, st.ReadGBs, st.PairedSteps, settleSteps, st.PairedDecodeTokS, float64(weightBytes)*st.PairedDecodeTokS/1e9)
	fr := make([]string, len(st.StretchFracs))
	for i, f := range st.StretchFracs {
		fr[i] = fmt.Sprintf("%.0f%%", 100*f)
	}
	fmt.Fprintf(w, "%sdecode moves weights at %.0f%% of the read bandwidth (median of the stretches between passes: %s)\n",
		in, 100*st.DecodeBWFrac, strings.Join(fr, " "))
	if st.KVReadBytes > 0 {
		fmt.Fprintf(w, "%swith the KV cache its attention reads (%.2f MB a token on average, %.0f%% of the weights' bytes), decode moves %.0f%% of the read bandwidth\n",
			in, float64(st.KVReadBytes)/1e6, 100*float64(st.KVReadBytes)/float64(weightBytes), 100*st.DecodeTrafficFrac)
	}
	fmt.Fprintf(w, "%s(its fastest step %.1f tok/s: %.0f%% of the fastest pass, %.2f GB/s)\n",
		in, st.PairedDecodeBestTokS, 100*st.DecodeBestBWFrac, st.ReadBestGBs)
}
