package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAssembleLLM(t *testing.T) {
	r, err := Assemble("testdata/raw", time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	type row struct {
		model, typ string
		threads    int
		mem        bool
		err        string
	}
	var got []row
	for _, l := range r.LLM {
		got = append(got, row{l.Model, l.Type, l.Threads, l.MemoryCheck, l.Err})
	}
	// Speed rows by model, then type from the smallest, then threads; the
	// memory check last; README.txt is not a result; an empty .err next to
	// a result is no error.
	require.Equal(t, []row{
		{"llama-110m", "q4_0", 1, false, ""},
		{"llama-110m", "q4_0", 2, false, "exit status 1: weft: bench: out of cheese"},
		{"llama-110m", "q4_k_m", 1, false, ""},
		{"llama-110m", "f16", 1, false, ""},
		{"qwen2-0.5b", "q4_0", 1, false, ""},
		{"llama-110m", "q4_0", 2, true, ""},
	}, got)
	// Two runs: decode from r2 (the faster decode), prefill and TTFT the
	// best of both (r1's), peak RSS the higher (r1's).
	require.Equal(t, 2, r.LLM[0].Runs)
	q := r.LLM[0].Weft
	require.Equal(t, LLMBench{PrefillTokens: 128, DecodeTokens: 64, Ctx: 193, KVType: "f16", LoadMs: 20, TTFTMs: 120,
		PrefillTokS: 1100, DecodeTokS: 400, WeightBytes: 60000000, DecodeGBs: 24, PeakRSS: 108000000, KVBytes: 7000000,
		RSSBudget: 134108864, ReadGBs: 30, ReadReader: "avx512+prefetch1024", ReadBestGBs: 32, ReadAloneGBs: 31.5, ReadPlainGBs: 25,
		PairedDecodeTokS: 390, DecodeBWFrac: 0.78, DecodeBestTokS: 450, PairedDecodeBestTokS: 480, DecodeBestBWFrac: 0.9,
		KVReadBytes: 6000000, DecodeTrafficFrac: 0.858,
		FromEmpty: &LLMEmpty{DecodeTokS: 420, PairedDecodeTokS: 410, ReadGBs: 30, DecodeBWFrac: 0.86, KVReadBytes: 1300000}}, *q)
	require.Equal(t, []float64{0.677, 0.78}, r.LLM[0].BWFracs)
	// r1 is older and has no traffic share: only r2's.
	require.Equal(t, []float64{0.858}, r.LLM[0].TrafficFracs)
	// Decode from an empty context: r1 is older and has none.
	require.Equal(t, 420.0, r.LLM[0].EmptyDecodeTokS)
	require.Equal(t, []float64{0.86}, r.LLM[0].EmptyFracs)
	require.Equal(t, 1, r.LLM[4].Runs)
	require.Nil(t, r.LLM[1].Weft)
	require.Equal(t, 2048, r.LLM[5].Weft.Ctx)
}

func TestAssembleLLMBadJSON(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "llm"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "llm", "tiny.q8_0.t1.json"), []byte("{"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "llm", "tiny.q8_0.t2.json"), nil, 0o644))
	r, err := Assemble(dir, time.Now())
	require.NoError(t, err)
	require.Len(t, r.LLM, 2)
	require.Contains(t, r.LLM[0].Err, "tiny.q8_0.t1.json")
	require.Nil(t, r.LLM[0].Weft)
	require.Equal(t, 2, r.LLM[1].Threads)
	require.NotEmpty(t, r.LLM[1].Err)
}

