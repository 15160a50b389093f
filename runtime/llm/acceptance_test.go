package llm_test

import (
	"context"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/runtime/llm"
)

const stories = "../../../shared/models/stories260K.bin"

// load returns the checkpoint bytes or skips the test.
func load(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(stories)
	if os.IsNotExist(err) {
		t.Skipf("%s is absent (the shared test models are not checked out)", stories)
	}
	require.NoError(t, err)
	return data
}

// compile builds and compiles the graphs of the given sequence lengths.
func compile(t testing.TB, cfg llama.Config, w *llama.Weights, capacity, opt int, seqs ...int) *llm.Model {
	t.Helper()
	var rs []llm.Runner
	for _, s := range seqs {
		g, err := llama.Build(cfg, w, llama.Mode{Seq: s, Capacity: capacity})
		require.NoError(t, err)
		m, err := weft.New(g, weft.Options{OptLevel: opt, Verify: true})
		require.NoError(t, err, "compile seq %d at -O%d", s, opt)
		rs = append(rs, m)
	}
	m, err := llm.New(rs...)
	require.NoError(t, err)
	return m
}

// requireLogits compares got with want: every logit within 1e-4 relative
// to the largest |want|.
func requireLogits(t *testing.T, want []float64, got []float32, what string) float64 {
	t.Helper()
	require.Len(t, got, len(want))
	scale, worst := 0.0, 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range want {
		worst = math.Max(worst, math.Abs(float64(got[i])-want[i])/scale)
	}
	require.LessOrEqual(t, worst, 1e-4, "%s: logits differ by %.3g relative", what, worst)
	return worst
}

// TestStoriesGreedy is the acceptance test: greedy decoding of
// stories260K from BOS matches the naive forward pass token for token over
// 64 steps, logits within 1e-4 relative, at -O0 and -O2.
func TestStoriesGreedy(t *testing.T) {
	data := load(t)
	cfg, w, err := llama.LoadLlama2C(stories)
	require.NoError(t, err)
	const steps = 64
	ref, err := newNaive(data)
	require.NoError(t, err)
	var want [][]float64
	var wantToks []int32
	tok := 1
	for pos := 0; pos < steps; pos++ {
		lg := ref.forward(tok, pos)
		want = append(want, lg)
		tok = argmax(lg)
		wantToks = append(wantToks, int32(tok))
	}
	for _, opt := range []int{0, 2} {
		t.Run("O"+strconv.Itoa(opt), func(t *testing.T) {
			m := compile(t, cfg, w, 128, opt, 1)
			ctx := context.Background()
			tok := int32(1)
			worst := 0.0
			var got []int32
			for pos := 0; pos < steps; pos++ {
				lg, err := m.Feed(ctx, []int32{tok})
				require.NoError(t, err)
				worst = math.Max(worst, requireLogits(t, want[pos], lg, "step "+strconv.Itoa(pos)))
				best := 0
				for i, v := range lg {
					if v > lg[best] {
						best = i
					}
				}
				tok = int32(best)
				got = append(got, tok)
			}
			require.Equal(t, wantToks, got)
			t.Logf("-O%d: %d greedy tokens match; worst logit error %.2g relative; tokens %v", opt, steps, worst, got)

			// Generate gives the same tokens.
			var streamed []int32
			met, err := m.Generate(ctx, []int32{1}, llm.Options{MaxTokens: steps}, func(tok int32) bool {
				streamed = append(streamed, tok)
				return true
			})
			require.NoError(t, err)
			require.Equal(t, wantToks, streamed)
			require.Equal(t, llm.StopMaxTokens, met.Stop)
			t.Logf("-O%d: %v", opt, met)
		})
	}
}
