package llama

import (
	"fmt"
	"math"
	"strconv"

	"github.com/weftrt/weft/ir"
)

// The names of the graph inputs and outputs (see the package comment).
const (
	InputTokens    = "tokens"
	InputPositions = "positions"
	OutputLogits   = "logits"
	// InputLogitsIndex is the token whose logits a Mode.LastLogits graph
	// computes: i64 [1], in [0, Seq).
	InputLogitsIndex = "logits_index"
)

// CacheKey is the name of layer l's key-cache input (updated in place).
func CacheKey(l int) string { return "cache_key." + strconv.Itoa(l) }

// CacheValue is the name of layer l's value-cache input (updated in place).
func CacheValue(l int) string { return "cache_value." + strconv.Itoa(l) }

// Mode selects which forward graph Build makes.
type Mode struct {
	// Seq is the number of tokens the graph takes per run: 1 for decode, a
	// prefill bucket size otherwise.
	Seq int
	// Capacity is the KV cache length P (the longest context); at most
	// Config.MaxSeq, at least Seq.
	Capacity int
	// KVType is the dtype of the cache inputs: f32 (the zero value), f16
	// (half the memory) or q8_0 (about a quarter; the head size must be a
	// multiple of 32). KVCacheUpdate rounds or quantizes the new entries as
	// it stores them; KVAttention widens the cache as it reads it.
	KVType ir.DType
	// LastLogits makes a graph that computes the logits of one token only:
	// the one its extra input logits_index (i64 [1]) names, e.g. the last
	// real token of a padded prefill chunk. The logits output is then
	// [1, 1, Vocab], and the classifier runs on one row instead of Seq.
	LastLogits bool
	// Ungrouped keeps one QMatMul per weight where Build would otherwise
	// emit a QMatMulGroup (q/k/v; gate/up with the SwiGLU): for graphs
	// compiled for a backend other than the CPU, which has the group op's
	// fast kernel (see groupable).
	Ungrouped bool
}

// builder adds named nodes to one graph.
type builder struct {
	b   *ir.Builder
	cfg Config
	n   int
	// verify marks a graph of several tokens that computes every token's
	// logits: one a speculative decoder may verify drafts with, whose
	// rows must each equal what the decode graph computes bit for bit
	// (see rowExact).
	verify bool
}

func (g *builder) op(name, op string, attrs []ir.AttrOption, in ...*ir.Value) *ir.Value {
	v := g.b.OpA(op, attrs, in...)
	v.Producer.Name = name
	v.Name = name
	return v
}

func (g *builder) i64s(vals ...int64) *ir.Value {
	g.n++
	return g.b.Const("const."+strconv.Itoa(g.n), ir.FromInt64([]int64{int64(len(vals))}, vals))
}

// RopeCaches returns the cos and sin tables [positions, headDim/2] of
// llama's rotary embedding: angle(p, i) = p · theta^(−2i/headDim),
// computed in float64 and rounded to f32.
func RopeCaches(positions, headDim int, theta float64) (cos, sin *ir.Tensor) {
	return ropeCaches(positions, headDim, theta, 1, nil)
}

// ropeCaches is RopeCaches over R rotated lanes with linear scaling
// (positions divided by scale) and per-pair frequency factors (the
// frequency of pair i divided by factors[i]; nil: none).
func ropeCaches(positions, R int, theta, scale float64, factors []float32) (cos, sin *ir.Tensor) {
	half := R / 2
	if scale <= 0 {
		scale = 1
	}
	c, s := make([]float32, positions*half), make([]float32, positions*half)
	for i := 0; i < half; i++ {
		freq := math.Pow(theta, -2*float64(i)/float64(R))
		if factors != nil {
			freq /= float64(factors[i])
		}
		for p := 0; p < positions; p++ {
			a := float64(p) / scale * freq
			c[p*half+i], s[p*half+i] = float32(math.Cos(a)), float32(math.Sin(a))
		}
	}
	sh := []int64{int64(positions), int64(half)}
	return ir.FromFloat32(sh, c), ir.FromFloat32(sh, s)
}

// matmul is y = x · W: MatMul for an f32 [in, out] weight, QMatMul for a
// block-quantized, f16 or bf16 [out, in] one; a QMatMulGroup of that one
// weight where g.rowExact says so (see rowExact).
func (g *builder) matmul(name string, x *ir.Value, w *ir.Tensor) *ir.Value {
	if g.rowExact(w) {
		return g.group(name, "", x, []string{name}, []string{name}, w)[0]
	}
	wc := g.b.Const(name+".weight", w)
	if w.DType.IsQuantized() || w.DType == ir.Float16 || w.DType == ir.BFloat16 {
		return g.op(name, "QMatMul", nil, x, wc)
	}
	return g.op(name, "MatMul", nil, x, wc)
}

