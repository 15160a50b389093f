package llm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// probs are the softmax of logits at temperature 1: [0.5, 0.3, 0.15, 0.05].
var probs = []float64{0.5, 0.3, 0.15, 0.05}

func logitsOf(p []float64) []float32 {
	out := make([]float32, len(p))
	for i, v := range p {
		out[i] = float32(math.Log(v))
	}
	return out
}

func dist(t *testing.T, o SamplerOptions, logits []float32, history []int32) map[int]float64 {
	t.Helper()
	s, err := NewSampler(o)
	require.NoError(t, err)
	out := map[int]float64{}
	for _, c := range s.distribution(logits, history) {
		out[c.tok] = c.v
	}
	return out
}

func requireDist(t *testing.T, want, got map[int]float64) {
	t.Helper()
	require.Len(t, got, len(want), "got %v, want %v", got, want)
	for k, v := range want {
		require.InDelta(t, v, got[k], 1e-6, "token %d: got %v, want %v", k, got, want)
	}
}

func TestSamplerFilters(t *testing.T) {
	lg := logitsOf(probs)
	// The order of the logits must not matter: shuffle them.
	shuffled := []float32{lg[2], lg[0], lg[3], lg[1]} // tokens 0..3 hold p 0.15, 0.5, 0.05, 0.3
	for _, tc := range []struct {
		name string
		o    SamplerOptions
		want map[int]float64
	}{
		{"greedy", SamplerOptions{}, map[int]float64{1: 1}},
		{"temperature 1", SamplerOptions{Temperature: 1}, map[int]float64{1: 0.5, 3: 0.3, 0: 0.15, 2: 0.05}},
		// p^(1/T) renormalized: T = 0.5 squares them.
		{"temperature 0.5", SamplerOptions{Temperature: 0.5}, map[int]float64{1: 0.25 / 0.365, 3: 0.09 / 0.365, 0: 0.0225 / 0.365, 2: 0.0025 / 0.365}},
		{"top-k 2", SamplerOptions{Temperature: 1, TopK: 2}, map[int]float64{1: 0.5 / 0.8, 3: 0.3 / 0.8}},
		{"top-k 1", SamplerOptions{Temperature: 1, TopK: 1}, map[int]float64{1: 1}},
		{"top-p 0.75", SamplerOptions{Temperature: 1, TopP: 0.75}, map[int]float64{1: 0.5 / 0.8, 3: 0.3 / 0.8}},
		{"top-p 0.85", SamplerOptions{Temperature: 1, TopP: 0.85}, map[int]float64{1: 0.5 / 0.95, 3: 0.3 / 0.95, 0: 0.15 / 0.95}},
		{"top-p 0.4", SamplerOptions{Temperature: 1, TopP: 0.4}, map[int]float64{1: 1}},
		// min-p 0.25: keep p ≥ 0.125.
		{"min-p 0.25", SamplerOptions{Temperature: 1, MinP: 0.25}, map[int]float64{1: 0.5 / 0.95, 3: 0.3 / 0.95, 0: 0.15 / 0.95}},
		{"min-p 0.5", SamplerOptions{Temperature: 1, MinP: 0.5}, map[int]float64{1: 0.5 / 0.8, 3: 0.3 / 0.8}},
		{"top-k 3 then top-p 0.6", SamplerOptions{Temperature: 1, TopK: 3, TopP: 0.6}, map[int]float64{1: 0.5 / 0.8, 3: 0.3 / 0.8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireDist(t, tc.want, dist(t, tc.o, shuffled, nil))
		})
	}
}

func TestRepetitionPenalty(t *testing.T) {
	// Positive logits are divided, negative ones multiplied.
	lg := []float32{2, 1.9, -1, -0.5}
	require.Equal(t, map[int]float64{0: 1}, dist(t, SamplerOptions{}, lg, nil))
	require.Equal(t, map[int]float64{1: 1}, dist(t, SamplerOptions{RepetitionPenalty: 2}, lg, []int32{0, 0, 0}))
	// With temperature 1 the penalized distribution is softmax(1, 1.9, -1, -1).
	z := math.Exp(1) + math.Exp(1.9) + 2*math.Exp(-1)
	requireDist(t, map[int]float64{0: math.Exp(1) / z, 1: math.Exp(1.9) / z, 2: math.Exp(-1) / z, 3: math.Exp(-1) / z},
		dist(t, SamplerOptions{Temperature: 1, RepetitionPenalty: 2}, lg, []int32{0, 3}))
	// The window limits the history: token 0 is older than the last 2.
	require.Equal(t, map[int]float64{0: 1}, dist(t, SamplerOptions{RepetitionPenalty: 2, RepeatWindow: 2}, lg, []int32{0, 2, 3}))
	// Out-of-range history tokens are ignored.
	require.Equal(t, map[int]float64{0: 1}, dist(t, SamplerOptions{RepetitionPenalty: 2}, lg, []int32{-1, 99}))
}

