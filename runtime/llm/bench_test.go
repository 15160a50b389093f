package llm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/frontend/llama"
)

// BenchmarkStoriesDecode measures single-token decode steps of stories260K
// at -O2 with a 512-token cache (reported as tok/s).
func BenchmarkStoriesDecode(b *testing.B) {
	load(b)
	cfg, w, err := llama.LoadLlama2C(stories)
	require.NoError(b, err)
	m := compile(b, cfg, w, 512, 2, 1)
	ctx := context.Background()
	tok := int32(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if m.Pos() == m.Capacity {
			m.Reset()
		}
		lg, err := m.Feed(ctx, []int32{tok})
		if err != nil {
			b.Fatal(err)
		}
		best := 0
		for j, v := range lg {
			if v > lg[best] {
				best = j
			}
		}
		tok = int32(best)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}