// Transpose2D returns the [cols, rows] transpose of an f32 matrix t
// [rows, cols].
func Transpose2D(t *ir.Tensor) *ir.Tensor {
	r, c := int(t.Shape[0]), int(t.Shape[1])
	out := ir.NewTensor(ir.Float32, []int64{int64(c), int64(r)})
	src, dst := t.Float32s(), out.Float32s()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			dst[j*r+i] = src[i*c+j]
		}
	}
	return out
}

// Build returns the forward graph of mode (see the package comment for its
// inputs and outputs). Weight tensors are referenced, not copied; with tied
// embeddings and no Output, the classifier is a transposed copy of the
// embedding table, made once and shared by every graph built from that
// table (see tiedOutput).
func Build(cfg Config, w *Weights, mode Mode) (*ir.Graph, error) {
	kvT := mode.KVType
	switch kvT {
	case ir.Invalid:
		kvT = ir.Float32
	case ir.Float32, ir.Float16:
	case ir.Q8_0:
		if cfg.HeadDim()%ir.Q8_0.BlockSize() != 0 {
			return nil, fmt.Errorf("llama: KV cache type q8_0 with head size %d: %w (a q8_0 cache needs a multiple of %d; use f16 or f32)",
				cfg.HeadDim(), ir.ErrUnsupported, ir.Q8_0.BlockSize())
		}
	default:
		return nil, fmt.Errorf("llama: KV cache type %v: %w (want f32, f16 or q8_0)", kvT, ir.ErrUnsupported)
	}
	if err := w.Check(cfg); err != nil {
		return nil, err
	}
	if mode.Seq < 1 || mode.Capacity < mode.Seq || mode.Capacity > cfg.MaxSeq {
		return nil, fmt.Errorf("llama: mode seq %d, capacity %d: want 1 ≤ seq ≤ capacity ≤ max_seq %d", mode.Seq, mode.Capacity, cfg.MaxSeq)
	}
	S, P := int64(mode.Seq), int64(mode.Capacity)
	D, hd := int64(cfg.Dim), int64(cfg.HeadDim())
	H, KVH := int64(cfg.Heads), int64(cfg.KVHeads)
	g := &builder{b: ir.NewBuilder(fmt.Sprintf("llama.s%d.p%d", S, P)), cfg: cfg}
	g.verify = S > 1 && !mode.LastLogits && !mode.Ungrouped
	b := g.b
	tokens := b.Input(InputTokens, ir.Int64, ir.S(1, S))
	positions := b.Input(InputPositions, ir.Int64, ir.S(1, S))
	cache := make([][2]*ir.Value, cfg.Layers)
	for l := range cache {
		cache[l][0] = b.Input(CacheKey(l), kvT, ir.S(1, KVH, P, hd))
		cache[l][1] = b.Input(CacheValue(l), kvT, ir.S(1, KVH, P, hd))
	}
	cosT, sinT := ropeCaches(int(P), cfg.RotaryDim(), cfg.RopeTheta, cfg.RopeScale, cfg.RopeFreqFactors)
	cosV, sinV := b.Const("rope.cos", cosT), b.Const("rope.sin", sinT)
	eps := []ir.AttrOption{ir.Int("axis", -1), ir.Float("epsilon", cfg.NormEps)}
	rope := []ir.AttrOption{ir.Int("interleaved", 1), ir.Int("rotary_embedding_dim", int64(cfg.RotaryDim()))}
	if cfg.RopeNeoX {
		rope[0] = ir.Int("interleaved", 0)
	}
	perm := []ir.AttrOption{ir.Ints("perm", 0, 2, 1, 3)}

	var x *ir.Value
	if w.Embed.DType == ir.Float32 {
		x = g.op("embed", "Gather", []ir.AttrOption{ir.Int("axis", 0)}, b.Const("token_embedding", w.Embed), tokens)
	} else {
		x = g.op("embed", "QGather", nil, b.Const("token_embedding", w.Embed), tokens) // kept as stored
	}
	for l, lw := range w.Layers {
		p := "layers." + strconv.Itoa(l) + "."
		c := func(name string, t *ir.Tensor) *ir.Value { return b.Const(p+name, t) }
		h := g.op(p+"attn_norm", "RMSNormalization", eps, x, c("attn_norm.weight", lw.AttnNorm))
		// q, k and v share their input: one QMatMulGroup where the
		// weights allow (see groupable).
		var qkv []*ir.Value
		biased := false // the group adds the q/k/v biases
		if !mode.Ungrouped && g.groupable(S, D, lw.Wq, lw.Wk, lw.Wv) {
			names := []string{p + "wq", p + "wk", p + "wv"}
			var bs []*ir.Value
			if lw.Bq != nil && lw.Bk != nil && lw.Bv != nil {
				bs = []*ir.Value{c("wq.bias", lw.Bq), c("wk.bias", lw.Bk), c("wv.bias", lw.Bv)}
				biased = true
				names = []string{p + "wq.bias", p + "wk.bias", p + "wv.bias"}
			}
			qkv = g.groupBias(p+"wqkv", h, names, []string{p + "wq", p + "wk", p + "wv"}, bs, lw.Wq, lw.Wk, lw.Wv)
		}
		heads := func(name string, wt, bias *ir.Tensor, n int64) *ir.Value {
			var y *ir.Value
			switch {
			case qkv != nil && name == "wq":
				y = qkv[0]
			case qkv != nil && name == "wk":
				y = qkv[1]
			case qkv != nil && name == "wv":
				y = qkv[2]
			default:
				y = g.matmul(p+name, h, wt)
			}
			if bias != nil && !(biased && qkv != nil) {
				y = g.op(p+name+".bias", "Add", nil, y, c(name+".bias", bias))
			}
			if S == 1 {
				// One token: [1, 1, n·hd] is already [1, n, 1, hd] in memory.
				return g.op(p+name+".reshape", "Reshape", nil, y, g.i64s(1, n, 1, hd))
			}
			y = g.op(p+name+".reshape", "Reshape", nil, y, g.i64s(1, S, n, hd))
			return g.op(p+name+".transpose", "Transpose", perm, y)
		}
		q := g.op(p+"q.rope", "RotaryEmbedding", rope, heads("wq", lw.Wq, lw.Bq, H), cosV, sinV, positions)
		k := g.op(p+"k.rope", "RotaryEmbedding", rope, heads("wk", lw.Wk, lw.Bk, KVH), cosV, sinV, positions)
		v := heads("wv", lw.Wv, lw.Bv, KVH)
		kAll := g.op(p+"k.cache", "KVCacheUpdate", nil, cache[l][0], k, positions)
		vAll := g.op(p+"v.cache", "KVCacheUpdate", nil, cache[l][1], v, positions)
		a := g.op(p+"attention", "KVAttention", nil, q, kAll, vAll, positions)
		if S > 1 {
			a = g.op(p+"attention.transpose", "Transpose", perm, a)
		}
		a = g.op(p+"attention.reshape", "Reshape", nil, a, g.i64s(1, S, D))
		x = g.op(p+"attn_residual", "Add", nil, x, g.matmul(p+"wo", a, lw.Wo))
		h2 := g.op(p+"ffn_norm", "RMSNormalization", eps, x, c("ffn_norm.weight", lw.FFNNorm))
		var ffn *ir.Value
		if !mode.Ungrouped && g.groupable(S, D, lw.W1, lw.W3) && sameShape(lw.W1, lw.W3) {
			ffn = g.group(p+"w13", "silu_mul", h2, []string{p + "ffn.mul"}, []string{p + "w1", p + "w3"}, lw.W1, lw.W3)[0]
		} else {
			gate := g.op(p+"w1.silu", "SiLU", nil, g.matmul(p+"w1", h2, lw.W1))
			up := g.matmul(p+"w3", h2, lw.W3)
			ffn = g.op(p+"ffn.mul", "Mul", nil, gate, up)
		}
		down := g.matmul(p+"w2", ffn, lw.W2)
		x = g.op(p+"ffn_residual", "Add", nil, x, down)
	}
	if mode.LastLogits {
		li := b.Input(InputLogitsIndex, ir.Int64, ir.S(1))
		x = g.op("logits_row", "Gather", []ir.AttrOption{ir.Int("axis", 1)}, x, li)
	}
	x = g.op("final_norm", "RMSNormalization", eps, x, b.Const("final_norm.weight", w.FinalNorm))
	out := w.Output
	if out == nil {
		var err error
		if out, err = tiedOutput(w.Embed); err != nil {
			return nil, err
		}
	}
	logits := g.matmul("output", x, out)
	logits.Name, logits.Producer.Name = OutputLogits, OutputLogits
	b.Output(OutputLogits, logits)
	gr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("llama: built graph does not verify: %w", err)
	}
	gr.Meta = map[string]string{"producer_name": "weft llama"}
	return gr, nil
}
