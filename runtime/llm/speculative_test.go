package llm_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
)

// firstLayers is a draft made of the model's first n layers (the final
// norm and classifier kept), sharing its weights.
func firstLayers(cfg llama.Config, w *llama.Weights, n int) (llama.Config, *llama.Weights) {
	dw := *w
	dw.Layers = w.Layers[:n]
	cfg.Layers = n
	return cfg, &dw
}

// collect returns an emit callback appending to *out.
func collect(out *[]int32) func(int32) bool {
	return func(tok int32) bool {
		*out = append(*out, tok)
		return true
	}
}

// specModels is a random target (3 layers) with drafts: its own first
// layer, an independent random model of the same vocabulary, and an exact
// copy of itself.
type specModels struct {
	cfg    llama.Config
	w      *llama.Weights
	drafts map[string]*llm.Model
}

func newSpecModels(t *testing.T, capacity int) *specModels {
	t.Helper()
	cfg, w, err := llama.LoadLlama2C(writeCheckpoint(t, 64, 96, 3, 4, 2, 70, 128, true, 11))
	require.NoError(t, err)
	ocfg, ow, err := llama.LoadLlama2C(writeCheckpoint(t, 32, 48, 1, 2, 1, 70, 128, false, 12))
	require.NoError(t, err)
	dcfg, dw := firstLayers(cfg, w, 1)
	return &specModels{cfg: cfg, w: w, drafts: map[string]*llm.Model{
		"first-layer": compile(t, dcfg, dw, capacity, 2, 1, 8),
		"other":       compile(t, ocfg, ow, capacity, 2, 1, 8),
		"self":        compile(t, cfg, w, capacity, 2, 1, 8),
	}}
}

// TestSpeculativeGreedyMatches is the guarantee: greedy speculative
// decoding emits Generate's greedy tokens, for every k from 1 to 6, drafts
// that agree always, often or rarely, prompts shorter and longer than the
// prefill graph, and with only a padded verification graph.
func TestSpeculativeGreedyMatches(t *testing.T) {
	const capacity, steps = 96, 48
	sm := newSpecModels(t, capacity)
	// Verification graphs of every length 2..7, and a target with only an
	// 8-token graph (verification padded).
	target := compile(t, sm.cfg, sm.w, capacity, 2, 1, 2, 3, 4, 5, 6, 7, 8)
	padded := compile(t, sm.cfg, sm.w, capacity, 2, 1, 8)
	ctx := context.Background()
	prompts := [][]int32{{1}, {1, 5, 9}, {3, 7, 2, 8, 1, 4, 4, 9, 11, 2, 60, 33}}
	rates := map[string][2]int{}
	for pi, prompt := range prompts {
		var want []int32
		met, err := target.Generate(ctx, prompt, llm.Options{MaxTokens: steps}, collect(&want))
		require.NoError(t, err)
		require.Equal(t, llm.StopMaxTokens, met.Stop)
		for name, draft := range sm.drafts {
			for k := 1; k <= 6; k++ {
				tm := target
				if k == 3 {
					tm = padded
				}
				var got []int32
				met, err := llm.Speculate(ctx, tm, draft, prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: steps}, K: k}, collect(&got))
				require.NoError(t, err)
				require.Equal(t, want, got, "prompt %d, draft %s, k %d", pi, name, k)
				require.Equal(t, llm.StopMaxTokens, met.Stop)
				require.Equal(t, steps, met.Generated)
				require.LessOrEqual(t, met.Accepted, met.Proposed)
				// Each pass yields its accepted tokens and one more.
				require.Equal(t, steps-1, met.Accepted+met.DecodeSteps, "prompt %d, draft %s, k %d: %v", pi, name, k, met)
				r := rates[name]
				rates[name] = [2]int{r[0] + met.Accepted, r[1] + met.Proposed}
			}
		}
	}
	for name, r := range rates {
		t.Logf("draft %s: accepted %d of %d (%.1f%%)", name, r[0], r[1], 100*float64(r[0])/float64(r[1]))
	}
	// DraftMinP changes how much is proposed, not what comes out; at 1
	// nothing is proposed.
	for _, minP := range []float64{0.05, 0.2, 1} {
		var want, got []int32
		prompt := prompts[1]
		_, err := target.Generate(ctx, prompt, llm.Options{MaxTokens: steps}, collect(&want))
		require.NoError(t, err)
		met, err := llm.Speculate(ctx, target, sm.drafts["first-layer"], prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: steps}, K: 4, DraftMinP: minP}, collect(&got))
		require.NoError(t, err)
		require.Equal(t, want, got, "DraftMinP %v", minP)
		t.Logf("DraftMinP %v: %v", minP, met)
		if minP == 1 {
			require.Zero(t, met.Proposed)
			require.Equal(t, steps-1, met.DecodeSteps)
		}
	}
	// The copy agrees always; the first layer alone sometimes, not always.
	require.Equal(t, rates["self"][0], rates["self"][1])
	require.Positive(t, rates["first-layer"][0])
	require.Less(t, rates["first-layer"][0], rates["first-layer"][1])
	require.Less(t, rates["other"][0], rates["other"][1])
}

