package llm_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
)

// TestSpeculativeGreedyMatchesQuantized is TestSpeculativeGreedyMatches
// for block-quantized and half-precision targets (weights kept as stored,
// run by QMatMul): the verification pass runs QMatMul on k+1 activation
// rows, one-token decoding on one, and the kernels must round every row
// the same way in both or near-ties flip tokens.
func TestSpeculativeGreedyMatchesQuantized(t *testing.T) {
	const capacity, steps = 96, 48
	cfg := llama.Config{Dim: 64, HiddenDim: 160, Layers: 3, Heads: 4, KVHeads: 2, Vocab: 300, MaxSeq: 128, RopeTheta: 10000, NormEps: 1e-5}
	kq := cfg // K-quants need rows of 256
	kq.Dim, kq.HiddenDim = 256, 512
	for _, tc := range []struct {
		dt  ir.DType
		cfg llama.Config
	}{{ir.Q8_0, cfg}, {ir.Q4_0, cfg}, {ir.Q4_K, kq}, {ir.Float16, cfg}, {ir.BFloat16, cfg}} {
		t.Run(tc.dt.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.gguf")
			require.NoError(t, llama.GenerateGGUF(tc.cfg, tc.dt, 5, path))
			f, err := gguf.Open(path)
			require.NoError(t, err)
			defer f.Close()
			mcfg, w, err := llama.FromGGUF(f)
			require.NoError(t, err)
			require.Equal(t, tc.dt, w.Layers[0].W1.DType, "kept as stored")
			target := compile(t, mcfg, w, capacity, 2, 1, 2, 3, 4, 5, 6, 7, 8)
			dcfg, dw := firstLayers(mcfg, w, 1)
			draft := compile(t, dcfg, dw, capacity, 2, 1, 8)
			ctx := context.Background()
			var accepted int
			for pi, prompt := range [][]int32{{1}, {1, 5, 9, 270, 33}} {
				var want []int32
				_, err := target.Generate(ctx, prompt, llm.Options{MaxTokens: steps}, collect(&want))
				require.NoError(t, err)
				for _, k := range []int{1, 2, 4, 6} {
					var got []int32
					met, err := llm.Speculate(ctx, target, draft, prompt, llm.SpecOptions{Options: llm.Options{MaxTokens: steps}, K: k}, collect(&got))
					require.NoError(t, err)
					require.Equal(t, want, got, "prompt %d, k %d", pi, k)
					accepted += met.Accepted
				}
			}
			require.Positive(t, accepted, "the draft never agreed: the test exercised no batched acceptance")
		})
	}
}
