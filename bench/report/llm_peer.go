package report

import (
	"slices"
)

// LLMPeer is what bench/llamacpp/bench.mjs prints: llama.cpp (through
// node-llama-cpp's prebuilt binaries) on the same GGUF file as a
// `weft bench` row, the same prompt and decode lengths and threads. Its
// rates are the best of its runs.
type LLMPeer struct {
	Release       string  `json:"llama_cpp_release,omitempty"`
	Binding       string  `json:"node_llama_cpp,omitempty"`
	CPUVariant    string  `json:"cpu_variant,omitempty"` // the ggml CPU library it loaded
	Threads       int     `json:"threads"`
	PrefillTokens int     `json:"prefill_tokens"`
	DecodeTokens  int     `json:"decode_tokens"`
	Runs          int     `json:"runs"`
	TTFTMs        float64 `json:"ttft_ms"`
	PrefillTokS   float64 `json:"prefill_tok_s"`
	DecodeTokS    float64 `json:"decode_tok_s"`
	// DecodeRuns is every run's decode tok/s, sorted.
	DecodeRuns []float64 `json:"decode_tok_s_runs,omitempty"`
	// EmptyDecodeTokS is its decode from an empty context (a 1-token
	// prompt, then as many steps; absent in older results).
	EmptyDecodeTokS float64 `json:"empty_decode_tok_s,omitempty"`
	PeakRSS         int64   `json:"peak_rss_bytes,omitempty"`
}

// addPeer reads one of the peer's files into lr (for Results.addLLM).
func addPeer(lr *LLMResult, path string, m []string) {
	if m[5] == "err" {
		if msg := readErr(path); msg != "" {
			lr.LlamaCppErr = msg
		}
		return
	}
	var p LLMPeer
	if err := readJSON(path, &p); err != nil {
		lr.LlamaCppErr = err.Error()
		return
	}
	lr.LlamaCpp = lr.LlamaCpp.merge(&p)
}

// merge returns the peer's figures over the runs of l and b: the best
// rates and time to first token, every decode rate, the highest RSS.
func (l *LLMPeer) merge(b *LLMPeer) *LLMPeer {
	runs := slices.Clone(b.DecodeRuns)
	if len(runs) == 0 && b.DecodeTokS > 0 {
		runs = append(runs, b.DecodeTokS)
	}
	if l == nil {
		c := *b
		c.DecodeRuns = runs
		slices.Sort(c.DecodeRuns)
		return &c
	}
	l.Runs += b.Runs
	l.PrefillTokS = max(l.PrefillTokS, b.PrefillTokS)
	l.DecodeTokS = max(l.DecodeTokS, b.DecodeTokS)
	l.EmptyDecodeTokS = max(l.EmptyDecodeTokS, b.EmptyDecodeTokS)
	if b.TTFTMs > 0 && (l.TTFTMs == 0 || b.TTFTMs < l.TTFTMs) {
		l.TTFTMs = b.TTFTMs
	}
	l.PeakRSS = max(l.PeakRSS, b.PeakRSS)
	l.DecodeRuns = append(l.DecodeRuns, runs...)
	slices.Sort(l.DecodeRuns)
	return l
}

// peerRatios returns weft's prefill and decode tok/s over llama.cpp's
// (0 where either is missing).
func (l *LLMResult) peerRatios() (prefill, decode float64) {
	w, p := l.Weft, l.LlamaCpp
	if w == nil || p == nil {
		return 0, 0
	}
	if p.PrefillTokS > 0 {
		prefill = w.PrefillTokS / p.PrefillTokS
	}
	if p.DecodeTokS > 0 {
		decode = w.DecodeTokS / p.DecodeTokS
	}
	return prefill, decode
}

// peerEmptyRatio is weft's decode tok/s from an empty context over
// llama.cpp's (both the best runs; 0 where either is missing).
func (l *LLMResult) peerEmptyRatio() float64 {
	if l.LlamaCpp == nil || l.LlamaCpp.EmptyDecodeTokS == 0 {
		return 0
	}
	return l.EmptyDecodeTokS / l.LlamaCpp.EmptyDecodeTokS
}

// peerReadShare is llama.cpp's decode traffic as a share of the read
// bandwidth, estimated from weft's: the row's share (bwFrac, the median
// of weft's runs, each paired with its own read probe) times llama.cpp's
// decode tok/s over weft's (both the best runs). Both move the same weight
// bytes a token, so this is llama.cpp's share had it run against the
// probes weft's runs were paired with (0 where either is missing).
func (l *LLMResult) peerReadShare() float64 {
	w, p := l.Weft, l.LlamaCpp
	if w == nil || p == nil || w.DecodeTokS == 0 {
		return 0
	}
	frac, _ := l.bwFrac()
	return frac * p.DecodeTokS / w.DecodeTokS
}

// hasPeer reports whether any speed row has the peer's result or error.
func hasPeer(rows []LLMResult) bool {
	return slices.ContainsFunc(rows, func(l LLMResult) bool {
		return !l.MemoryCheck && (l.LlamaCpp != nil || l.LlamaCppErr != "")
	})
}