// TestSpeculativeStops checks the stop conditions against Generate: a
// stop token, a full cache, a callback that stops, and the errors.
func TestSpeculativeStops(t *testing.T) {
	const capacity = 40
	sm := newSpecModels(t, capacity)
	target := compile(t, sm.cfg, sm.w, capacity, 2, 1, 4, 8)
	draft := sm.drafts["first-layer"]
	ctx := context.Background()
	prompt := []int32{1, 5, 9, 3, 7}

	// A full cache: the same tokens, then StopContextFull.
	var want, got []int32
	met, err := target.Generate(ctx, prompt, llm.Options{MaxTokens: 100}, collect(&want))
	require.NoError(t, err)
	require.Equal(t, llm.StopContextFull, met.Stop)
	smet, err := llm.Speculate(ctx, target, draft, prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: 100}, K: 3}, collect(&got))
	require.NoError(t, err)
	require.Equal(t, llm.StopContextFull, smet.Stop)
	require.Equal(t, want, got)

	// A draft with a smaller cache stops proposing when full; the target
	// goes on alone to its own full cache.
	dcfg, dw := firstLayers(sm.cfg, sm.w, 1)
	small := compile(t, dcfg, dw, 16, 2, 1, 8)
	got = nil
	smet, err = llm.Speculate(ctx, target, small, prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: 100}, K: 3}, collect(&got))
	require.NoError(t, err)
	require.Equal(t, llm.StopContextFull, smet.Stop)
	require.Equal(t, want, got)
	require.Greater(t, smet.DecodeSteps, capacity-16, "passes without proposals after the draft is full: %v", smet)

	// A stop token: the 10th generated token, which ends both before it.
	stop := want[9]
	cut := want[:9]
	for i, tok := range want[:9] {
		if tok == stop {
			cut = want[:i]
			break
		}
	}
	got = nil
	smet, err = llm.Speculate(ctx, target, draft, prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: 100, Stop: []int32{stop}}, K: 4}, collect(&got))
	require.NoError(t, err)
	require.Equal(t, llm.StopToken, smet.Stop)
	require.Equal(t, cut, got)

	// The callback stops after 5 tokens, mid-round.
	got = nil
	smet, err = llm.Speculate(ctx, target, draft, prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: 100}, K: 4}, func(tok int32) bool {
		got = append(got, tok)
		return len(got) < 5
	})
	require.NoError(t, err)
	require.Equal(t, llm.StopCallback, smet.Stop)
	require.Equal(t, want[:5], got)

	// A cancelled context.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = llm.Speculate(cctx, target, draft, prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: 10}, K: 2}, collect(&got))
	require.ErrorIs(t, err, context.Canceled)

	// Bad options and models.
	opts := llm.SpecOptions{Options: llm.Options{MaxTokens: 10}, K: 2}
	_, err = llm.Speculate(ctx, target, target, prompt, opts, collect(&got))
	require.ErrorContains(t, err, "another Model")
	bad := opts
	bad.K = 0
	_, err = llm.Speculate(ctx, target, draft, prompt, bad, collect(&got))
	require.ErrorContains(t, err, "K is 0")
	bad = opts
	bad.Slide = true
	_, err = llm.Speculate(ctx, target, draft, prompt, bad, collect(&got))
	require.True(t, errors.Is(err, ir.ErrUnsupported), "%v", err)
	_, err = llm.Speculate(ctx, target, draft, nil, opts, collect(&got))
	require.ErrorContains(t, err, "prompt")
	vcfg, vw, err := llama.LoadLlama2C(writeCheckpoint(t, 32, 48, 1, 2, 1, 71, 64, false, 3))
	require.NoError(t, err)
	_, err = llm.Speculate(ctx, target, compile(t, vcfg, vw, capacity, 0, 1), prompt, opts, collect(&got))
	require.ErrorContains(t, err, "vocabulary has 71 tokens, the target's 70")
}

