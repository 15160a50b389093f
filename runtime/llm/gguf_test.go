package llm_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
	"github.com/weftrt/weft/runtime/llm"
)

// naiveGGUF is a plain forward pass over a GGUF file's tensors, written
// from llama.cpp's conventions (matrices [out, in]; llama: adjacent RoPE
// pairs; qwen2: NeoX halves and q/k/v biases), float64 loops, weights
// decoded by ir/quant's codecs, independent of frontend/llama.
type naiveGGUF struct {
	f                                             *gguf.File
	dim, hidden, layers, heads, kvHeads, vocab, R int
	neox                                          bool
	theta, eps                                    float64
	keys, vals                                    [][]float64
	cache                                         map[string][]float64
}

func newNaiveGGUF(t *testing.T, f *gguf.File) *naiveGGUF {
	arch := f.Architecture()
	get := func(k string) int {
		v, err := f.Int(arch + "." + k)
		require.NoError(t, err)
		return int(v)
	}
	fl := func(k string) float64 {
		v, err := f.Float32(arch + "." + k)
		require.NoError(t, err)
		return float64(v)
	}
	n := &naiveGGUF{f: f, dim: get("embedding_length"), hidden: get("feed_forward_length"), layers: get("block_count"),
		heads: get("attention.head_count"), kvHeads: get("attention.head_count_kv"), R: get("rope.dimension_count"),
		neox: arch == "qwen2", theta: fl("rope.freq_base"), eps: fl("attention.layer_norm_rms_epsilon"), cache: map[string][]float64{}}
	info, ok := f.TensorInfo("token_embd.weight")
	require.True(t, ok)
	n.vocab = int(info.Shape[0])
	n.keys, n.vals = make([][]float64, n.layers), make([][]float64, n.layers)
	return n
}

// w returns a tensor's elements as float64 (nil if absent).
func (n *naiveGGUF) w(name string) []float64 {
	if v, ok := n.cache[name]; ok {
		return v
	}
	if _, ok := n.f.TensorInfo(name); !ok {
		return nil
	}
	t, err := n.f.Tensor(name)
	if err != nil {
		panic(err)
	}
	d, err := quant.Dequantize(t)
	if err != nil {
		panic(err)
	}
	out := make([]float64, d.Len())
	for i, x := range d.Float32s() {
		out[i] = float64(x)
	}
	n.cache[name] = out
	return out
}

func (n *naiveGGUF) rms(x, w []float64) []float64 {
	ss := 0.0
	for _, v := range x {
		ss += v * v
	}
	r := 1 / math.Sqrt(ss/float64(len(x))+n.eps)
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] * r * w[i]
	}
	return out
}

func (n *naiveGGUF) rope(v []float64, pos int) {
	hd := n.dim / n.heads
	for h := 0; h < len(v)/hd; h++ {
		head := v[h*hd : (h+1)*hd]
		for i := 0; i < n.R/2; i++ {
			a := float64(pos) * math.Pow(n.theta, -2*float64(i)/float64(n.R))
			c, s := math.Cos(a), math.Sin(a)
			j, k := 2*i, 2*i+1
			if n.neox {
				j, k = i, i+n.R/2
			}
			x1, x2 := head[j], head[k]
			head[j], head[k] = x1*c-x2*s, x2*c+x1*s
		}
	}
}

