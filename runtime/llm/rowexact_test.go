package llm_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
)

// TestFeedAllRowExact is the bitwise contract speculative greedy decoding
// rests on: FeedAll of k+1 tokens (the target's verification run, one
// graph of several tokens) returns for every token exactly the logits
// that Feed of that token alone (the decode graph) returns, for every
// weight type, KV cache type, optimization level and thread count. The
// model has llama-110m's width, vocabulary and grouped-query attention
// (12 query heads over 4 KV heads) but two layers. Verification graphs of
// 5 rows and of 40 (where f16/bf16 QMatMul would take its packed GEMM)
// are both checked.
//
// It caught: the SwiGLU's SiLU rounding the elements in the scalar tail
// of the vector kernel differently (the group kernel cuts the rows into
// tasks that depend on the row count, so an element fell in a tail in one
// graph and not in the other); and f16/bf16 verification graphs running
// ungrouped ops where decode runs QMatMulGroup: at -O2 SiLU·up became a
// fused chain computing SiLU in float64 (decode: the float32 vector
// kernel), and from 32 rows QMatMul takes a packed GEMM that sums in
// another order.
func TestFeedAllRowExact(t *testing.T) {
	cfg := llama.Llama110M
	cfg.Layers, cfg.KVHeads, cfg.MaxSeq = 2, 4, 128
	type wcase struct {
		name string
		gen  ir.DType               // GenerateGGUF's type
		edit func(w *llama.Weights) // nil: as generated
	}
	wcases := []wcase{
		{"q8_0", ir.Q8_0, nil}, {"q4_0", ir.Q4_0, nil}, {"q4_k", ir.Q4_K, nil},
		{"q6_k", ir.Q4_K, func(w *llama.Weights) { toQ6K(w, true) }},
		// Q4_K_M-style: wv, w2 and the classifier in Q6_K (ungrouped q/k/v).
		{"q4_k+q6_k", ir.Q4_K, func(w *llama.Weights) { toQ6K(w, false) }},
		{"f16", ir.Float16, nil}, {"bf16", ir.BFloat16, nil},
	}
	kvs := []ir.DType{ir.Float32, ir.Float16, ir.Q8_0}
	if raceEnabled { // generating the models dominates: two types, one cache
		wcases, kvs = []wcase{wcases[0], wcases[5]}, kvs[1:2]
	}
	type run struct{ opt, threads int }
	// Every level and thread count with the default f16 cache; the other
	// caches (which change attention only) at -O0 on one thread and -O2
	// on two.
	runsFor := func(kv ir.DType) []run {
		if testing.Short() || raceEnabled {
			return []run{{2, 2}}
		}
		if kv == ir.Float16 {
			return []run{{0, 1}, {0, 2}, {2, 1}, {2, 2}}
		}
		return []run{{0, 1}, {2, 2}}
	}
	prompt := []int32{1, 310, 2, 9017, 45, 31999, 12, 800}
	draft := []int32{4, 28000, 73, 1, 19999} // k = 4: the last token and four proposals
	long := make([]int32, 33)                // a 40-row graph: 33 tokens and 7 padded rows
	for i := range long {
		long[i] = int32((i*7919 + 17) % cfg.Vocab)
	}
	ctx := context.Background()
	gen := map[ir.DType]*llama.Weights{} // one generated model per type
	var mcfg llama.Config
	for _, wc := range wcases {
		w := gen[wc.gen]
		if w == nil {
			path := filepath.Join(t.TempDir(), wc.gen.String()+".gguf")
			require.NoError(t, llama.GenerateGGUF(cfg, wc.gen, 7, path))
			f, err := gguf.Open(path)
			require.NoError(t, err)
			t.Cleanup(func() { f.Close() })
			mcfg, w, err = llama.FromGGUF(f)
			require.NoError(t, err)
			gen[wc.gen] = w
		}
		if wc.edit != nil {
			ew := *w
			ew.Layers = append([]llama.Layer(nil), w.Layers...)
			wc.edit(&ew)
			w = &ew
		}
		for _, kv := range kvs {
			for _, r := range runsFor(kv) {
				t.Run(fmt.Sprintf("%s/kv=%v/O%d/threads=%d", wc.name, kv, r.opt, r.threads), func(t *testing.T) {
					m := compileKV(t, mcfg, w, r.opt, r.threads, kv, 1, len(draft), 40)
					requireRowExact(t, ctx, m, prompt, draft, "5 rows")
					if r == (run{2, 2}) {
						requireRowExact(t, ctx, m, prompt, long, "40 rows")
					}
				})
			}
		}
	}
}

