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
	InputMask      = "mask"
	OutputLogits   = "logits"
)

// PastKey is the name of layer l's key-cache input.
func PastKey(l int) string { return "past_key." + strconv.Itoa(l) }

// PastValue is the name of layer l's value-cache input.
func PastValue(l int) string { return "past_value." + strconv.Itoa(l) }

// PresentKey is the name of layer l's new-keys output.
func PresentKey(l int) string { return "present_key." + strconv.Itoa(l) }

// PresentValue is the name of layer l's new-values output.
func PresentValue(l int) string { return "present_value." + strconv.Itoa(l) }

// ONNX TensorProto data types of Cast's "to" attribute.
const (
	onnxFloat   = 1
	onnxFloat16 = 10
)

// Mode selects which forward graph Build makes.
type Mode struct {
	// Seq is the number of tokens the graph takes per run: 1 for decode, a
	// prefill bucket size otherwise.
	Seq int
	// Capacity is the KV cache length P (the longest context); at most
	// Config.MaxSeq, at least Seq.
	Capacity int
	// KVType is the dtype of the cache inputs and present outputs: f32 (the
	// zero value) or f16, which halves the cache; the graph casts the past
	// to f32 for the attention (an f32 copy of one layer's cache at a time)
	// and the new entries to f16.
	KVType ir.DType
}