func TestGreedyTies(t *testing.T) {
	require.Equal(t, map[int]float64{1: 1}, dist(t, SamplerOptions{}, []float32{0, 3, 3, 1}, nil))
}

// TestSampleFrequencies draws many tokens and compares the frequencies with
// the distribution (a fixed seed: the outcome is deterministic; the bound
// is ~6 standard deviations).
func TestSampleFrequencies(t *testing.T) {
	lg := logitsOf(probs)
	for _, o := range []SamplerOptions{{Temperature: 1, Seed: 3}, {Temperature: 1, TopK: 2, Seed: 4}, {Temperature: 0.5, MinP: 0.1, Seed: 5}} {
		s, err := NewSampler(o)
		require.NoError(t, err)
		want := map[int]float64{}
		for _, c := range s.distribution(lg, nil) {
			want[c.tok] = c.v
		}
		const n = 20000
		count := map[int]int{}
		for i := 0; i < n; i++ {
			count[int(s.Sample(lg, nil))]++
		}
		for tok, c := range count {
			p, ok := want[tok]
			require.True(t, ok, "%+v drew token %d, which the filters removed", o, tok)
			require.InDelta(t, p, float64(c)/n, 6*math.Sqrt(p*(1-p)/n)+1e-9, "%+v token %d", o, tok)
		}
	}
}

func TestSamplerSeed(t *testing.T) {
	lg := logitsOf(probs)
	draw := func(seed uint64) []int32 {
		s, err := NewSampler(SamplerOptions{Temperature: 1, Seed: seed})
		require.NoError(t, err)
		out := make([]int32, 64)
		for i := range out {
			out[i] = s.Sample(lg, nil)
		}
		return out
	}
	require.Equal(t, draw(1), draw(1))
	require.NotEqual(t, draw(1), draw(2))
}

func TestSamplerValidate(t *testing.T) {
	for _, tc := range []struct {
		o    SamplerOptions
		want string
	}{
		{SamplerOptions{Temperature: -1}, "temperature"},
		{SamplerOptions{Temperature: math.NaN()}, "temperature"},
		{SamplerOptions{TopK: -1}, "top-k"},
		{SamplerOptions{TopP: 1.5}, "top-p"},
		{SamplerOptions{MinP: -0.1}, "min-p"},
		{SamplerOptions{RepetitionPenalty: -1}, "repetition penalty"},
		{SamplerOptions{RepeatWindow: -1}, "repeat window"},
	} {
		_, err := NewSampler(tc.o)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestGreedySampleFastPath: greedy Sample without a penalty (one pass over
// the logits) picks what the candidate list does — the lowest id among
// ties — and with a penalty the penalized list decides.
func TestGreedySampleFastPath(t *testing.T) {
	for _, lg := range [][]float32{{0, 3, 3, 1}, {5}, {-1, -2, -1}, {1, 2, 7, 7, 7, -9}} {
		s, err := NewSampler(SamplerOptions{})
		require.NoError(t, err)
		want := s.distribution(lg, nil)
		require.Len(t, want, 1)
		require.Equal(t, int32(want[0].tok), s.Sample(lg, nil), "%v", lg)
	}
	// A penalty on token 1 makes token 2 win: the fast path must not run.
	s, err := NewSampler(SamplerOptions{RepetitionPenalty: 2})
	require.NoError(t, err)
	require.Equal(t, int32(2), s.Sample([]float32{0, 4, 3, 1}, []int32{1}))
}

// TestArgmaxFirst compares the chunked argmax with the plain pass on
// random logits of many lengths, with ties, infinities and NaNs.
func TestArgmaxFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 7, 255, 256, 257, 512, 1000, 32000} {
		for trial := 0; trial < 20; trial++ {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.IntN(50)) // many ties
			}
			switch trial % 5 {
			case 1:
				v[r.IntN(n)] = float32(math.Inf(1))
			case 2:
				v[r.IntN(n)] = float32(math.NaN())
			case 3:
				v[0] = float32(math.NaN())
			case 4:
				for i := range v {
					v[i] = float32(math.Inf(-1))
				}
			}
			require.Equal(t, argmaxPlain(v), argmaxFirst(v), "n=%d trial %d", n, trial)
		}
	}
}

func BenchmarkArgmax(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 32000)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			argmaxPlain(v)
		}
	})
	b.Run("lanes", func(b *testing.B) {
		for b.Loop() {
			argmaxFirst(v)
		}
	})
}