// compileKV compiles graphs of the given sequence lengths with a KV cache
// of type kv, at optimization level opt on threads CPU threads.
func compileKV(t *testing.T, cfg llama.Config, w *llama.Weights, opt, threads int, kv ir.DType, seqs ...int) *llm.Model {
	t.Helper()
	var rs []llm.Runner
	for _, s := range seqs {
		g, err := llama.Build(cfg, w, llama.Mode{Seq: s, Capacity: cfg.MaxSeq, KVType: kv})
		require.NoError(t, err)
		m, err := weft.New(g, weft.Options{OptLevel: opt, Threads: threads})
		require.NoError(t, err, "compile seq %d", s)
		rs = append(rs, m)
	}
	m, err := llm.New(rs...)
	require.NoError(t, err)
	return m
}

// requireRowExact feeds prompt, then toks in one FeedAll, rewinds and
// feeds toks one at a time: every logit must match bit for bit.
func requireRowExact(t *testing.T, ctx context.Context, m *llm.Model, prompt, toks []int32, name string) {
	t.Helper()
	m.Reset()
	_, err := m.Feed(ctx, prompt)
	require.NoError(t, err, name)
	all, err := m.FeedAll(ctx, toks, nil)
	require.NoError(t, err, name)
	all = append([]float32(nil), all...)
	require.NoError(t, m.Rewind(len(prompt)))
	V := m.Vocab
	for i := range toks {
		one, err := m.Feed(ctx, toks[i:i+1])
		require.NoError(t, err, name)
		bad, first := 0, -1
		for j := 0; j < V; j++ {
			if math.Float32bits(one[j]) != math.Float32bits(all[i*V+j]) {
				if first < 0 {
					first = j
				}
				bad++
			}
		}
		if bad > 0 {
			t.Fatalf("%s: token %d of %d: %d of %d logits differ between FeedAll and Feed; first: logit %d, %v != %v",
				name, i, len(toks), bad, V, first, all[i*V+first], one[first])
		}
	}
}

// toQ6K replaces layer matrices and the classifier of w (Q4_K, as
// generated) by random Q6_K ones of the same shapes (ir/quant has no Q6_K
// encoder): all of them, or (all false) the ones a Q4_K_M file keeps in
// Q6_K (wv, w2 and the classifier).
func toQ6K(w *llama.Weights, all bool) {
	r := rand.New(rand.NewPCG(3, 4))
	q6 := func(t *ir.Tensor) *ir.Tensor {
		out := ir.NewTensor(ir.Q6_K, t.Shape)
		bb := ir.Q6_K.BlockBytes()
		for i := range out.Data {
			out.Data[i] = byte(r.Uint32())
		}
		for b := 0; b+bb <= len(out.Data); b += bb {
			// d·sc·(q−32), |sc| ≤ 128, |q−32| ≤ 32: weights up to about 0.4.
			binary.LittleEndian.PutUint16(out.Data[b+208:], ir.F32ToF16(float32(1e-4*(0.5+r.Float64()))))
		}
		return out
	}
	for i := range w.Layers {
		l := &w.Layers[i]
		l.Wv, l.W2 = q6(l.Wv), q6(l.W2)
		if all {
			l.Wq, l.Wk, l.Wo, l.W1, l.W3 = q6(l.Wq), q6(l.Wk), q6(l.Wo), q6(l.W1), q6(l.W3)
		}
	}
	if w.Output != nil {
		w.Output = q6(w.Output)
	}
}
