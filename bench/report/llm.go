package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// LLMBench is the object `weft bench MODEL.gguf --json` prints (the fields
// this report uses; see cmd/weft/bench_llm.go).
type LLMBench struct {
	PrefillTokens int     `json:"prefill_tokens"`
	DecodeTokens  int     `json:"decode_tokens"`
	Ctx           int     `json:"ctx"`
	KVType        string  `json:"kv_type"`
	LoadMs        float64 `json:"load_ms"`
	TTFTMs        float64 `json:"ttft_ms"`
	PrefillTokS   float64 `json:"prefill_tok_s"`
	DecodeTokS    float64 `json:"decode_tok_s"`
	WeightBytes   int64   `json:"weight_bytes_per_token"`
	// DecodeGBs is decode's weight traffic (WeightBytes × DecodeTokS).
	DecodeGBs float64 `json:"decode_weight_gb_s"`
	PeakRSS   int64   `json:"peak_rss_bytes,omitempty"`
	KVBytes   int64   `json:"kv_cache_bytes"`
	// TouchedBytes is the model file's pages resident after the run (the
	// weights it touched; absent in older results and off Linux), plus
	// CopiedBytes, the weights the CPU backend read from copies of its own
	// (on huge pages; absent in older results).
	TouchedBytes int64 `json:"touched_weight_bytes,omitempty"`
	CopiedBytes  int64 `json:"copied_weight_bytes,omitempty"`
	// RSSBudget is the bound on the peak RSS: the touched weights (or,
	// without TouchedBytes, the weights a token reads) + KV cache + 64 MiB.
	RSSBudget int64 `json:"rss_budget_bytes"`
	// ReadGBs is the streaming read bandwidth `weft bench` measured in the
	// same process with the same threads, in passes interleaved with the
	// decode steps of a second generation (PairedDecodeTokS); the
	// fractions are of it: decode's share of the read over the same
	// moments. ReadAloneGBs is the same reader measured on its own after
	// the generations, ReadPlainGBs the plain Go loop there (both absent
	// in older results, whose ReadGBs is the reader measured alone).
	ReadGBs              float64 `json:"read_bandwidth_gb_s,omitempty"`
	ReadReader           string  `json:"read_bandwidth_reader,omitempty"`
	ReadBestGBs          float64 `json:"read_bandwidth_best_gb_s,omitempty"`
	ReadAloneGBs         float64 `json:"read_bandwidth_alone_gb_s,omitempty"`
	ReadPlainGBs         float64 `json:"read_bandwidth_plain_gb_s,omitempty"`
	PairedDecodeTokS     float64 `json:"paired_decode_tok_s,omitempty"`
	DecodeBWFrac         float64 `json:"decode_bandwidth_fraction,omitempty"`
	DecodeBestTokS       float64 `json:"decode_best_tok_s,omitempty"`
	PairedDecodeBestTokS float64 `json:"paired_decode_best_tok_s,omitempty"`
	DecodeBestBWFrac     float64 `json:"decode_best_bandwidth_fraction,omitempty"`
	// KVReadBytes is the KV cache bytes a decode step of the paired
	// generation read on average, and DecodeTrafficFrac the share of the
	// read that the weights and those KV rows together took (absent in
	// older results).
	KVReadBytes       int64   `json:"decode_kv_read_bytes_per_token,omitempty"`
	DecodeTrafficFrac float64 `json:"decode_traffic_fraction,omitempty"`
	// FromEmpty is decode from an empty context (llama-bench's tg test:
	// a 1-token prompt, then the decode steps), timed and paired with the
	// read probe as above (absent in older results).
	FromEmpty *LLMEmpty `json:"from_empty_context,omitempty"`
}

// LLMEmpty is `weft bench`'s decode from an empty context (the fields this
// report uses).
type LLMEmpty struct {
	DecodeTokS       float64 `json:"decode_tok_s"`
	PairedDecodeTokS float64 `json:"paired_decode_tok_s,omitempty"`
	ReadGBs          float64 `json:"read_bandwidth_gb_s,omitempty"`
	DecodeBWFrac     float64 `json:"decode_bandwidth_fraction,omitempty"`
	KVReadBytes      int64   `json:"decode_kv_read_bytes_per_token,omitempty"`
}

