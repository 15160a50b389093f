package llm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/runtime/llm"
)

// BenchmarkStoriesDecode measures greedy single-token decode steps of
// stories260K (reported as tok/s) at -O0 and -O2 with caches of 128 and
// 512 tokens, cycling through every position of the cache.
func BenchmarkStoriesDecode(b *testing.B) {
	load(b)
	cfg, w, err := llama.LoadLlama2C(stories)
	require.NoError(b, err)
	for _, opt := range []int{0, 2} {
		for _, capacity := range []int{128, 512} {
			b.Run(fmt.Sprintf("O%d/ctx%d", opt, capacity), func(b *testing.B) {
				decode(b, compile(b, cfg, w, capacity, opt, 1))
			})
		}
	}
}

func decode(b *testing.B, m *llm.Model) {
	ctx := context.Background()
	tok := int32(1)
	greedy, err := llm.NewSampler(llm.SamplerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if m.Pos() == m.Capacity {
			m.Reset()
		}
		lg, err := m.Feed(ctx, []int32{tok})
		if err != nil {
			b.Fatal(err)
		}
		tok = greedy.Sample(lg, nil)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}
