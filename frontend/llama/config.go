package llama

import (
	"errors"
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// Config holds a llama-family model's hyperparameters.
type Config struct {
	Dim       int // model width
	HiddenDim int // FFN width
	Layers    int
	Heads     int // query heads
	KVHeads   int // key/value heads (grouped-query attention: Heads is a multiple)
	Vocab     int
	MaxSeq    int     // the longest context the model was trained for (RoPE cache size)
	RopeTheta float64 // RoPE base (10000 for llama2)
	NormEps   float32 // RMSNorm epsilon
	// TiedEmbeddings: the classifier is the token embedding table.
	TiedEmbeddings bool

	// RopeNeoX rotates the pairs (i, i+R/2) of each head (GPT-NeoX style,
	// qwen2) instead of the adjacent pairs (2i, 2i+1) (llama2.c, GGUF
	// llama, whose converter permutes HF's q/k rows to that order).
	RopeNeoX bool
	// RopeDim is the number of rotated lanes R of each head (0: HeadDim).
	RopeDim int
	// RopeScale is linear RoPE scaling: positions are divided by it (0 or
	// 1: none).
	RopeScale float64
	// RopeFreqFactors, when set (R/2 values), divide the rotary
	// frequencies pair by pair (llama 3.1's rope_freqs).
	RopeFreqFactors []float32
	// AttnBias: the q, k and v projections have biases (qwen2).
	AttnBias bool
}

// RotaryDim is RopeDim, or HeadDim when RopeDim is 0.
func (c Config) RotaryDim() int {
	if c.RopeDim > 0 {
		return c.RopeDim
	}
	return c.HeadDim()
}

// HeadDim is Dim / Heads.
func (c Config) HeadDim() int { return c.Dim / c.Heads }

// KVDim is KVHeads · HeadDim.
func (c Config) KVDim() int { return c.KVHeads * c.HeadDim() }

// Validate reports every inconsistent field.
func (c Config) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"dim", c.Dim}, {"hidden_dim", c.HiddenDim}, {"layers", c.Layers}, {"heads", c.Heads},
		{"kv_heads", c.KVHeads}, {"vocab", c.Vocab}, {"max_seq", c.MaxSeq}} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("%s is %d, must be positive", f.name, f.v))
		}
	}
	if c.Heads > 0 && c.Dim%c.Heads != 0 {
		errs = append(errs, fmt.Errorf("dim %d is not a multiple of heads %d", c.Dim, c.Heads))
	} else if c.Heads > 0 && c.HeadDim()%2 != 0 {
		errs = append(errs, fmt.Errorf("head dim %d is odd (RoPE rotates pairs)", c.HeadDim()))
	}
	if c.KVHeads > 0 && c.Heads%c.KVHeads != 0 {
		errs = append(errs, fmt.Errorf("heads %d is not a multiple of kv_heads %d", c.Heads, c.KVHeads))
	}
	if c.RopeDim < 0 || c.RopeDim%2 != 0 || (c.Heads > 0 && c.RopeDim > c.HeadDim()) {
		errs = append(errs, fmt.Errorf("rope dim %d must be even and at most the head dim", c.RopeDim))
	}
	if c.RopeScale < 0 || math.IsNaN(c.RopeScale) || math.IsInf(c.RopeScale, 0) {
		errs = append(errs, fmt.Errorf("rope scale %v must be finite and ≥ 0", c.RopeScale))
	}
	if c.RopeFreqFactors != nil && c.Heads > 0 && c.Dim%c.Heads == 0 && len(c.RopeFreqFactors) != c.RotaryDim()/2 {
		errs = append(errs, fmt.Errorf("%d rope frequency factors, want %d (rotary dim / 2)", len(c.RopeFreqFactors), c.RotaryDim()/2))
	}
	for i, f := range c.RopeFreqFactors {
		if !(f > 0) || math.IsInf(float64(f), 0) {
			errs = append(errs, fmt.Errorf("rope frequency factor %d is %v, must be positive", i, f))
			break
		}
	}
	if !(c.RopeTheta > 0) {
		errs = append(errs, fmt.Errorf("rope theta %v must be positive", c.RopeTheta))
	}
	if !(c.NormEps > 0) {
		errs = append(errs, fmt.Errorf("norm epsilon %v must be positive", c.NormEps))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("llama: config: %w", err)
	}
	return nil
}

// Layer holds one decoder layer's weights. Vectors are f32. A matrix is
// either f32 [in, out] (the layout MatMul expects: y = x · W) or
// block-quantized (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K) [out, in] with its blocks
// along in (the layout QMatMul expects, and GGUF's): the shapes below are
// the f32 form.
type Layer struct {
	AttnNorm *ir.Tensor // [Dim]
	Wq       *ir.Tensor // [Dim, Dim]
	Wk       *ir.Tensor // [Dim, KVDim]
	Wv       *ir.Tensor // [Dim, KVDim]
	Wo       *ir.Tensor // [Dim, Dim]
	FFNNorm  *ir.Tensor // [Dim]
	W1       *ir.Tensor // [Dim, HiddenDim] (gate)
	W2       *ir.Tensor // [HiddenDim, Dim] (down)
	W3       *ir.Tensor // [Dim, HiddenDim] (up)
	// Bq, Bk, Bv are the projection biases [Dim], [KVDim], [KVDim]:
	// present exactly when Config.AttnBias.
	Bq, Bk, Bv *ir.Tensor
}

