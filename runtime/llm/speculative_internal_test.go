package llm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAcceptOrResample checks the speculative sampling rule: a token drawn
// from q, then accepted or replaced, is distributed as p, and accepted with
// probability Σ min(p, q).
func TestAcceptOrResample(t *testing.T) {
	for _, tc := range []struct {
		name string
		p, q []float64
	}{
		{"overlapping", []float64{0.5, 0.2, 0.2, 0.1, 0}, []float64{0.1, 0.4, 0.2, 0.1, 0.2}},
		{"disjoint", []float64{0.7, 0.3, 0, 0}, []float64{0, 0, 0.5, 0.5}},
		{"equal", []float64{0.25, 0.25, 0.5}, []float64{0.25, 0.25, 0.5}},
		{"one-hot draft", []float64{0.3, 0.3, 0.4}, []float64{0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			const n = 200000
			count := make([]float64, len(tc.p))
			resid := make([]float64, len(tc.p))
			acc := 0
			for range n {
				d := draw(tc.q, rng)
				require.Positive(t, tc.q[d])
				tok, ok := acceptOrResample(tc.p, tc.q, d, resid, rng)
				if ok {
					acc++
					require.Equal(t, d, tok)
				}
				count[tok]++
			}
			wantAcc := 0.0
			for i := range tc.p {
				// 4.5 standard deviations of a binomial proportion.
				sd := math.Sqrt(tc.p[i]*(1-tc.p[i])/n) + 1e-9
				require.InDelta(t, tc.p[i], count[i]/n, 4.5*sd, "token %d", i)
				wantAcc += math.Min(tc.p[i], tc.q[i])
			}
			require.InDelta(t, wantAcc, float64(acc)/n, 0.005)
		})
	}
}

// TestDraw checks draw's frequencies and that zero weights are never drawn.
func TestDraw(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	w := []float64{0, 2, 0, 1, 1, 0}
	count := make([]float64, len(w))
	const n = 100000
	for range n {
		count[draw(w, rng)]++
	}
	require.Zero(t, count[0]+count[2]+count[5])
	require.InDelta(t, 0.5, count[1]/n, 0.01)
	require.InDelta(t, 0.25, count[3]/n, 0.01)
}