// LLMResult is one language-model benchmark: a `weft mkllm` preset (random
// weights) in one weight type at one thread count. MemoryCheck marks the
// long-context run that checks the peak RSS against its bound; the others
// measure speed. When run.sh repeated the benchmark (Runs > 1), Weft is
// the run with the fastest decode, its prefill tok/s and time to first
// token the best of all runs and its peak RSS the highest; BWFracs holds
// every run's share of the read bandwidth (each paired with its own read
// probe), whose median the report shows.
type LLMResult struct {
	Model       string    `json:"model"` // the mkllm preset
	Type        string    `json:"type"`  // the matrices' weight type
	Threads     int       `json:"threads"`
	MemoryCheck bool      `json:"memory_check,omitempty"`
	Runs        int       `json:"runs,omitempty"` // successful `weft bench` runs
	Weft        *LLMBench `json:"weft,omitempty"`
	BWFracs     []float64 `json:"decode_bandwidth_fractions,omitempty"`
	// TrafficFracs holds every run's DecodeTrafficFrac, sorted.
	TrafficFracs []float64 `json:"decode_traffic_fractions,omitempty"`
	// EmptyDecodeTokS is the fastest decode from an empty context of all
	// runs, and EmptyFracs every run's share of the read there, sorted.
	EmptyDecodeTokS float64   `json:"empty_decode_tok_s,omitempty"`
	EmptyFracs      []float64 `json:"empty_decode_bandwidth_fractions,omitempty"`
	Err             string    `json:"error,omitempty"`
	// LlamaCpp is the llama.cpp peer on the same file (llm_peer.go): its
	// best prefill and decode over its runs, or LlamaCppErr (absent where
	// the peer did not run).
	LlamaCpp    *LLMPeer `json:"llama_cpp,omitempty"`
	LlamaCppErr string   `json:"llama_cpp_error,omitempty"`
}

// DecodeGoal is the share of the measured read bandwidth that Q4_0 decode
// should move weights at.
const DecodeGoal = 0.85

// llmFile matches PRESET.TYPE[.ctxN].tT[.rN].EXT in the llm directory
// (rN: the Nth repetition).
var llmFile = regexp.MustCompile(`^([A-Za-z0-9_.-]+?)\.([a-z0-9_]+)(\.ctx\d+)?\.t(\d+)(?:\.r\d+)?\.(json|err)$`)

// addLLM reads the `weft bench --json` outputs run.sh left in dir, and
// the llama.cpp peer's (bench/llamacpp/bench.mjs) from dir's sibling
// llamacpp, named alike (either absent when the LLM section or the peer
// did not run: no rows, no error).
func (r *Results) addLLM(dir string) error {
	byKey := map[string]*LLMResult{}
	var keys []string
	// each calls f with every result file of d (m: llmFile's groups) and
	// its row.
	each := func(d string, f func(lr *LLMResult, path string, m []string)) error {
		entries, err := os.ReadDir(d)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			m := llmFile.FindStringSubmatch(e.Name())
			if m == nil {
				continue
			}
			threads, _ := strconv.Atoi(m[4])
			key := fmt.Sprintf("%s\x00%s\x00%s\x00%04d", m[1], m[2], m[3], threads)
			lr := byKey[key]
			if lr == nil {
				lr = &LLMResult{Model: m[1], Type: m[2], Threads: threads, MemoryCheck: m[3] != ""}
				byKey[key] = lr
				keys = append(keys, key)
			}
			f(lr, filepath.Join(d, e.Name()), m)
		}
		return nil
	}
	err := each(dir, func(lr *LLMResult, path string, m []string) {
		if m[5] == "err" {
			if msg := readErr(path); msg != "" {
				lr.Err = msg
			}
			return
		}
		var b LLMBench
		if err := readJSON(path, &b); err != nil {
			lr.Err = err.Error()
			return
		}
		lr.add(&b)
	})
	if err != nil {
		return err
	}
	if err := each(filepath.Join(filepath.Dir(dir), "llamacpp"), addPeer); err != nil {
		return err
	}
	slices.SortFunc(keys, func(a, b string) int {
		ka, kb := byKey[a], byKey[b]
		switch {
		case ka.MemoryCheck != kb.MemoryCheck:
			if kb.MemoryCheck {
				return -1
			}
			return 1
		case ka.Model != kb.Model:
			return strings.Compare(ka.Model, kb.Model)
		case ka.Type != kb.Type:
			return typeRank(ka.Type) - typeRank(kb.Type)
		}
		return ka.Threads - kb.Threads
	})
	for _, k := range keys {
		lr := byKey[k]
		if lr.Weft != nil {
			lr.Err = ""
		} else if lr.Err == "" {
			lr.Err = "no output"
		}
		if lr.LlamaCpp != nil {
			lr.LlamaCppErr = ""
		}
		r.LLM = append(r.LLM, *lr)
	}
	return nil
}