// builder adds named nodes to one graph.
type builder struct {
	b   *ir.Builder
	cfg Config
	n   int
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
// block-quantized [out, in] one.
func (g *builder) matmul(name string, x *ir.Value, w *ir.Tensor) *ir.Value {
	wc := g.b.Const(name+".weight", w)
	if w.DType.IsQuantized() {
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
	if err := w.Check(cfg); err != nil {
		return nil, err
	}
	if mode.Seq < 1 || mode.Capacity < mode.Seq || mode.Capacity > cfg.MaxSeq {
		return nil, fmt.Errorf("llama: mode seq %d, capacity %d: want 1 ≤ seq ≤ capacity ≤ max_seq %d", mode.Seq, mode.Capacity, cfg.MaxSeq)
	}
	kvT := mode.KVType
	switch kvT {
	case ir.Invalid:
		kvT = ir.Float32
	case ir.Float32, ir.Float16:
	default:
		return nil, fmt.Errorf("llama: KV cache type %v: %w (want f32 or f16)", kvT, ir.ErrUnsupported)
	}
	S, P := int64(mode.Seq), int64(mode.Capacity)
	D, hd := int64(cfg.Dim), int64(cfg.HeadDim())
	H, KVH := int64(cfg.Heads), int64(cfg.KVHeads)
	g := &builder{b: ir.NewBuilder(fmt.Sprintf("llama.s%d.p%d", S, P)), cfg: cfg}
	b := g.b
	tokens := b.Input(InputTokens, ir.Int64, ir.S(1, S))
	positions := b.Input(InputPositions, ir.Int64, ir.S(1, S))
	mask := b.Input(InputMask, ir.Float32, ir.S(1, 1, S, P))
	past := make([][2]*ir.Value, cfg.Layers)
	for l := range past {
		past[l][0] = b.Input(PastKey(l), kvT, ir.S(1, KVH, P, hd))
		past[l][1] = b.Input(PastValue(l), kvT, ir.S(1, KVH, P, hd))
		if kvT == ir.Float16 {
			for j, name := range []string{PastKey(l), PastValue(l)} {
				past[l][j] = g.op(name+".f32", "Cast", []ir.AttrOption{ir.Int("to", onnxFloat)}, past[l][j])
			}
		}
	}
	cosT, sinT := ropeCaches(int(P), cfg.RotaryDim(), cfg.RopeTheta, cfg.RopeScale, cfg.RopeFreqFactors)
	cosV, sinV := b.Const("rope.cos", cosT), b.Const("rope.sin", sinT)
	eps := []ir.AttrOption{ir.Int("axis", -1), ir.Float("epsilon", cfg.NormEps)}
	rope := []ir.AttrOption{ir.Int("interleaved", 1), ir.Int("rotary_embedding_dim", int64(cfg.RotaryDim()))}
	if cfg.RopeNeoX {
		rope[0] = ir.Int("interleaved", 0)
	}
	perm := []ir.AttrOption{ir.Ints("perm", 0, 2, 1, 3)}

	// Scatter indices: each token's position, for every kv head and lane.
	idx := g.op("kv.index.reshape", "Reshape", nil, positions, g.i64s(1, 1, S, 1))
	idx = g.op("kv.index", "Expand", nil, idx, g.i64s(1, KVH, S, hd))

	x := g.op("embed", "Gather", []ir.AttrOption{ir.Int("axis", 0)}, b.Const("token_embedding", w.Embed), tokens)
	var present [][2]*ir.Value
	for l, lw := range w.Layers {
		p := "layers." + strconv.Itoa(l) + "."
		c := func(name string, t *ir.Tensor) *ir.Value { return b.Const(p+name, t) }
		h := g.op(p+"attn_norm", "RMSNormalization", eps, x, c("attn_norm.weight", lw.AttnNorm))
		heads := func(name string, wt, bias *ir.Tensor, n int64) *ir.Value {
			y := g.matmul(p+name, h, wt)
			if bias != nil {
				y = g.op(p+name+".bias", "Add", nil, y, c(name+".bias", bias))
			}
			y = g.op(p+name+".reshape", "Reshape", nil, y, g.i64s(1, S, n, hd))
			return g.op(p+name+".transpose", "Transpose", perm, y)
		}
		q := g.op(p+"q.rope", "RotaryEmbedding", rope, heads("wq", lw.Wq, lw.Bq, H), cosV, sinV, positions)
		k := g.op(p+"k.rope", "RotaryEmbedding", rope, heads("wk", lw.Wk, lw.Bk, KVH), cosV, sinV, positions)
		v := heads("wv", lw.Wv, lw.Bv, KVH)
		scatter := []ir.AttrOption{ir.Int("axis", 2)}
		kAll := g.op(p+"k.cache", "ScatterElements", scatter, past[l][0], idx, k)
		vAll := g.op(p+"v.cache", "ScatterElements", scatter, past[l][1], idx, v)
		if kvT == ir.Float16 {
			present = append(present, [2]*ir.Value{
				g.op(p+"k.f16", "Cast", []ir.AttrOption{ir.Int("to", onnxFloat16)}, k),
				g.op(p+"v.f16", "Cast", []ir.AttrOption{ir.Int("to", onnxFloat16)}, v)})
		} else {
			present = append(present, [2]*ir.Value{k, v})
		}
		a := g.op(p+"attention", "Attention", nil, q, kAll, vAll, mask)
		a = g.op(p+"attention.transpose", "Transpose", perm, a)
		a = g.op(p+"attention.reshape", "Reshape", nil, a, g.i64s(1, S, D))
		x = g.op(p+"attn_residual", "Add", nil, x, g.matmul(p+"wo", a, lw.Wo))
		h2 := g.op(p+"ffn_norm", "RMSNormalization", eps, x, c("ffn_norm.weight", lw.FFNNorm))
		gate := g.op(p+"w1.silu", "SiLU", nil, g.matmul(p+"w1", h2, lw.W1))
		up := g.matmul(p+"w3", h2, lw.W3)
		down := g.matmul(p+"w2", g.op(p+"ffn.mul", "Mul", nil, gate, up), lw.W2)
		x = g.op(p+"ffn_residual", "Add", nil, x, down)
	}
	x = g.op("final_norm", "RMSNormalization", eps, x, b.Const("final_norm.weight", w.FinalNorm))
	out := w.Output
	if out == nil {
		out = tiedOutput(w.Embed)
	}
	logits := g.matmul("output", x, out)
	logits.Name, logits.Producer.Name = OutputLogits, OutputLogits
	b.Output(OutputLogits, logits)
	for l, kv := range present {
		kv[0].Name, kv[1].Name = PresentKey(l), PresentValue(l)
		b.Output(PresentKey(l), kv[0])
		b.Output(PresentValue(l), kv[1])
	}
	gr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("llama: built graph does not verify: %w", err)
	}
	gr.Meta = map[string]string{"producer_name": "weft llama"}
	return gr, nil
}
