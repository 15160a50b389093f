package llm_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
)

// benchGGUF loads $WEFT_BENCH_GGUF and compiles the graphs of the given
// sequence lengths (see BenchmarkGGUFDecode for the settings).
func benchGGUF(b *testing.B, seqs ...int) (*llm.Model, int) {
	path := os.Getenv("WEFT_BENCH_GGUF")
	if path == "" {
		b.Skip("set WEFT_BENCH_GGUF to a GGUF model")
	}
	env := func(k string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return v
		}
		return def
	}
	capacity, threads := env("WEFT_BENCH_CTX", 256), env("WEFT_BENCH_THREADS", 2)
	kvT := ir.Float16
	if s := os.Getenv("WEFT_BENCH_KV"); s != "" {
		var err error
		kvT, err = ir.ParseDType(s)
		require.NoError(b, err)
	}
	f, err := gguf.Open(path)
	require.NoError(b, err)
	b.Cleanup(func() { f.Close() })
	cfg, w, err := llama.FromGGUF(f)
	require.NoError(b, err)
	var rs []llm.Runner
	for _, s := range seqs {
		// Prompt graphs compute the last token's logits only, as weft's
		// loader builds them (WEFT_BENCH_ALL_LOGITS=1: every token's, as
		// a speculative verification graph).
		last := s >= 16 && os.Getenv("WEFT_BENCH_ALL_LOGITS") != "1"
		g, err := llama.Build(cfg, w, llama.Mode{Seq: s, Capacity: capacity, KVType: kvT, LastLogits: last, Ungrouped: os.Getenv("WEFT_BENCH_UNGROUPED") == "1"})
		require.NoError(b, err)
		r, err := weft.New(g, weft.Options{OptLevel: 2, Threads: threads})
		require.NoError(b, err)
		rs = append(rs, r)
	}
	m, err := llm.New(rs...)
	require.NoError(b, err)
	return m, cfg.Vocab
}

// BenchmarkGGUFPrefill measures 128-token prefills (tok/s) of the model
// BenchmarkGGUFDecode names, each from an empty cache, with the prompt
// graph weft builds (last token's logits only; WEFT_BENCH_ALL_LOGITS=1 for
// every token's).
func BenchmarkGGUFPrefill(b *testing.B) {
	m, vocab := benchGGUF(b, 1, 128)
	prompt := make([]int32, 128)
	for i := range prompt {
		prompt[i] = int32((i*7919 + 1) % vocab)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Reset()
		if _, err := m.Feed(ctx, prompt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(128*b.N)/b.Elapsed().Seconds(), "tok/s")
}

// BenchmarkGGUFDecode measures single-token decode steps (tok/s) of the
// GGUF model named by $WEFT_BENCH_GGUF (e.g. one `weft mkllm` wrote), with
// a cache of $WEFT_BENCH_CTX tokens (default 256) of $WEFT_BENCH_KV (f32,
// f16 or q8_0; default f16) and $WEFT_BENCH_THREADS threads (default 2);
// WEFT_BENCH_UNGROUPED=1 builds one QMatMul per weight (no QMatMulGroup),
// to compare the two in one session.
// It is skipped without the model; use it with -cpuprofile to profile
// decoding.
func BenchmarkGGUFDecode(b *testing.B) {
	m, vocab := benchGGUF(b, 1)
	// Start half-way through the cache: attention then reads a typical
	// context.
	ctx := context.Background()
	for m.Pos() < m.Capacity/2 {
		_, err := m.Feed(ctx, []int32{int32(m.Pos() % vocab)})
		require.NoError(b, err)
	}
	decode(b, m)
}