// add merges one run into l (see LLMResult).
func (l *LLMResult) add(b *LLMBench) {
	l.Runs++
	if b.DecodeBWFrac > 0 {
		l.BWFracs = append(l.BWFracs, b.DecodeBWFrac)
		slices.Sort(l.BWFracs)
	}
	if b.DecodeTrafficFrac > 0 {
		l.TrafficFracs = append(l.TrafficFracs, b.DecodeTrafficFrac)
		slices.Sort(l.TrafficFracs)
	}
	if e := b.FromEmpty; e != nil {
		l.EmptyDecodeTokS = max(l.EmptyDecodeTokS, e.DecodeTokS)
		if e.DecodeBWFrac > 0 {
			l.EmptyFracs = append(l.EmptyFracs, e.DecodeBWFrac)
			slices.Sort(l.EmptyFracs)
		}
	}
	w := l.Weft
	if w == nil {
		l.Weft = b
		return
	}
	if b.DecodeTokS > w.DecodeTokS {
		w, b = b, w
		l.Weft = w
	}
	w.PrefillTokS = max(w.PrefillTokS, b.PrefillTokS)
	if b.TTFTMs > 0 && (w.TTFTMs == 0 || b.TTFTMs < w.TTFTMs) {
		w.TTFTMs = b.TTFTMs
	}
	w.PeakRSS = max(w.PeakRSS, b.PeakRSS)
}

// bwFrac is the share of the read bandwidth the report shows: the median
// of the runs' (the lower middle one of an even count), or the kept run's
// where the runs did not record theirs; and the runs' range ("" for one
// run).
func (l *LLMResult) bwFrac() (float64, string) { return fracSpan(l.BWFracs, l.Weft.DecodeBWFrac) }

// trafficFrac is bwFrac for the weights and KV rows together (0 where no
// run recorded it).
func (l *LLMResult) trafficFrac() (float64, string) {
	return fracSpan(l.TrafficFracs, l.Weft.DecodeTrafficFrac)
}

// emptyFrac is bwFrac for decode from an empty context (0 where no run
// recorded it).
func (l *LLMResult) emptyFrac() (float64, string) { return fracSpan(l.EmptyFracs, 0) }

// fracCell renders a share and its runs' range (frac: l.bwFrac or its
// like) for a markdown cell, the share in bold where bold is set and it
// was measured.
func fracCell(bold bool, frac func() (float64, string)) string {
	f, span := frac()
	s := pct(f)
	if bold && f > 0 {
		s = "**" + s + "**"
	}
	if span != "" {
		s += " (" + span + ")"
	}
	return s
}

// fracSpan is the median of sorted fracs (the lower middle one of an
// even count), or kept where there are none, and their range ("" for
// fewer than two).
func fracSpan(fracs []float64, kept float64) (float64, string) {
	n := len(fracs)
	if n == 0 {
		return kept, ""
	}
	med := fracs[(n-1)/2]
	if n == 1 {
		return med, ""
	}
	return med, fmt.Sprintf("%s–%s", pct(fracs[0]), pct(fracs[n-1]))
}

// typeRank orders weight types from the smallest to the largest.
func typeRank(t string) int {
	order := []string{"q4_0", "q4_1", "q4_k", "q4_k_m", "q5_0", "q5_1", "q8_0", "bf16", "f16", "f32"}
	if i := slices.Index(order, t); i >= 0 {
		return i
	}
	return len(order)
}

