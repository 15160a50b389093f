package llm_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/frontend/llama"
)

// writeCheckpoint writes a llama2.c checkpoint with uniform random weights
// (norm weights around 1); unshared stores a separate classifier.
func writeCheckpoint(t *testing.T, dim, hidden, layers, heads, kvHeads, vocab, seq int, unshared bool, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	hd := dim / heads
	kv := kvHeads * hd
	v := vocab
	if unshared {
		v = -vocab
	}
	buf := binary.LittleEndian.AppendUint32(nil, 0)[:0]
	for _, x := range []int{dim, hidden, layers, heads, kvHeads, v, seq} {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(int32(x)))
	}
	put := func(n int, lo, hi float64) {
		for i := 0; i < n; i++ {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(lo+(hi-lo)*rng.Float64())))
		}
	}
	a := 1 / math.Sqrt(float64(dim))
	put(vocab*dim, -1, 1)
	put(layers*dim, 0.8, 1.2)
	put(layers*dim*dim, -a, a)
	put(layers*kv*dim, -a, a)
	put(layers*kv*dim, -a, a)
	put(layers*dim*dim, -a, a)
	put(layers*dim, 0.8, 1.2)
	put(layers*hidden*dim, -a, a)
	put(layers*dim*hidden, -1/math.Sqrt(float64(hidden)), 1/math.Sqrt(float64(hidden)))
	put(layers*hidden*dim, -a, a)
	put(dim, 0.8, 1.2)
	put(2*seq*hd/2, -1, 1) // legacy RoPE tables: ignored by both readers
	if unshared {
		put(vocab*dim, -a, a)
	}
	path := filepath.Join(t.TempDir(), "model.bin")
	require.NoError(t, os.WriteFile(path, buf, 0o644))
	return path
}

// TestSyntheticModels runs random models of other shapes (unshared
// classifier, no GQA, GQA 4:1, longer heads) against the naive pass:
// prefill of a prompt, then greedy decoding.
func TestSyntheticModels(t *testing.T) {
	for i, tc := range []struct {
		dim, hidden, layers, heads, kvHeads, vocab int
		unshared                                   bool
	}{
		{32, 48, 2, 4, 2, 50, true},
		{24, 40, 1, 2, 2, 37, false},
		{64, 96, 3, 8, 2, 70, true},
		{32, 20, 2, 1, 1, 16, false},
	} {
		path := writeCheckpoint(t, tc.dim, tc.hidden, tc.layers, tc.heads, tc.kvHeads, tc.vocab, 64, tc.unshared, uint64(i))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		cfg, w, err := llama.LoadLlama2C(path)
		require.NoError(t, err)
		require.Equal(t, !tc.unshared, cfg.TiedEmbeddings)
		ref, err := newNaive(data)
		require.NoError(t, err)
		prompt := []int32{1, 5, 9, 3, 7}
		toks := append([]int32(nil), prompt...)
		var want [][]float64
		for pos := 0; pos < 24; pos++ {
			lg := ref.forward(int(toks[pos]), pos)
			want = append(want, lg)
			if pos >= len(prompt)-1 {
				toks = append(toks, int32(argmax(lg)))
			}
		}
		for _, opt := range []int{0, 2} {
			m := compile(t, cfg, w, 32, opt, 1, 8)
			lg, err := m.Feed(context.Background(), prompt)
			require.NoError(t, err)
			requireLogits(t, want[len(prompt)-1], lg, "prefill")
			for pos := len(prompt); pos < 24; pos++ {
				lg, err := m.Feed(context.Background(), toks[pos:pos+1])
				require.NoError(t, err)
				requireLogits(t, want[pos], lg, "decode "+strconv.Itoa(pos))
			}
		}
	}
}
