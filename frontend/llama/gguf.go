package llama

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// The architectures FromGGUF reads.
const (
	ArchLlama = "llama"
	ArchQwen2 = "qwen2"
)

// FromGGUF reads a llama-family model from a GGUF file with llama.cpp's
// metadata keys and tensor names, for the architectures "llama" and
// "qwen2".
//
// Hyperparameters come from {arch}.embedding_length, .block_count,
// .feed_forward_length, .attention.head_count, .attention.head_count_kv
// (default: head_count), .context_length, .rope.freq_base (default 10000),
// .rope.dimension_count (default: head dim), .attention.layer_norm_rms_epsilon
// and the linear rope scaling keys (.rope.scaling.type "linear" with
// .rope.scaling.factor, or the older .rope.scale_linear); other scaling
// types are unsupported. The vocabulary size is token_embd.weight's row
// count. llama rotates adjacent pairs (GGUF's converter permutes HF's q/k
// rows for that); qwen2 rotates NeoX halves and has q/k/v biases.
//
// Tensors: token_embd.weight, blk.N.{attn_norm, attn_q, attn_k, attn_v,
// attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down}.weight (and
// blk.N.attn_{q,k,v}.bias for qwen2), output_norm.weight, output.weight
// (absent: tied to token_embd), rope_freqs.weight (optional frequency
// factors). GGUF matrices are [out, in] in weft's outer-first order.
// Matrices in Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, F16 or BF16 stay as they are,
// their data a zero-copy slice of f's mapping (f must stay open while the
// weights are in use), and run as QMatMul (an F16 model takes its file's
// size, not twice it); F32 matrices, and K-quant (Q4_K, Q5_K, Q6_K) ones,
// are decoded to f32 and transposed to [in, out] at load (so a K-quant
// model takes f32 memory). The token embedding
// table stays as stored, zero-copy (QGather decodes the rows tokens use);
// when the classifier is tied and token_embd is a kept block format,
// Output shares its bytes.
func FromGGUF(f *gguf.File) (Config, *Weights, error) {
	cfg, err := configFromGGUF(f)
	if err != nil {
		return Config{}, nil, fmt.Errorf("llama: gguf %s: %w", f.Path, err)
	}
	w, err := weightsFromGGUF(f, &cfg)
	if err != nil {
		return Config{}, nil, fmt.Errorf("llama: gguf %s: %w", f.Path, err)
	}
	return cfg, w, nil
}