// TestFeedAllRewind checks FeedAll's rows against one-token Feeds and that
// a rewound cache gives the same logits as a fresh one (stale entries
// beyond the position are never read).
func TestFeedAllRewind(t *testing.T) {
	cfg, w, err := llama.LoadLlama2C(writeCheckpoint(t, 32, 48, 2, 4, 2, 50, 64, true, 5))
	require.NoError(t, err)
	a := compile(t, cfg, w, 32, 2, 1, 4)
	b := compile(t, cfg, w, 32, 2, 1)
	ctx := context.Background()
	toks := []int32{1, 7, 3, 9, 4, 2} // 6 tokens: a 4-token chunk and a padded one
	all, err := a.FeedAll(ctx, toks, nil)
	require.NoError(t, err)
	require.Len(t, all, len(toks)*50)
	for i := range toks {
		lg, err := b.Feed(ctx, toks[i:i+1])
		require.NoError(t, err)
		require.InDeltaSlice(t, toFloat64(lg), toFloat64(all[i*50:(i+1)*50]), 1e-4, "token %d", i)
	}
	// Rewind both to 2 tokens and go on with other tokens: a's slots 2..5
	// hold stale entries, b's too; a third model fed fresh agrees.
	require.NoError(t, a.Rewind(2))
	require.NoError(t, b.Rewind(2))
	require.Equal(t, 2, a.Pos())
	c := compile(t, cfg, w, 32, 2, 1)
	next := []int32{20, 30, 40}
	fresh, err := c.FeedAll(ctx, append([]int32{1, 7}, next...), nil)
	require.NoError(t, err)
	got, err := a.FeedAll(ctx, next, nil)
	require.NoError(t, err)
	require.InDeltaSlice(t, toFloat64(fresh[2*50:]), toFloat64(got), 1e-4)
	lg, err := b.Feed(ctx, next)
	require.NoError(t, err)
	require.InDeltaSlice(t, toFloat64(fresh[4*50:]), toFloat64(lg), 1e-4)
	require.Error(t, a.Rewind(6))
	require.Error(t, a.Rewind(-1))
	_, err = a.FeedAll(ctx, make([]int32, 30), nil)
	require.ErrorIs(t, err, llm.ErrContextFull)
	_, err = a.FeedAll(ctx, []int32{50}, nil)
	require.ErrorContains(t, err, "outside the vocabulary")
}