// llmTable prints the LLM rows as plain text.
func llmTable(p func(string, ...any), rows []LLMResult) {
	p("\n%-12s %-6s %3s %10s %9s %10s %10s %8s %8s %8s %9s %10s %8s\n", "llm", "type", "thr", "prefill/s", "TTFT ms", "decode/s",
		"wt GB/s", "of read", "+KV", "fastest", "peak RSS", "empty/s", "of read")
	for _, l := range rows {
		if l.MemoryCheck {
			continue
		}
		if l.Weft == nil {
			p("%-12s %-6s %3d failed\n", l.Model, l.Type, l.Threads)
			continue
		}
		b := l.Weft
		frac, span := l.bwFrac()
		traffic, _ := l.trafficFrac()
		empty, espan := l.emptyFrac()
		// The runs' ranges of the two shares, after the row.
		var spans []string
		if span != "" {
			spans = append(spans, "of read "+span)
		}
		if espan != "" {
			spans = append(spans, "empty "+espan)
		}
		tail := ""
		if len(spans) > 0 {
			tail = " (" + strings.Join(spans, ", ") + ")"
		}
		p("%-12s %-6s %3d %10s %9s %10s %10s %8s %8s %8s %9s %10s %8s%s\n", l.Model, l.Type, l.Threads, num(b.PrefillTokS), num(b.TTFTMs),
			num(b.DecodeTokS), num(b.DecodeGBs), pct(frac), pct(traffic), pct(b.DecodeBestBWFrac), mb(b.PeakRSS), num(l.EmptyDecodeTokS), pct(empty), tail)
	}
	for _, l := range rows {
		if !l.MemoryCheck {
			continue
		}
		if l.Weft == nil {
			p("memory check %s %s failed\n", l.Model, l.Type)
			continue
		}
		b := l.Weft
		p("memory check %s %s, %d+%d tokens in a %d-token cache: peak RSS %s, bound %s (%s)\n", l.Model, l.Type,
			b.PrefillTokens, b.DecodeTokens, b.Ctx, mb(b.PeakRSS), mb(b.RSSBudget), withinBound(b))
	}
	llmPeerTable(p, rows)
}