func (n *naiveGGUF) forward(tok, pos int) []float64 {
	d, hd := n.dim, n.dim/n.heads
	kvDim := n.kvHeads * hd
	x := append([]float64(nil), n.w("token_embd.weight")[tok*d:(tok+1)*d]...)
	addBias := func(y []float64, name string) {
		for i, b := range n.w(name) {
			y[i] += b
		}
	}
	for l := 0; l < n.layers; l++ {
		p := "blk." + strconv.Itoa(l) + "."
		xb := n.rms(x, n.w(p+"attn_norm.weight"))
		q := matvec(n.w(p+"attn_q.weight"), xb, d)
		k := matvec(n.w(p+"attn_k.weight"), xb, kvDim)
		v := matvec(n.w(p+"attn_v.weight"), xb, kvDim)
		addBias(q, p+"attn_q.bias")
		addBias(k, p+"attn_k.bias")
		addBias(v, p+"attn_v.bias")
		n.rope(q, pos)
		n.rope(k, pos)
		n.keys[l] = append(n.keys[l][:pos*kvDim], k...)
		n.vals[l] = append(n.vals[l][:pos*kvDim], v...)
		att := naiveAttention(q, n.keys[l], n.vals[l], pos, n.heads, n.kvHeads, hd)
		o := matvec(n.w(p+"attn_output.weight"), att, d)
		for i := range x {
			x[i] += o[i]
		}
		xb = n.rms(x, n.w(p+"ffn_norm.weight"))
		g := matvec(n.w(p+"ffn_gate.weight"), xb, n.hidden)
		u := matvec(n.w(p+"ffn_up.weight"), xb, n.hidden)
		for i := range g {
			g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
		}
		o = matvec(n.w(p+"ffn_down.weight"), g, d)
		for i := range x {
			x[i] += o[i]
		}
	}
	x = n.rms(x, n.w("output_norm.weight"))
	cls := n.w("output.weight")
	if cls == nil {
		cls = n.w("token_embd.weight")
	}
	return matvec(cls, x, n.vocab)
}

// requireClose compares logits within tol relative to the largest |want|.
func requireClose(t *testing.T, want []float64, got []float32, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want))
	scale, worst := 0.0, 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range want {
		worst = math.Max(worst, math.Abs(float64(got[i])-want[i])/scale)
	}
	require.LessOrEqual(t, worst, tol, "%s: logits differ by %.3g relative", what, worst)
}

// TestGGUFModels: random GGUF models (llama and qwen2 conventions, tied and
// untied classifiers, GQA, every weight format FromGGUF handles) read by
// FromGGUF, built and compiled, match the naive pass over the same file in
// prefill and decode.
func TestGGUFModels(t *testing.T) {
	base := llama.Config{Dim: 64, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 300, MaxSeq: 64, RopeTheta: 10000, NormEps: 1e-5}
	qwen := base
	qwen.RopeNeoX, qwen.AttnBias, qwen.RopeTheta, qwen.NormEps, qwen.TiedEmbeddings = true, true, 1e6, 1e-6, true
	mha := base
	mha.KVHeads, mha.TiedEmbeddings = 4, true
	// QMatMul kernels may quantize the activations to 8 bits (as llama.cpp
	// does), which moves logits by a few 1e-3 relative; a layout mistake
	// moves them by O(1).
	const qTol = 2e-2
	kq := base // K-quants need rows of 256
	kq.Dim, kq.HiddenDim = 256, 512
	for _, tc := range []struct {
		name string
		cfg  llama.Config
		dt   ir.DType
		tol  float64
	}{
		{"llama/f32", base, ir.Float32, 1e-4},
		{"llama/f16", base, ir.Float16, 1e-4},
		{"llama/q8_0", base, ir.Q8_0, qTol},
		{"llama/q4_0", base, ir.Q4_0, qTol},
		{"llama/q4_k", kq, ir.Q4_K, qTol}, // kept as Q4_K: activations quantized to 8 bits
		{"llama-tied/q4_0", mha, ir.Q4_0, qTol},
		{"qwen2/f32", qwen, ir.Float32, 1e-4},
		{"qwen2/bf16", qwen, ir.BFloat16, 1e-4},
		{"qwen2/q8_0", qwen, ir.Q8_0, qTol},
		{"qwen2/q4_0", qwen, ir.Q4_0, qTol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.gguf")
			require.NoError(t, llama.GenerateGGUF(tc.cfg, tc.dt, 7, path))
			f, err := gguf.Open(path)
			require.NoError(t, err)
			defer f.Close()
			cfg, w, err := llama.FromGGUF(f)
			require.NoError(t, err)
			want := tc.cfg
			want.Vocab = 300
			require.Equal(t, want, cfg)
			if tc.dt != ir.Float32 {
				require.Equal(t, tc.dt, w.Layers[1].W2.DType, "kept as stored")
				require.Equal(t, tc.dt, w.Output.DType)
			} else {
				require.Equal(t, ir.Float32, w.Layers[1].W2.DType)
			}
			ref := newNaiveGGUF(t, f)
			prompt := []int32{1, 50, 99, 3, 270, 8}
			toks := append([]int32(nil), prompt...)
			var wantLg [][]float64
			for pos := 0; pos < 12; pos++ {
				lg := ref.forward(int(toks[pos]), pos)
				wantLg = append(wantLg, lg)
				if pos >= len(prompt)-1 {
					toks = append(toks, int32(argmax(lg)))
				}
			}
			for _, opt := range []int{0, 2} {
				m := compile(t, cfg, w, 32, opt, 1, 4)
				lg, err := m.Feed(context.Background(), prompt)
				require.NoError(t, err)
				requireClose(t, wantLg[len(prompt)-1], lg, tc.tol, fmt.Sprintf("-O%d prefill", opt))
				for pos := len(prompt); pos < 12; pos++ {
					lg, err := m.Feed(context.Background(), toks[pos:pos+1])
					require.NoError(t, err)
					requireClose(t, wantLg[pos], lg, tc.tol, fmt.Sprintf("-O%d decode %d", opt, pos))
				}
			}
		})
	}
}