func toFloat64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// TestSpeculativeSampling checks sampling mode end to end: a seed
// reproduces the output, a copy of the target as draft is (all but)
// always accepted, and the second generated token — drawn through the
// accept-or-resample rule with a draft that often disagrees — follows the
// target's own distribution, computed exactly from its logits.
func TestSpeculativeSampling(t *testing.T) {
	// A tiny vocabulary so that the marginal is estimable.
	const vocab, capacity = 12, 16
	cfg, w, err := llama.LoadLlama2C(writeCheckpoint(t, 32, 48, 2, 4, 2, vocab, 64, true, 21))
	require.NoError(t, err)
	ocfg, ow, err := llama.LoadLlama2C(writeCheckpoint(t, 16, 24, 1, 2, 1, vocab, 64, true, 22))
	require.NoError(t, err)
	target := compile(t, cfg, w, capacity, 2, 1, 2, 4)
	self := compile(t, cfg, w, capacity, 2, 1, 4)
	other := compile(t, ocfg, ow, capacity, 2, 1, 4)
	ctx := context.Background()
	prompt := []int32{1, 4, 7}
	smp := llm.SamplerOptions{Temperature: 1.3, Seed: 7}

	run := func(draft *llm.Model, seed uint64, n, k int, minP float64) ([]int32, llm.SpecMetrics) {
		o := smp
		o.Seed = seed
		var got []int32
		met, err := llm.Speculate(ctx, target, draft, prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: n, Sampler: o}, K: k, DraftMinP: minP}, collect(&got))
		require.NoError(t, err)
		require.Len(t, got, n)
		return got, met
	}
	a, _ := run(other, 7, 10, 3, 0)
	b, _ := run(other, 7, 10, 3, 0)
	require.Equal(t, a, b, "the same seed")
	_, met := run(self, 3, 12, 4, 0)
	require.GreaterOrEqual(t, float64(met.Accepted), 0.95*float64(met.Proposed), "%v", met)

	// The exact distribution of the second token: Σ p(t1) p(t2 | t1).
	probs := func(lg []float32) []float64 {
		p := make([]float64, len(lg))
		mx := math.Inf(-1)
		for _, v := range lg {
			mx = math.Max(mx, float64(v))
		}
		s := 0.0
		for i, v := range lg {
			p[i] = math.Exp((float64(v) - mx) / smp.Temperature)
			s += p[i]
		}
		for i := range p {
			p[i] /= s
		}
		return p
	}
	target.Reset()
	lg, err := target.Feed(ctx, prompt)
	require.NoError(t, err)
	p1 := probs(lg)
	want := make([]float64, vocab)
	for t1 := range vocab {
		require.NoError(t, target.Rewind(len(prompt)))
		lg, err := target.Feed(ctx, []int32{int32(t1)})
		require.NoError(t, err)
		for t2, p := range probs(lg) {
			want[t2] += p1[t1] * p
		}
	}
	// DraftMinP 0.2 skips the proposal in some runs (the draft's top
	// probability here is about that): the mix is distributed as p too.
	for _, minP := range []float64{0, 0.2} {
		const runs = 3000
		count := make([]float64, vocab)
		accepted, proposed := 0, 0
		for i := range runs {
			got, met := run(other, uint64(1000+i), 3, 1, minP)
			count[got[1]]++
			accepted += met.Accepted
			proposed += met.Proposed
		}
		tv := 0.0
		for i := range count {
			tv += math.Abs(count[i]/runs-want[i]) / 2
		}
		t.Logf("DraftMinP %v: second token over %d runs: total variation %.3f from the target's distribution; draft accepted %d of %d", minP, runs, tv, accepted, proposed)
		// Sampling noise alone gives about 0.03 here.
		require.Less(t, tv, 0.07, "want %v, got %v", fmtProbs(want), fmtProbs(count))
		require.Positive(t, accepted)
		require.Less(t, accepted, proposed, "the draft must disagree sometimes for the test to mean anything")
	}
}

func fmtProbs(v []float64) string {
	s := 0.0
	for _, x := range v {
		s += x
	}
	out := ""
	for _, x := range v {
		out += fmt.Sprintf(" %.3f", x/s)
	}
	return out
}

// TestSpeculativeStories measures a trained model (stories260K) with a
// draft of its own first layers: greedy output matches Generate and the
// acceptance rate is logged.
func TestSpeculativeStories(t *testing.T) {
	load(t)
	cfg, w, err := llama.LoadLlama2C(stories)
	require.NoError(t, err)
	const capacity, steps = 256, 120
	target := compile(t, cfg, w, capacity, 2, 1, 5)
	ctx := context.Background()
	var want []int32
	_, err = target.Generate(ctx, []int32{1}, llm.Options{MaxTokens: steps}, collect(&want))
	require.NoError(t, err)
	for _, layers := range []int{1, cfg.Layers - 1} {
		dcfg, dw := firstLayers(cfg, w, layers)
		draft := compile(t, dcfg, dw, capacity, 2, 1)
		var got []int32
		met, err := llm.Speculate(ctx, target, draft, []int32{1}, llm.SpecOptions{Options: llm.Options{MaxTokens: steps}, K: 4}, collect(&got))
		require.NoError(t, err)
		require.Equal(t, want, got, "draft of %d layers", layers)
		t.Logf("draft of %d of %d layers: %v", layers, cfg.Layers, met)
	}
}