func TestLLMRender(t *testing.T) {
	r, err := Assemble("testdata/raw", time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, Write(path, r))
	back, err := Read(path)
	require.NoError(t, err)
	require.Equal(t, r.LLM, back.LLM)

	var buf bytes.Buffer
	Markdown(&buf, back, "x.json")
	md := buf.String()
	for _, want := range []string{
		"## LLM: prefill and decode\n",
		"(random weights, llama.cpp's layout), the best of 1–2 runs per row;",
		"a prompt of 128 tokens (**prefill** tok/s and time to\nfirst token, the best of the runs) then 64 tokens decoded",
		"The goal is Q4_0 decode at 85% of the read bandwidth or\nmore.",
		"| model | type | threads | prefill tok/s | TTFT ms | decode tok/s | weights GB/s | paired decode tok/s | read GB/s | of read | with KV | fastest step | read alone GB/s | plain read GB/s | peak RSS | decode tok/s from empty context | of read from empty context |",
		// 60 MB × 400 tok/s = 24 GB/s; paired 390 tok/s, 78% of 30 GB/s; the
		// fastest step 90%. Of read: the median of r1's 67.7% and r2's 78%
		// (the lower middle of two), then their range; with KV, r2's only.
		// From an empty context: r2's 420 tok/s at 86% of its probe.
		"| llama-110m | q4_0 | 1 | 1100 | 120 | 400 | 24.0 | 390 | 30.0 | **68%** (68%–78%) | 86% | 90% | 31.5 | 25.0 | 108 MB | 420 | **86%** |",
		"| llama-110m | q4_0 | 2 | failed | | | | | | | | | | | | | |",
		"The last two columns decode **from an empty context**, as llama-bench's `tg` test does",
		// Older results: no paired decode, no read alone, no KV traffic.
		"| llama-110m | f16 | 1 | 640 | 200 | 100 | 22.0 | — | 27.5 | 80% | — | 88% | — | — | n/a | — | — |",
		// The Q4_K_M mix, between Q4_0 and F16, with its sentence.
		"| llama-110m | q4_k_m | 1 | 450 | 280 | 170 | 12.1 | — | 18.0 | 66% | — | 72% | — | — | n/a | — | — |",
		"The **q4_k_m** rows are the f16 file through `weft quantize --type q4_k_m --policy all`:",
		"| qwen2-0.5b | q4_0 | 1 | 200 | 640 | 70.0 | 19.6 | — | 28.0 | **70%** | 71% | 80% | — | — | 330 MB | — | — |",
		// KV rows against weights: Qwen2's 4.2 of 280 MB (1.5%), Llama's 6 of 60 (10%).
		"head's once), 1.5% to 10% of the weights' bytes a token in these rows;",
		// 180 MB of 202.1 MB: 89%.
		"| llama-110m | q4_0 | 2 | 1920 + 64 in 2048 | 70.0 | 75 MB (f16) | 180 MB | 202 MB | within, 89% of it |",
		"- llama-110m q4_0 at 2 threads failed: `exit status 1: weft: bench: out of cheese`",
		"**quoted from the project's performance targets, not measured in this\nrun**",
	} {
		require.Contains(t, md, want)
	}
	require.Less(t, strings.Index(md, "## Quantized GEMV"), strings.Index(md, "## LLM"))
	require.Less(t, strings.Index(md, "## LLM"), strings.Index(md, "## Notes"))

	var tbl bytes.Buffer
	Table(&tbl, back)
	for _, want := range []string{
		"llm          type   thr  prefill/s   TTFT ms   decode/s    wt GB/s  of read      +KV  fastest  peak RSS    empty/s  of read",
		"llama-110m   q4_0     1       1100       120        400       24.0      68%      86%      90%    108 MB        420      86% (of read 68%–78%)",
		"llama-110m   q4_k_m   1        450       280        170       12.1      66%        —      72%       n/a",
		"llama-110m   q4_0     2 failed",
		"memory check llama-110m q4_0, 1920+64 tokens in a 2048-token cache: peak RSS 180 MB, bound 202 MB (within, 89% of it)",
	} {
		require.Contains(t, tbl.String(), want)
	}
}