// TestContinue: a conversation continued from the cache (Continue) gives
// the same greedy tokens as a fresh generation over the whole history.
func TestContinue(t *testing.T) {
	cfg := llama.Config{Dim: 64, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 300, MaxSeq: 64, RopeTheta: 10000, NormEps: 1e-5}
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, llama.GenerateGGUF(cfg, ir.Q8_0, 3, path))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cfg, w, err := llama.FromGGUF(f)
	require.NoError(t, err)
	m := compile(t, cfg, w, 64, 2, 1, 8)
	ctx := context.Background()
	collect := func(out *[]int32) func(int32) bool {
		return func(tok int32) bool { *out = append(*out, tok); return true }
	}
	p1, p2 := []int32{1, 40, 41, 42}, []int32{7, 8, 9, 10, 11}
	var r1, r2, fresh []int32
	// OnStep sees every decode run, and its durations are what Decode adds up.
	var steps []time.Duration
	onStep := func(d time.Duration) { steps = append(steps, d) }
	met, err := m.Generate(ctx, p1, llm.Options{MaxTokens: 5, OnStep: onStep}, collect(&r1))
	require.NoError(t, err)
	require.Equal(t, llm.StopMaxTokens, met.Stop)
	require.Len(t, steps, met.DecodeSteps)
	require.Equal(t, 4, met.DecodeSteps)
	var sum time.Duration
	for _, d := range steps {
		sum += d
	}
	require.Equal(t, met.Decode, sum)
	require.Equal(t, met.DecodeFastest, slices.Min(steps))
	require.Equal(t, len(p1)+4, m.Pos(), "the last emitted token is not fed")
	// Continue: the last reply token, then the next turn.
	next := append([]int32{r1[len(r1)-1]}, p2...)
	_, err = m.Continue(ctx, next, llm.Options{MaxTokens: 6}, collect(&r2))
	require.NoError(t, err)
	require.Equal(t, len(p1)+len(r1)+len(p2)+5, m.Pos())
	history := append(append(append([]int32(nil), p1...), r1...), p2...)
	_, err = m.Generate(ctx, history, llm.Options{MaxTokens: 6}, collect(&fresh))
	require.NoError(t, err)
	require.Equal(t, fresh, r2)
	// A stop token ends the reply without being fed: Pos excludes it.
	at := 1
	for at < len(r2) && slices.Contains(r2[:at], r2[at]) {
		at++
	}
	require.Less(t, at, len(r2), "replies of one repeated token: pick another seed")
	var r3 []int32
	met, err = m.Generate(ctx, history, llm.Options{MaxTokens: 6, Stop: []int32{r2[at]}}, collect(&r3))
	require.NoError(t, err)
	require.Equal(t, llm.StopToken, met.Stop)
	require.Equal(t, r2[:at], r3)
	require.Equal(t, len(history)+at, m.Pos())
}