// llmMarkdown writes the LLM section of docs/performance.md.
func llmMarkdown(p func(string, ...any), rows []LLMResult) {
	p("## LLM: prefill and decode\n\n")
	p("`weft bench MODEL.gguf --json` on GGUF files written by `weft mkllm --preset P --type T`\n")
	p("(random weights, llama.cpp's layout), the best of %s runs per row; a run is one greedy\n", llmRuns(rows))
	p("generation after a 2-token warm-up: a prompt of %s tokens (**prefill** tok/s and time to\n", llmPrefill(rows))
	p("first token, the best of the runs) then %s tokens decoded one at a time (**decode** tok/s,\n", llmDecode(rows))
	p("and the columns after it, from the run with the fastest decode). Decode is memory-bound:\n")
	p("**weights GB/s** is the weight bytes a token reads times decode tok/s. The same process\n")
	p("then measures a streaming read with the same threads (*read alone*: the fastest of a plain\n")
	p("Go loop, vector loads and vector loads with software prefetch — weft's own kernels\n")
	p("prefetch, so the probe does too — on its median pass; *plain read* is the plain loop's\n")
	p("figure, the STREAM-like kind of measurement) and runs the generation again with one pass\n")
	p("of that reader over the same buffer before the first decode step, after every eighth and\n")
	p("after the last (outside the timed steps): **read GB/s** is those passes' median rate,\n")
	p("*paired decode* that generation's decode tok/s over the steps that are not among the first\n")
	p("three after a pass (a pass sweeps 256 MB through the caches and lets the workers park: the\n")
	p("steps after it measure the probe, not decode: measured, the first step after a pass ran\n")
	p("20–80%% slower than the steady ones, the second 6–21%%, the third 1–14%%, the fourth still up\n")
	p("to 5%%, which is counted). A run's share of the read is the median, over the stretches of\n")
	p("steps between two passes, of the stretch's weight traffic against the faster of those two\n")
	p("passes: the two are compared over the same few milliseconds, since on a shared host the\n")
	p("memory system's state moves by tens of percent between seconds (and a stretch that\n")
	p("straddles such a move is an outlier the median leaves out); the faster pass, because a\n")
	p("pass the host disturbs reads at a fraction of the bandwidth and would inflate the share.\n")
	p("**Of read** is the median of\n")
	p("the runs' shares, their range in brackets; the other columns after decode tok/s are the\n")
	p("fastest decode run's. The goal is Q4_0 decode at %.0f%% of the read bandwidth or\n", 100*DecodeGoal)
	p("more. *With KV* is the same median share for the weights and the KV cache rows together:\n")
	p("a decode step at position p also reads the keys and values of positions 0..p (each KV\n")
	p("head's once), %s; the KV cache is not weights, so the goal counts the weights only, and\n", kvShare(rows))
	p("*with KV* says how much of the read decode used in all.\n")
	p("*Fastest step* is that generation's quickest decode step as a share of the fastest\n")
	p("pass, best against best (other jobs on a shared machine disturb both least). Peak RSS is\n")
	p("the whole process's, loading included (the highest of the runs), read before the probe's\n")
	p("buffer exists.\n\n")
	p("The last two columns decode **from an empty context**, as llama-bench's `tg` test does (and\n")
	p("as the peer figures quoted at the end of this section were most likely measured): after a\n")
	p("1-token prompt, the same number of steps, each reading few KV cache rows (at most as many\n")
	p("positions as steps); tok/s is the best of the runs, *of read* the median of the runs'\n")
	p("shares, each paired with the read probe as above. The columns before them decode after the\n")
	p("prompt, where each step also reads the prompt's keys and values.\n\n")
	if slices.ContainsFunc(rows, func(l LLMResult) bool { return l.Type == "q4_k_m" }) {
		p("The **q4_k_m** rows are the f16 file through `weft quantize --type q4_k_m --policy all`:\n")
		p("llama.cpp's Q4_K_M mix (Q4_K, with the classifier and some attn_v and ffn_down weights in\n")
		p("Q6_K), the format most real-world GGUF files use.\n\n")
	}
	p("| model | type | threads | prefill tok/s | TTFT ms | decode tok/s | weights GB/s | paired decode tok/s | read GB/s | of read | with KV | fastest step | read alone GB/s | plain read GB/s | peak RSS | decode tok/s from empty context | of read from empty context |\n")
	p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, l := range rows {
		if l.MemoryCheck {
			continue
		}
		if l.Weft == nil {
			p("| %s | %s | %d | failed | | | | | | | | | | | | | |\n", l.Model, l.Type, l.Threads)
			continue
		}
		b := l.Weft
		// Q4_0's shares in bold: the goal is theirs.
		goal := l.Type == "q4_0"
		withKV := fracCell(false, l.trafficFrac)
		of := fracCell(goal, l.bwFrac)
		emptyOf := fracCell(goal, l.emptyFrac)
		p("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", l.Model, l.Type, l.Threads, num(b.PrefillTokS), num(b.TTFTMs),
			num(b.DecodeTokS), num(b.DecodeGBs), num(b.PairedDecodeTokS), num(b.ReadGBs), of, withKV, pct(b.DecodeBestBWFrac), num(b.ReadAloneGBs),
			num(b.ReadPlainGBs), mb(b.PeakRSS), num(l.EmptyDecodeTokS), emptyOf)
	}
	p("\n")
	var mem []LLMResult
	for _, l := range rows {
		if l.MemoryCheck {
			mem = append(mem, l)
		}
	}
	if len(mem) > 0 {
		touched := false
		for _, l := range mem {
			touched = touched || l.Weft != nil && l.Weft.TouchedBytes > 0
		}
		if touched {
			p("Peak RSS at a long context: the bound is the touched weights (the model file's pages\n")
			p("resident after the run), plus the KV cache at the benchmark's capacity, plus 64 MiB.\n")
		} else {
			p("Peak RSS at a long context: the bound is the weights a token reads, plus the KV cache at\n")
			p("the benchmark's capacity, plus 64 MiB.\n")
		}
		p("Decode tok/s there: each token reads the KV cache of every earlier position as well as\n")
		p("the weights.\n\n")
		p("| model | type | threads | prefill + decode | decode tok/s | KV cache | peak RSS | bound | |\n")
		p("|---|---|---:|---:|---:|---:|---:|---:|---|\n")
		for _, l := range mem {
			if l.Weft == nil {
				p("| %s | %s | %d | failed | | | | | |\n", l.Model, l.Type, l.Threads)
				continue
			}
			b := l.Weft
			p("| %s | %s | %d | %d + %d in %d | %s | %s (%s) | %s | %s | %s |\n", l.Model, l.Type, l.Threads, b.PrefillTokens, b.DecodeTokens,
				b.Ctx, num(b.DecodeTokS), mb(b.KVBytes), b.KVType, mb(b.PeakRSS), mb(b.RSSBudget), withinBound(b))
		}
		p("\n")
	}
	failed := false
	for _, l := range rows {
		if l.Err != "" {
			kind := ""
			if l.MemoryCheck {
				kind = " (memory check)"
			}
			p("- %s %s at %d thread%s%s failed: `%s`\n", l.Model, l.Type, l.Threads, plural(l.Threads), kind, oneLine(l.Err))
			failed = true
		}
	}
	if failed {
		p("\n")
	}
	llmPeerMarkdown(p, rows)
	p("For context — **quoted from the project's performance targets, not measured in this\n")
	p("run**: on the machine class those targets describe (2-vCPU Zen 5 guests with AVX-512 and\n")
	p("~38 GB/s of read bandwidth; compare the machine above), llama.cpp at 2 threads decodes the\n")
	p("same 110M-parameter Llama in Q4_0 (~69 MB of weights) at ~450 tok/s (~31 GB/s, about 80%%\n")
	p("of read bandwidth) and prefills 128 tokens at ~2200 tok/s; its F16 and F32 decode move\n")
	p("~42 GB/s.\n\n")
}