// BenchmarkSpeculative compares plain greedy decoding with speculative
// decoding (k 4) on a random model, with a draft of its first layer and
// with an exact copy (an upper bound on acceptance); it reports decode
// tokens per second and the acceptance rate.
func BenchmarkSpeculative(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "m.gguf")
	cfg := llama.Config{Dim: 256, HiddenDim: 512, Layers: 4, Heads: 8, KVHeads: 4, Vocab: 2000, MaxSeq: 256, RopeTheta: 10000, NormEps: 1e-5}
	require.NoError(b, llama.GenerateGGUF(cfg, ir.Float32, 5, path))
	f, err := gguf.Open(path)
	require.NoError(b, err)
	defer f.Close()
	cfg, w, err := llama.FromGGUF(f)
	require.NoError(b, err)
	const k, n = 4, 64
	target := compile(b, cfg, w, 128, 2, 1, k+1, 8)
	dcfg, dw := firstLayers(cfg, w, 1)
	drafts := map[string]*llm.Model{"first-layer": compile(b, dcfg, dw, 128, 2, 1, 8), "copy": compile(b, cfg, w, 128, 2, 1, 8)}
	prompt := []int32{1, 17, 300, 41, 999}
	ctx := context.Background()
	emit := func(int32) bool { return true }
	b.Run("plain", func(b *testing.B) {
		var met llm.Metrics
		for b.Loop() {
			met, err = target.Generate(ctx, prompt, llm.Options{MaxTokens: n}, emit)
			require.NoError(b, err)
		}
		b.ReportMetric(met.DecodeTokensPerSec(), "tok/s")
	})
	for _, name := range []string{"first-layer", "copy"} {
		b.Run(name, func(b *testing.B) {
			var met llm.SpecMetrics
			for b.Loop() {
				met, err = llm.Speculate(ctx, target, drafts[name], prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: n}, K: k}, emit)
				require.NoError(b, err)
			}
			b.ReportMetric(met.DecodeTokensPerSec(), "tok/s")
			b.ReportMetric(met.AcceptanceRate(), "accepted/proposed")
		})
	}
}

// TestSpeculativeGreedyMatchesGroupedF16 is TestSpeculativeGreedyMatches
// where the CPU backend's grouped-query attention runs (an f16 cache, head
// size 64 or 128, all query heads on one KV head): verifying k drafted
// tokens in one pass gives each the bits a decode step gives it.
func TestSpeculativeGreedyMatchesGroupedF16(t *testing.T) {
	// Head sizes 64 (eight heads on one) and 128 (four on one).
	for _, heads := range []int{8, 4} {
		t.Run(fmt.Sprint("headsize", 512/heads), func(t *testing.T) { testSpeculativeGroupedF16(t, heads) })
	}
}

func testSpeculativeGroupedF16(t *testing.T, heads int) {
	const capacity, steps = 96, 32
	cfg, w, err := llama.LoadLlama2C(writeCheckpoint(t, 512, 96, 2, heads, 1, 70, 128, true, 13))
	require.NoError(t, err)
	compileF16 := func(cfg llama.Config, w *llama.Weights, seqs ...int) *llm.Model {
		var rs []llm.Runner
		for _, s := range seqs {
			g, err := llama.Build(cfg, w, llama.Mode{Seq: s, Capacity: capacity, KVType: ir.Float16})
			require.NoError(t, err)
			m, err := weft.New(g, weft.Options{OptLevel: 2})
			require.NoError(t, err)
			rs = append(rs, m)
		}
		m, err := llm.New(rs...)
		require.NoError(t, err)
		return m
	}
	target := compileF16(cfg, w, 1, 2, 3, 4, 5, 6, 7, 8)
	dcfg, dw := firstLayers(cfg, w, 1)
	draft := compileF16(dcfg, dw, 1, 8)
	ctx := context.Background()
	for _, prompt := range [][]int32{{1}, {3, 7, 2, 8, 1, 4, 4, 9, 11, 2, 60, 33}} {
		var want []int32
		_, err := target.Generate(ctx, prompt, llm.Options{MaxTokens: steps}, collect(&want))
		require.NoError(t, err)
		for _, k := range []int{1, 4, 7} {
			var got []int32
			met, err := llm.Speculate(ctx, target, draft, prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: steps}, K: k}, collect(&got))
			require.NoError(t, err)
			require.Equal(t, want, got, "prompt %v, k %d", prompt, k)
			require.Positive(t, met.Accepted, "k %d: the draft agreed nowhere, so nothing was verified in a batch", k)
		}
	}
}