// A results file from before the LLM section reads, and renders without it.
func TestLLMOlderResults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"schema": 1, "date": "2026-11-30T11:56:34Z", "host": "vm",
		"machine": {"cpu": "x", "cores": 2, "os": "linux/amd64"}, "versions": {}, "models": null, "sgemm": null,
		"read_bandwidth": [{"threads": 1, "gb_per_s": 30}], "qgemv": null}`), 0o644))
	r, err := Read(path)
	require.NoError(t, err)
	require.Nil(t, r.LLM)
	var md, tbl bytes.Buffer
	Markdown(&md, r, "old.json")
	require.NotContains(t, md.String(), "## LLM")
	Table(&tbl, r)
	require.NotContains(t, tbl.String(), "llm ")
}

// Merging runs does not depend on their order.
func TestLLMAdd(t *testing.T) {
	slow := LLMBench{DecodeTokS: 10, DecodeGBs: 1, PrefillTokS: 500, TTFTMs: 50, PeakRSS: 300}
	fast := LLMBench{DecodeTokS: 20, DecodeGBs: 2, PrefillTokS: 400, TTFTMs: 0, PeakRSS: 200}
	want := LLMBench{DecodeTokS: 20, DecodeGBs: 2, PrefillTokS: 500, TTFTMs: 50, PeakRSS: 300}
	for _, order := range [][2]LLMBench{{slow, fast}, {fast, slow}} {
		var l LLMResult
		a, b := order[0], order[1]
		l.add(&a)
		l.add(&b)
		require.Equal(t, 2, l.Runs)
		require.Equal(t, want, *l.Weft)
	}
	// Decode from an empty context: the fastest run's rate and every run's
	// share, whichever run the kept one is.
	for _, order := range [][2]LLMBench{{slow, fast}, {fast, slow}} {
		var l LLMResult
		a, b := order[0], order[1]
		a.FromEmpty = &LLMEmpty{DecodeTokS: 2 * a.DecodeTokS, DecodeBWFrac: 0.01 * a.DecodeTokS}
		b.FromEmpty = &LLMEmpty{DecodeTokS: 2 * b.DecodeTokS, DecodeBWFrac: 0.01 * b.DecodeTokS}
		l.add(&a)
		l.add(&b)
		require.Equal(t, 40.0, l.EmptyDecodeTokS)
		frac, span := l.emptyFrac()
		require.Equal(t, 0.1, frac)
		require.Equal(t, "10%–20%", span)
	}
}

func TestWithinBound(t *testing.T) {
	for _, c := range []struct {
		rss, bound int64
		want       string
	}{
		{0, 100, "n/a"},
		{50, 0, "n/a"},
		{50, 100, "within, 50% of it"},
		{100, 100, "within, 100% of it"},
		{150, 100, "**over**, 150% of it"},
	} {
		require.Equal(t, c.want, withinBound(&LLMBench{PeakRSS: c.rss, RSSBudget: c.bound}), "%d/%d", c.rss, c.bound)
	}
}

func TestAssembleLLMPeer(t *testing.T) {
	r, err := Assemble("testdata/raw", time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Len(t, r.LLM, 6) // the peer's files add no row of their own
	// Two runs of two: the best rates and TTFT, every decode rate, the
	// higher RSS; the empty .err next to them is no error.
	l := r.LLM[0]
	require.Equal(t, "", l.LlamaCppErr)
	require.Equal(t, &LLMPeer{Release: "v0.5.0", Binding: "3.22.1", CPUVariant: "sapphirerapids", Threads: 1, PrefillTokens: 128,
		DecodeTokens: 64, Runs: 4, TTFTMs: 80, PrefillTokS: 1600, DecodeTokS: 320, DecodeRuns: []float64{250, 300, 310, 320},
		EmptyDecodeTokS: 350, PeakRSS: 280000000}, l.LlamaCpp)
	pr, dr := l.peerRatios()
	require.InDelta(t, 1100.0/1600, pr, 1e-12)
	require.InDelta(t, 400.0/320, dr, 1e-12)
	// weft's median share 67.7% at 400 tok/s; llama.cpp's 320 tok/s.
	require.InDelta(t, 0.677*320/400, l.peerReadShare(), 1e-12)
	// From an empty context: weft's best 420 tok/s, llama.cpp's 350.
	require.InDelta(t, 420.0/350, l.peerEmptyRatio(), 1e-12)
	require.Equal(t, "exit status 1: llama.cpp: failed to load model", r.LLM[4].LlamaCppErr)
	require.Nil(t, r.LLM[4].LlamaCpp)
	require.Nil(t, r.LLM[2].LlamaCpp)
	require.Equal(t, "", r.LLM[2].LlamaCppErr)

	var md, tbl bytes.Buffer
	Markdown(&md, r, "x.json")
	Table(&tbl, r)
	for _, want := range []string{
		"### Against llama.cpp\n",
		"llama.cpp v0.5.0 (node-llama-cpp 3.22.1's prebuilt build) on the same files",
		"loaded its `sapphirerapids` CPU library",
		"| llama-110m | q4_0 | 1 | 1100 | 1600 | **0.69** | 400 | 320 | **1.25** | 54% | 420 | 350 | **1.20** |",
		"| qwen2-0.5b | q4_0 | 1 | | llama.cpp failed | | | | | | | | |",
		"- llama.cpp on qwen2-0.5b q4_0 at 1 thread failed: `exit status 1: llama.cpp: failed to load model`",
	} {
		require.Contains(t, md.String(), want)
	}
	require.NotContains(t, md.String(), "No peer ran")
	require.NotContains(t, md.String(), "| llama-110m | q4_k_m | 1 | 450 |  |")
	for _, want := range []string{
		"vs llama.cpp type   thr  prefill/s  llama.cpp    ratio   decode/s  llama.cpp    ratio  lcpp read    empty/s  llama.cpp    ratio",
		"llama-110m   q4_0     1       1100       1600    0.69x        400        320    1.25x        54%        420        350    1.20x",
		"qwen2-0.5b   q4_0     1 llama.cpp failed",
	} {
		require.Contains(t, tbl.String(), want)
	}

	// Without the peer's results the section says so.
	for i := range r.LLM {
		r.LLM[i].LlamaCpp, r.LLM[i].LlamaCppErr = nil, ""
	}
	md.Reset()
	tbl.Reset()
	Markdown(&md, r, "x.json")
	Table(&tbl, r)
	require.Contains(t, md.String(), "No peer ran in this section")
	require.NotContains(t, md.String(), "### Against llama.cpp")
	require.NotContains(t, tbl.String(), "vs llama.cpp")
}

// Merging the peer's runs does not depend on their order; a file without
// its per-run list counts its best decode as one run.
func TestLLMPeerMerge(t *testing.T) {
	a := LLMPeer{Runs: 1, TTFTMs: 90, PrefillTokS: 900, DecodeTokS: 30, EmptyDecodeTokS: 45, PeakRSS: 5}
	b := LLMPeer{Runs: 2, TTFTMs: 0, PrefillTokS: 800, DecodeTokS: 40, DecodeRuns: []float64{40, 35}, EmptyDecodeTokS: 44, PeakRSS: 7}
	want := LLMPeer{Runs: 3, TTFTMs: 90, PrefillTokS: 900, DecodeTokS: 40, DecodeRuns: []float64{30, 35, 40}, EmptyDecodeTokS: 45, PeakRSS: 7}
	for _, order := range [][2]LLMPeer{{a, b}, {b, a}} {
		var l *LLMPeer
		x, y := order[0], order[1]
		l = l.merge(&x)
		l = l.merge(&y)
		require.Equal(t, want, *l)
	}
	require.Equal(t, []float64{40, 35}, b.DecodeRuns, "merge leaves its argument alone")
}