// kvShare says how many bytes the KV rows of the speed rows' decode steps
// were against their weights' ("1.5% to 10% of the weights' bytes a token
// in these rows"), or that older results did not record it.
func kvShare(rows []LLMResult) string {
	lo, hi := 0.0, 0.0
	for _, l := range rows {
		if l.MemoryCheck || l.Weft == nil || l.Weft.KVReadBytes == 0 || l.Weft.WeightBytes == 0 {
			continue
		}
		f := float64(l.Weft.KVReadBytes) / float64(l.Weft.WeightBytes)
		if lo == 0 || f < lo {
			lo = f
		}
		hi = max(hi, f)
	}
	switch {
	case hi == 0:
		return "which these results did not record"
	case pct(lo) == pct(hi):
		return fmt.Sprintf("%s of the weights' bytes a token in these rows", pctFine(lo))
	}
	return fmt.Sprintf("%s to %s of the weights' bytes a token in these rows", pctFine(lo), pctFine(hi))
}

// pctFine is pct with one decimal below 10%.
func pctFine(x float64) string {
	if x < 0.1 {
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	return pct(x)
}

func llmPrefill(rows []LLMResult) string {
	return llmTokens(rows, func(b *LLMBench) int { return b.PrefillTokens })
}
func llmRuns(rows []LLMResult) string {
	var lo, hi int
	for _, l := range rows {
		if l.MemoryCheck || l.Runs == 0 {
			continue
		}
		if lo == 0 || l.Runs < lo {
			lo = l.Runs
		}
		hi = max(hi, l.Runs)
	}
	if lo == hi {
		return strconv.Itoa(hi)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func llmDecode(rows []LLMResult) string {
	return llmTokens(rows, func(b *LLMBench) int { return b.DecodeTokens })
}

// llmTokens lists the distinct token counts of the speed rows ("128", or
// "128/256" when runs differ).
func llmTokens(rows []LLMResult, f func(*LLMBench) int) string {
	var ns []int
	for _, l := range rows {
		if !l.MemoryCheck && l.Weft != nil && !slices.Contains(ns, f(l.Weft)) {
			ns = append(ns, f(l.Weft))
		}
	}
	if len(ns) == 0 {
		return "N"
	}
	slices.Sort(ns)
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, "/")
}

func withinBound(b *LLMBench) string {
	switch {
	case b.PeakRSS == 0 || b.RSSBudget == 0:
		return "n/a"
	case b.PeakRSS <= b.RSSBudget:
		return fmt.Sprintf("within, %.0f%% of it", 100*float64(b.PeakRSS)/float64(b.RSSBudget))
	}
	return fmt.Sprintf("**over**, %.0f%% of it", 100*float64(b.PeakRSS)/float64(b.RSSBudget))
}

// mb renders a byte count in MB (0 is "n/a": not reported).
func mb(b int64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MB", float64(b)/1e6)
}