// TestSlide: with Slide, a full cache is re-prefilled with the newest half
// of the history and generation goes on exactly as a fresh generation from
// those tokens would.
func TestSlide(t *testing.T) {
	cfg := llama.Config{Dim: 64, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 300, MaxSeq: 64, RopeTheta: 10000, NormEps: 1e-5}
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, llama.GenerateGGUF(cfg, ir.Float32, 5, path))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cfg, w, err := llama.FromGGUF(f)
	require.NoError(t, err)
	m := compile(t, cfg, w, 16, 2, 1, 8)
	ctx := context.Background()
	prompt := []int32{1, 20, 30, 40}
	var got []int32
	emit := func(tok int32) bool { got = append(got, tok); return true }
	met, err := m.Generate(ctx, prompt, llm.Options{MaxTokens: 30, Slide: true}, emit)
	require.NoError(t, err)
	require.Equal(t, llm.StopMaxTokens, met.Stop)
	require.Len(t, got, 30)
	require.Equal(t, 2, met.Slides, "slides after tokens 13 and 22")
	require.Equal(t, 16, met.Reprefilled)
	// Token 13 came when the cache was full (4 prompt + 12 fed): the newest
	// 8 tokens of the history (13 last) were prefilled again, and tokens
	// 14..22 continue from them.
	history := append(append([]int32(nil), prompt...), got[:13]...)
	keep := history[len(history)-8:]
	var fresh []int32
	_, err = m.Generate(ctx, keep, llm.Options{MaxTokens: 9}, func(tok int32) bool { fresh = append(fresh, tok); return true })
	require.NoError(t, err)
	require.Equal(t, fresh, got[13:22])
	// Without Slide the same run stops.
	met, err = m.Generate(ctx, prompt, llm.Options{MaxTokens: 30}, func(int32) bool { return true })
	require.NoError(t, err)
	require.Equal(t, llm.StopContextFull, met.Stop)
	require.Equal(t, 13, met.Generated)
}

// TestKVCacheTypes: f32, f16 and q8_0 caches give the naive pass's logits
// (f32 within 1e-4 relative; f16 within its rounding, 5e-4; q8_0 within its
// 8-bit blocks, 1e-2), through prefill and decode, at -O0 and -O2; and the
// f16 and q8_0 logits stay as close to the f32 cache's.
func TestKVCacheTypes(t *testing.T) {
	// Head size 32: a whole q8_0 block per row.
	cfg := llama.Config{Dim: 128, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 300, MaxSeq: 64, RopeTheta: 10000, NormEps: 1e-5}
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, llama.GenerateGGUF(cfg, ir.Float32, 9, path))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cfg, w, err := llama.FromGGUF(f)
	require.NoError(t, err)
	ref := newNaiveGGUF(t, f)
	prompt := []int32{1, 11, 12, 13, 14}
	toks := append([]int32(nil), prompt...)
	var want [][]float64
	const steps = 24
	for pos := 0; pos < steps; pos++ {
		lg := ref.forward(int(toks[pos]), pos)
		want = append(want, lg)
		if pos >= len(prompt)-1 {
			toks = append(toks, int32(argmax(lg)))
		}
	}
	f32Logits := map[int][][]float32{}
	for _, tc := range []struct {
		kv  ir.DType
		tol float64
	}{{ir.Float32, 1e-4}, {ir.Float16, 5e-4}, {ir.Q8_0, 1e-2}} {
		for _, opt := range []int{0, 2} {
			t.Run(fmt.Sprintf("%v/O%d", tc.kv, opt), func(t *testing.T) {
				var rs []llm.Runner
				for _, s := range []int{1, 4} {
					g, err := llama.Build(cfg, w, llama.Mode{Seq: s, Capacity: 32, KVType: tc.kv})
					require.NoError(t, err)
					r, err := weft.New(g, weft.Options{OptLevel: opt, Verify: true})
					require.NoError(t, err)
					rs = append(rs, r)
				}
				m, err := llm.New(rs...)
				require.NoError(t, err)
				require.Equal(t, tc.kv, m.KVType)
				var got [][]float32
				lg, err := m.Feed(context.Background(), prompt)
				require.NoError(t, err)
				requireClose(t, want[len(prompt)-1], lg, tc.tol, "prefill")
				got = append(got, slices.Clone(lg))
				for pos := len(prompt); pos < steps; pos++ {
					lg, err := m.Feed(context.Background(), toks[pos:pos+1])
					require.NoError(t, err)
					requireClose(t, want[pos], lg, tc.tol, "decode "+strconv.Itoa(pos))
					got = append(got, slices.Clone(lg))
				}
				if tc.kv == ir.Float32 {
					f32Logits[opt] = got
					return
				}
				for i, lg := range got {
					w := make([]float64, len(lg))
					for j, v := range f32Logits[opt][i] {
						w[j] = float64(v)
					}
					requireClose(t, w, lg, tc.tol, fmt.Sprintf("%v against the f32 cache, step %d", tc.kv, i))
				}
			})
		}
	}
	// A q8_0 cache needs whole blocks per row.
	small := cfg
	small.Dim = 64 // head size 16
	_, err = llama.Build(small, &llama.Weights{}, llama.Mode{Seq: 1, Capacity: 32, KVType: ir.Q8_0})
	require.ErrorIs(t, err, ir.ErrUnsupported)
}

