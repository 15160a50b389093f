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

// BenchmarkGGUFDecode measures single-token decode steps (tok/s) of the
// GGUF model named by $WEFT_BENCH_GGUF (e.g. one `weft mkllm` wrote), with
// a cache of $WEFT_BENCH_CTX tokens (default 256) of $WEFT_BENCH_KV (f32,
// f16 or q8_0; default f16) and $WEFT_BENCH_THREADS threads (default 2).
// It is skipped without the model; use it with -cpuprofile to profile
// decoding.
func BenchmarkGGUFDecode(b *testing.B) {
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
	defer f.Close()
	cfg, w, err := llama.FromGGUF(f)
	require.NoError(b, err)
	g, err := llama.Build(cfg, w, llama.Mode{Seq: 1, Capacity: capacity, KVType: kvT})
	require.NoError(b, err)
	r, err := weft.New(g, weft.Options{OptLevel: 2, Threads: threads})
	require.NoError(b, err)
	m, err := llm.New(r)
	require.NoError(b, err)
	// Start half-way through the cache: attention then reads a typical
	// context.
	ctx := context.Background()
	for m.Pos() < capacity/2 {
		_, err := m.Feed(ctx, []int32{int32(m.Pos() % cfg.Vocab)})
		require.NoError(b, err)
	}
	decode(b, m)
}