// configFromGGUF reads the hyperparameters (Vocab and TiedEmbeddings are
// set from the tensors later).
func configFromGGUF(f *gguf.File) (Config, error) {
	arch := f.Architecture()
	var cfg Config
	switch arch {
	case ArchLlama:
	case ArchQwen2:
		cfg.RopeNeoX, cfg.AttnBias = true, true
	case "":
		return cfg, errors.New("no general.architecture key")
	default:
		return cfg, fmt.Errorf("%w architecture %q (want %s or %s)", ir.ErrUnsupported, arch, ArchLlama, ArchQwen2)
	}
	var errs []error
	intKey := func(suffix string, dst *int, def int) {
		key := arch + "." + suffix
		v, err := f.Int(key)
		switch {
		case errors.Is(err, gguf.ErrNoKey) && def >= 0:
			*dst = def
		case err != nil:
			errs = append(errs, err)
		case v < 0 || v > 1<<31-1:
			errs = append(errs, fmt.Errorf("metadata %s = %d is out of range", key, v))
		default:
			*dst = int(v)
		}
	}
	floatKey := func(suffix string, def float64) float64 {
		key := arch + "." + suffix
		v, ok := f.Get(key)
		if !ok {
			if def < 0 {
				errs = append(errs, fmt.Errorf("%w %q", gguf.ErrNoKey, key))
			}
			return def
		}
		switch x := v.V.(type) {
		case float32:
			return float64(x)
		case float64:
			return x
		}
		errs = append(errs, fmt.Errorf("metadata %s is %v, want a float", key, v.Type))
		return def
	}
	intKey("embedding_length", &cfg.Dim, -1)
	intKey("block_count", &cfg.Layers, -1)
	intKey("feed_forward_length", &cfg.HiddenDim, -1)
	intKey("attention.head_count", &cfg.Heads, -1)
	intKey("attention.head_count_kv", &cfg.KVHeads, cfg.Heads)
	intKey("context_length", &cfg.MaxSeq, -1)
	cfg.RopeTheta = floatKey("rope.freq_base", 10000)
	cfg.NormEps = float32(floatKey("attention.layer_norm_rms_epsilon", -1))
	if cfg.Heads > 0 && cfg.Dim%cfg.Heads == 0 {
		intKey("rope.dimension_count", &cfg.RopeDim, cfg.Dim/cfg.Heads)
		if cfg.RopeDim == cfg.Dim/cfg.Heads {
			cfg.RopeDim = 0
		}
	}
	typ := "linear"
	if v, ok := f.Get(arch + ".rope.scaling.type"); ok {
		s, isStr := v.V.(string)
		if !isStr {
			errs = append(errs, fmt.Errorf("metadata %s.rope.scaling.type is %v, want a string", arch, v.Type))
		}
		typ = s
	}
	factor := floatKey("rope.scaling.factor", 0)
	if factor == 0 {
		factor = floatKey("rope.scale_linear", 0)
	}
	switch {
	case typ == "none" || factor == 0 || factor == 1:
	case typ == "linear":
		cfg.RopeScale = factor
	default:
		errs = append(errs, fmt.Errorf("%w rope scaling %q (only linear)", ir.ErrUnsupported, typ))
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// tensorLoader reads a file's tensors by name, collecting the errors.
type tensorLoader struct {
	f    *gguf.File
	errs []error
	used map[string]bool
}

func (ld *tensorLoader) raw(name string, optional bool) *ir.Tensor {
	if _, ok := ld.f.TensorInfo(name); !ok {
		if !optional {
			ld.errs = append(ld.errs, fmt.Errorf("tensor %q is missing", name))
		}
		return nil
	}
	ld.used[name] = true
	t, err := ld.f.Tensor(name)
	if err != nil {
		ld.errs = append(ld.errs, fmt.Errorf("tensor %q: %w", name, err))
		return nil
	}
	return t
}

// f32 returns the tensor decoded to f32 (its own storage when already f32).
func (ld *tensorLoader) f32(name string, t *ir.Tensor) *ir.Tensor {
	if t == nil || t.DType == ir.Float32 {
		return t
	}
	if !quant.Decodable(t.DType) {
		ld.errs = append(ld.errs, fmt.Errorf("tensor %q: %w dtype %v", name, ir.ErrUnsupported, t.DType))
		return nil
	}
	d, err := quant.Dequantize(t)
	if err != nil {
		ld.errs = append(ld.errs, fmt.Errorf("tensor %q: %w", name, err))
		return nil
	}
	return d
}

// vec reads a 1-D tensor of n elements as f32.
func (ld *tensorLoader) vec(name string, n int, optional bool) *ir.Tensor {
	t := ld.raw(name, optional)
	if t == nil {
		return nil
	}
	if len(t.Shape) != 1 || t.Shape[0] != int64(n) {
		ld.errs = append(ld.errs, fmt.Errorf("tensor %q has shape %v, want [%d]", name, t.Shape, n))
		return nil
	}
	return ld.f32(name, t)
}

// mat reads a GGUF [out, in] matrix: kept as is in a QMatMul format (block
// types, f16, bf16), otherwise decoded to f32 and transposed to [in, out].
func (ld *tensorLoader) mat(name string, out, in int) *ir.Tensor {
	t := ld.raw(name, false)
	if t == nil {
		return nil
	}
	if len(t.Shape) != 2 || t.Shape[0] != int64(out) || t.Shape[1] != int64(in) {
		ld.errs = append(ld.errs, fmt.Errorf("tensor %q has shape %v, want [out, in] = [%d %d]", name, t.Shape, out, in))
		return nil
	}
	return ld.matrix(name, t)
}

func (ld *tensorLoader) matrix(name string, t *ir.Tensor) *ir.Tensor {
	if quantizedMatMul[t.DType] {
		return t
	}
	if !quant.Decodable(t.DType) {
		ld.errs = append(ld.errs, fmt.Errorf("tensor %q: %w dtype %v", name, ir.ErrUnsupported, t.DType))
		return nil
	}
	// Decode row by row straight into the transpose: no f32 copy of the
	// [out, in] matrix on the way.
	out, in := int(t.Shape[0]), int(t.Shape[1])
	res := ir.NewTensor(ir.Float32, []int64{int64(in), int64(out)})
	if err := t.Check(); err != nil {
		ld.errs = append(ld.errs, fmt.Errorf("tensor %q: %w", name, err))
		return nil
	}
	dst, row := res.Float32s(), make([]float32, in)
	rb := len(t.Data) / max(out, 1)
	for o := 0; o < out; o++ {
		if err := quant.DecodeRow(t.DType, row, t.Data[o*rb:(o+1)*rb]); err != nil {
			ld.errs = append(ld.errs, fmt.Errorf("tensor %q row %d: %w", name, o, err))
			return nil
		}
		for i, v := range row {
			dst[i*out+o] = v
		}
	}
	return res
}

func weightsFromGGUF(f *gguf.File, cfg *Config) (*Weights, error) {
	ld := &tensorLoader{f: f, used: map[string]bool{}}
	emb := ld.raw("token_embd.weight", false)
	if emb == nil {
		return nil, errors.Join(ld.errs...)
	}
	if len(emb.Shape) != 2 || emb.Shape[1] != int64(cfg.Dim) || emb.Shape[0] < 1 || emb.Shape[0] > 1<<31-1 {
		return nil, fmt.Errorf("tensor \"token_embd.weight\" has shape %v, want [vocab, %d]", emb.Shape, cfg.Dim)
	}
	cfg.Vocab = int(emb.Shape[0])
	if v, err := f.Int(f.Architecture() + ".vocab_size"); err == nil && v != int64(cfg.Vocab) {
		return nil, fmt.Errorf("metadata %s.vocab_size = %d, but token_embd.weight has %d rows", f.Architecture(), v, cfg.Vocab)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d, h, kv := cfg.Dim, cfg.HiddenDim, cfg.KVDim()
	// The embedding stays in its stored format (QGather decodes the rows
	// tokens use) unless that is f32 or undecodable.
	w := &Weights{Embed: emb}
	if !quant.Decodable(emb.DType) {
		w.Embed = ld.f32("token_embd.weight", emb)
	}
	for l := 0; l < cfg.Layers; l++ {
		p := "blk." + strconv.Itoa(l) + "."
		lw := Layer{
			AttnNorm: ld.vec(p+"attn_norm.weight", d, false),
			Wq:       ld.mat(p+"attn_q.weight", d, d),
			Wk:       ld.mat(p+"attn_k.weight", kv, d),
			Wv:       ld.mat(p+"attn_v.weight", kv, d),
			Wo:       ld.mat(p+"attn_output.weight", d, d),
			FFNNorm:  ld.vec(p+"ffn_norm.weight", d, false),
			W1:       ld.mat(p+"ffn_gate.weight", h, d),
			W2:       ld.mat(p+"ffn_down.weight", d, h),
			W3:       ld.mat(p+"ffn_up.weight", h, d),
		}
		if cfg.AttnBias {
			lw.Bq = ld.vec(p+"attn_q.bias", d, false)
			lw.Bk = ld.vec(p+"attn_k.bias", kv, false)
			lw.Bv = ld.vec(p+"attn_v.bias", kv, false)
		}
		w.Layers = append(w.Layers, lw)
	}
	w.FinalNorm = ld.vec("output_norm.weight", d, false)
	if _, ok := f.TensorInfo("output.weight"); ok {
		w.Output = ld.mat("output.weight", cfg.Vocab, d)
	} else {
		cfg.TiedEmbeddings = true
		w.Output = ld.matrix("token_embd.weight", emb)
	}
	if ff := ld.vec("rope_freqs.weight", cfg.RotaryDim()/2, true); ff != nil {
		cfg.RopeFreqFactors = append([]float32(nil), ff.Float32s()...)
	}
	if err := errors.Join(ld.errs...); err != nil {
		return nil, err
	}
	if err := w.Check(*cfg); err != nil {
		return nil, err
	}
	return w, nil
}
