package llama

import (
	"errors"
	"fmt"

	"github.com/weftrt/weft/ir"
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

// Layer holds one decoder layer's weights, f32, matrices as [in, out]
// (the layout MatMul expects: y = x · W).
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
}

// Weights holds a model's weights.
type Weights struct {
	Embed     *ir.Tensor // [Vocab, Dim]
	Layers    []Layer
	FinalNorm *ir.Tensor // [Dim]
	// Output is the classifier [Dim, Vocab]; nil when the embeddings are
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
	need("token embedding", w.Embed, v, d)
	need("final norm", w.FinalNorm, d)
	if w.Output != nil {
		need("output", w.Output, d, v)
	} else if !cfg.TiedEmbeddings {
		errs = append(errs, errors.New("output classifier is missing and the embeddings are not tied"))
	}
	if len(w.Layers) != cfg.Layers {
		errs = append(errs, fmt.Errorf("%d layers of weights, config says %d", len(w.Layers), cfg.Layers))
	}
	for i, l := range w.Layers {
		p := fmt.Sprintf("layer %d ", i)
		need(p+"attn norm", l.AttnNorm, d)
		need(p+"wq", l.Wq, d, d)
		need(p+"wk", l.Wk, d, kv)
		need(p+"wv", l.Wv, d, kv)
		need(p+"wo", l.Wo, d, d)
		need(p+"ffn norm", l.FFNNorm, d)
		need(p+"w1", l.W1, d, h)
		need(p+"w2", l.W2, h, d)
		need(p+"w3", l.W3, d, h)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("llama: weights: %w", err)
	}
	return nil
}