// Weights holds a model's weights.
type Weights struct {
	// Embed is the token embedding [Vocab, Dim]: f32, or kept in a stored
	// format that ir/quant decodes (block formats, f16, bf16), whose rows
	// QGather decodes as tokens need them.
	Embed     *ir.Tensor
	Layers    []Layer
	FinalNorm *ir.Tensor // [Dim]
	// Output is the classifier [Dim, Vocab] (or quantized [Vocab, Dim], see
	// Layer); nil when the embeddings are
	// tied (Build then uses the transposed embedding table).
	Output *ir.Tensor
}

// Check verifies that w has cfg's layer count and every tensor its shape.
func (w *Weights) Check(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	d, h, kv, v := int64(cfg.Dim), int64(cfg.HiddenDim), int64(cfg.KVDim()), int64(cfg.Vocab)
	var errs []error
	need := func(name string, t *ir.Tensor, shape ...int64) {
		switch {
		case t == nil:
			errs = append(errs, fmt.Errorf("%s is missing", name))
		case t.DType != ir.Float32:
			errs = append(errs, fmt.Errorf("%s is %v, want f32", name, t.DType))
		case !ir.ShapeOf(t.Shape).Equal(ir.ShapeOf(shape)):
			errs = append(errs, fmt.Errorf("%s has shape %v, want %v", name, t.Shape, shape))
		}
	}
	// mat accepts an f32 [in, out] or a kept (quantized, f16, bf16)
	// [out, in] matrix.
	mat := func(name string, t *ir.Tensor, in, out int64) {
		if t == nil || t.DType == ir.Float32 {
			need(name, t, in, out)
			return
		}
		switch {
		case !quantizedMatMul[t.DType]:
			errs = append(errs, fmt.Errorf("%s is %v, want f32 or one of f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k", name, t.DType))
		case !ir.ShapeOf(t.Shape).Equal(ir.ShapeOf([]int64{out, in})):
			errs = append(errs, fmt.Errorf("%s (%v) has shape %v, want [out, in] = %v", name, t.DType, t.Shape, []int64{out, in}))
		case len(t.Data) != int(t.DType.Bytes(out*in)):
			errs = append(errs, fmt.Errorf("%s (%v) has %d bytes, want %d", name, t.DType, len(t.Data), t.DType.Bytes(out*in)))
		}
	}
	if w.Embed != nil && w.Embed.DType != ir.Float32 && quant.Decodable(w.Embed.DType) {
		// Kept in its stored format (QGather decodes the rows it reads).
		if !ir.ShapeOf(w.Embed.Shape).Equal(ir.ShapeOf([]int64{v, d})) || int64(len(w.Embed.Data)) != w.Embed.DType.Bytes(v*d) {
			errs = append(errs, fmt.Errorf("token embedding (%v) has shape %v and %d bytes, want [%d %d]", w.Embed.DType, w.Embed.Shape, len(w.Embed.Data), v, d))
		}
	} else {
		need("token embedding", w.Embed, v, d)
	}
	need("final norm", w.FinalNorm, d)
	if w.Output != nil {
		mat("output", w.Output, d, v)
	} else if !cfg.TiedEmbeddings {
		errs = append(errs, errors.New("output classifier is missing and the embeddings are not tied"))
	}
	if len(w.Layers) != cfg.Layers {
		errs = append(errs, fmt.Errorf("%d layers of weights, config says %d", len(w.Layers), cfg.Layers))
	}
	for i, l := range w.Layers {
		p := fmt.Sprintf("layer %d ", i)
		need(p+"attn norm", l.AttnNorm, d)
		mat(p+"wq", l.Wq, d, d)
		mat(p+"wk", l.Wk, d, kv)
		mat(p+"wv", l.Wv, d, kv)
		mat(p+"wo", l.Wo, d, d)
		need(p+"ffn norm", l.FFNNorm, d)
		mat(p+"w1", l.W1, d, h)
		mat(p+"w2", l.W2, h, d)
		mat(p+"w3", l.W3, d, h)
		if cfg.AttnBias {
			need(p+"q bias", l.Bq, d)
			need(p+"k bias", l.Bk, kv)
			need(p+"v bias", l.Bv, kv)
		} else if l.Bq != nil || l.Bk != nil || l.Bv != nil {
			errs = append(errs, fmt.Errorf("%shas attention biases but the config has none", p))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("llama: weights: %w", err)
	}
	return nil
}

// quantizedMatMul are the formats a matrix may keep, [out, in], running
// as QMatMul (whose reference kernel decodes them): the block formats, and
// f16 and bf16, which the CPU backend widens to f32 in registers (so an
// F16 model's matrices stay zero-copy in the file's mapping instead of
// taking twice their size as f32).
var quantizedMatMul = map[ir.DType]bool{ir.Q8_0: true, ir.Q4_0: true, ir.Q4_1: true, ir.Q5_0: true, ir.Q5_1: true, ir.Q4_K: true, ir.Q5_K: true, ir.Q6_K: true, ir.Float16: true, ir.BFloat16: true}