// llmPeerTable prints the peer rows as plain text.
func llmPeerTable(p func(string, ...any), rows []LLMResult) {
	if !hasPeer(rows) {
		return
	}
	p("\n%-12s %-6s %3s %10s %10s %8s %10s %10s %8s %10s %10s %10s %8s\n", "vs llama.cpp", "type", "thr", "prefill/s", "llama.cpp", "ratio",
		"decode/s", "llama.cpp", "ratio", "lcpp read", "empty/s", "llama.cpp", "ratio")
	eachPeerRow(rows, func(l *LLMResult, wp, wd, pr, dr float64) {
		if l.LlamaCpp == nil {
			p("%-12s %-6s %3d llama.cpp failed\n", l.Model, l.Type, l.Threads)
			return
		}
		p("%-12s %-6s %3d %10s %10s %8s %10s %10s %8s %10s %10s %10s %8s\n", l.Model, l.Type, l.Threads, num(wp), num(l.LlamaCpp.PrefillTokS),
			ratio(pr, "x"), num(wd), num(l.LlamaCpp.DecodeTokS), ratio(dr, "x"), pct(l.peerReadShare()),
			num(l.EmptyDecodeTokS), num(l.LlamaCpp.EmptyDecodeTokS), ratio(l.peerEmptyRatio(), "x"))
	})
}

// eachPeerRow calls f for every speed row with the peer's result or error
// (l.LlamaCpp nil where it failed), with weft's prefill and decode tok/s
// (0 without weft's result) and weft's over llama.cpp's.
func eachPeerRow(rows []LLMResult, f func(l *LLMResult, wp, wd, pr, dr float64)) {
	for i := range rows {
		l := &rows[i]
		if l.MemoryCheck || (l.LlamaCpp == nil && l.LlamaCppErr == "") {
			continue
		}
		var wp, wd float64
		if l.Weft != nil {
			wp, wd = l.Weft.PrefillTokS, l.Weft.DecodeTokS
		}
		pr, dr := l.peerRatios()
		f(l, wp, wd, pr, dr)
	}
}

// llmPeerMarkdown writes the peer part of the LLM section, or says why
// there is none.
func llmPeerMarkdown(p func(string, ...any), rows []LLMResult) {
	if !hasPeer(rows) {
		p("No peer ran in this section (bench/llamacpp: llama.cpp through node-llama-cpp's prebuilt\n")
		p("linux-x64 binaries; it runs on x86-64 Linux with node, and `npm ci` needs the npm registry\n")
		p("once).\n\n")
		return
	}
	var variant, release string
	for _, l := range rows {
		if l.LlamaCpp != nil {
			variant, release = l.LlamaCpp.CPUVariant, "llama.cpp"
			if r := l.LlamaCpp.Release; r != "" {
				release += " " + r
			}
			if b := l.LlamaCpp.Binding; b != "" {
				release += " (node-llama-cpp " + b + "'s prebuilt build)"
			}
			break
		}
	}
	p("### Against llama.cpp\n\n")
	p("%s on the same files, in the same script: bench/llamacpp/bench.mjs after each\n", release)
	p("`weft bench` run (the same prompt and decode lengths, threads and f16 KV cache; ggml\n")
	p("loaded its `%s` CPU library). Each of its runs clears the context, evaluates the\n", orDash(variant))
	p("prompt as one batch, then decodes one token at a time with its logits, calling the\n")
	p("library's batch API directly (no sampling is timed); its rates are the best over all its\n")
	p("runs (two per weft run), weft's as in the table above. **Ratio** is weft's tok/s over\n")
	p("llama.cpp's (above 1: weft is faster). *llama.cpp of read* estimates llama.cpp's decode\n")
	p("weight traffic as a share of the read bandwidth: weft's share (*of read* above) times\n")
	p("llama.cpp's decode tok/s over weft's; both read the same weight bytes a token. Each run\n")
	p("also decodes as many tokens from an empty context (a 1-token prompt, llama-bench's `tg`):\n")
	p("the last three columns, weft's from its own such generation.\n\n")
	p("| model | type | threads | prefill tok/s | llama.cpp prefill tok/s | ratio | decode tok/s | llama.cpp decode tok/s | ratio | llama.cpp of read | decode from empty tok/s | llama.cpp from empty | ratio |\n")
	p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	eachPeerRow(rows, func(l *LLMResult, wp, wd, pr, dr float64) {
		if l.LlamaCpp == nil {
			p("| %s | %s | %d | | llama.cpp failed | | | | | | | | |\n", l.Model, l.Type, l.Threads)
			return
		}
		p("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", l.Model, l.Type, l.Threads, num(wp), num(l.LlamaCpp.PrefillTokS),
			bold(ratio(pr, "")), num(wd), num(l.LlamaCpp.DecodeTokS), bold(ratio(dr, "")), pct(l.peerReadShare()),
			num(l.EmptyDecodeTokS), num(l.LlamaCpp.EmptyDecodeTokS), bold(ratio(l.peerEmptyRatio(), "")))
	})
	p("\n")
	failed := false
	for _, l := range rows {
		if !l.MemoryCheck && l.LlamaCppErr != "" {
			p("- llama.cpp on %s %s at %d thread%s failed: `%s`\n", l.Model, l.Type, l.Threads, plural(l.Threads), oneLine(l.LlamaCppErr))
			failed = true
		}
	}
	if failed {
		p("\n")
	}
}