// TestGrowing: a cache that starts at one page and doubles on demand gives
// the same greedy tokens as a fixed full-size cache, and grows only when
// the context needs it.
func TestGrowing(t *testing.T) {
	cfg := llama.Config{Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 300, MaxSeq: 640, RopeTheta: 10000, NormEps: 1e-5}
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, llama.GenerateGGUF(cfg, ir.Float32, 4, path))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cfg, w, err := llama.FromGGUF(f)
	require.NoError(t, err)
	var built []int
	factory := func(seq, capacity int) (llm.Runner, error) {
		built = append(built, capacity)
		g, err := llama.Build(cfg, w, llama.Mode{Seq: seq, Capacity: capacity, KVType: ir.Float16})
		if err != nil {
			return nil, err
		}
		return weft.New(g, weft.Options{OptLevel: 2})
	}
	m, err := llm.NewGrowing(factory, []int{16}, 10, 600)
	require.NoError(t, err)
	require.Equal(t, 256, m.Capacity)
	require.Equal(t, 600, m.MaxCapacity())
	prompt := []int32{1, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	opts := llm.Options{MaxTokens: 560, Sampler: llm.SamplerOptions{Temperature: 0.8, Seed: 3}}
	var got []int32
	_, err = m.Generate(context.Background(), prompt, opts, func(tok int32) bool { got = append(got, tok); return true })
	require.NoError(t, err)
	require.Equal(t, 600, m.Capacity, "grew 256 → 512 → 600")
	require.Equal(t, 2, m.Growths())
	require.Equal(t, []int{256, 256, 512, 512, 600, 600}, built)

	fixed, err := llm.NewGrowing(factory, []int{16}, 600, 600)
	require.NoError(t, err)
	var want []int32
	_, err = fixed.Generate(context.Background(), prompt, opts, func(tok int32) bool { want = append(want, tok); return true })
	require.NoError(t, err)
	require.Equal(t, want, got)
	// Past the limit: the context is full.
	met, err := m.Generate(context.Background(), prompt, llm.Options{MaxTokens: 700}, func(int32) bool { return true })
	require.NoError(t, err)
	require.Equal(t, llm.StopContextFull, met.Stop)
	_, err = llm.NewGrowing(factory, nil, 601, 600)
	require.ErrorIs(t, err, llm.ErrContextFull)
}
