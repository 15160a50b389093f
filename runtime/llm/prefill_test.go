package llm_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/runtime/llm"
)

// TestStoriesPrefill feeds prompts through the prefill buckets (padded
// and chunked) and checks the logits after each chunk, and the decode
// steps that follow, against the naive forward pass.
func TestStoriesPrefill(t *testing.T) {
	data := load(t)
	cfg, w, err := llama.LoadLlama2C(stories)
	require.NoError(t, err)
	ref, err := newNaive(data)
	require.NoError(t, err)
	// A token stream: BOS, then the naive model's greedy continuation.
	toks := []int32{1}
	var want [][]float64
	for pos := 0; pos < 40; pos++ {
		lg := ref.forward(int(toks[pos]), pos)
		want = append(want, lg)
		toks = append(toks, int32(argmax(lg)))
	}
	for _, opt := range []int{0, 2} {
		m := compile(t, cfg, w, 48, opt, 1, 4, 16)
		ctx := context.Background()
		// 7 tokens: one padded 16-token run. Then 21: 16 + 4 + 1.
		// Then single decode steps.
		pos := 0
		for _, n := range []int{7, 21, 1, 1, 3} {
			lg, err := m.Feed(ctx, toks[pos:pos+n])
			require.NoError(t, err)
			pos += n
			requireLogits(t, want[pos-1], lg, "after position "+strconv.Itoa(pos-1))
			require.Equal(t, pos, m.Pos())
		}
	}
}

// TestLastLogitsPrefill: prefill graphs that compute the last token's
// logits only (llama.Mode.LastLogits) give Feed the naive pass's logits
// through padded and chunked prompts; FeedAll, which needs every token's
// logits, does not use them.
func TestLastLogitsPrefill(t *testing.T) {
	data := load(t)
	cfg, w, err := llama.LoadLlama2C(stories)
	require.NoError(t, err)
	ref, err := newNaive(data)
	require.NoError(t, err)
	toks := []int32{1}
	var want [][]float64
	for pos := 0; pos < 40; pos++ {
		lg := ref.forward(int(toks[pos]), pos)
		want = append(want, lg)
		toks = append(toks, int32(argmax(lg)))
	}
	var rs []llm.Runner
	for _, s := range []int{1, 4, 16} {
		g, err := llama.Build(cfg, w, llama.Mode{Seq: s, Capacity: 48, LastLogits: s == 16})
		require.NoError(t, err)
		r, err := weft.New(g, weft.Options{OptLevel: 2, Verify: true})
		require.NoError(t, err)
		rs = append(rs, r)
	}
	m, err := llm.New(rs...)
	require.NoError(t, err)
	ctx := context.Background()
	pos := 0
	for _, n := range []int{7, 21, 1, 3} { // 16 padded; 16 + 4 + 1; ...
		lg, err := m.Feed(ctx, toks[pos:pos+n])
		require.NoError(t, err)
		pos += n
		requireLogits(t, want[pos-1], lg, "after position "+strconv.Itoa(pos-1))
	}
	// FeedAll of 9 tokens: every token's logits, from the 4-token graphs.
	m.Reset()
	all, err := m.FeedAll(ctx, toks[:9], nil)
	require.NoError(t, err)
	require.Len(t, all, 9*cfg.Vocab)
	for i := 0; i < 9; i++ {
		requireLogits(t, want[i], all[i*cfg.Vocab:(i+1)*cfg.Vocab], "FeedAll token "+strconv.Itoa(i))
	}
}

// TestContextPolicy: a prompt longer than the cache fails before running;
// generation stops with StopContextFull when the cache fills.
func TestContextPolicy(t *testing.T) {
	load(t)
	cfg, w, err := llama.LoadLlama2C(stories)
	require.NoError(t, err)
	m := compile(t, cfg, w, 8, 2, 1, 4)
	ctx := context.Background()
	_, err = m.Generate(ctx, make([]int32, 9), llm.Options{MaxTokens: 4}, func(int32) bool { return true })
	require.True(t, errors.Is(err, llm.ErrContextFull), "%v", err)
	var got []int32
	met, err := m.Generate(ctx, []int32{1, 2, 3}, llm.Options{MaxTokens: 100}, func(tok int32) bool {
		got = append(got, tok)
		return true
	})
	require.NoError(t, err)
	require.Equal(t, llm.StopContextFull, met.Stop)
	// 3 prompt tokens + 5 decoded fill the 8 slots; the 6th sampled token
	// (from the last logits) is emitted, and then there is no room.
	require.Len(t, got, 6)
	require.Equal(t, 8, m.Pos())
	_, err = m.Feed(ctx, []int32{1})
	require.True(t, errors.Is(err, llm.ErrContextFull))

	// Out-of-vocabulary tokens are refused.
	m.Reset()
	_, err = m.Feed(ctx, []int32{1, 512})
	require.ErrorContains(t, err, "outside the vocabulary")
}

// TestGenerateControls: stop tokens, the callback and ctx cancellation.
func TestGenerateControls(t *testing.T) {
	load(t)
	cfg, w, err := llama.LoadLlama2C(stories)
	require.NoError(t, err)
	m := compile(t, cfg, w, 64, 2, 1)
	ctx := context.Background()
	var greedy []int32
	_, err = m.Generate(ctx, []int32{1}, llm.Options{MaxTokens: 10}, func(tok int32) bool {
		greedy = append(greedy, tok)
		return true
	})
	require.NoError(t, err)
	// Stopping on the third token's id emits what came before it.
	stop := greedy[2]
	first := 0
	for first < len(greedy) && greedy[first] != stop {
		first++
	}
	var got []int32
	met, err := m.Generate(ctx, []int32{1}, llm.Options{MaxTokens: 10, Stop: []int32{stop}}, func(tok int32) bool {
		got = append(got, tok)
		return true
	})
	require.NoError(t, err)
	require.Equal(t, llm.StopToken, met.Stop)
	require.Equal(t, greedy[:first], got)

	n := 0
	met, err = m.Generate(ctx, []int32{1}, llm.Options{MaxTokens: 10}, func(int32) bool { n++; return n < 3 })
	require.NoError(t, err)
	require.Equal(t, llm.StopCallback, met.Stop)
	require.Equal(t, 3, met.Generated)

	cctx, cancel := context.WithCancel(ctx)
	n = 0
	met, err = m.Generate(cctx, []int32{1}, llm.Options{MaxTokens: 10}, func(int32) bool {
		n++
		if n == 2 {
			cancel()
		}
		return true
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, llm.StopCancelled, met.Stop)
	require.Equal(t, 2, met.Generated)

	// Seeded sampling is reproducible.
	sample := func(seed uint64) []int32 {
		var out []int32
		_, err := m.Generate(ctx, []int32{1}, llm.Options{MaxTokens: 20, Sampler: llm.SamplerOptions{Temperature: 1, TopK: 40, TopP: 0.9, Seed: seed}}, func(tok int32) bool {
			out = append(out, tok)
			return true
		})
		require.NoError(t, err)
		return out
	}
	a, b, c := sample(7), sample(7), sample(8)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)

	_, err = m.Generate(ctx, nil, llm.Options{MaxTokens: 1}, func(int32) bool { return true })
	require.ErrorContains(t, err, "prompt")
	_, err = m.Generate(ctx, []int32{1}, llm.Options{}, func(int32) bool { return true })
	require.ErrorContains(t, err, "MaxTokens")
	_, err = m.Generate(ctx, []int32{1}, llm.Options{MaxTokens: 1, Sampler: llm.SamplerOptions{TopP: 2}}, func(int32) bool { return true })
	require.ErrorContains(t, err, "top-p")
}
