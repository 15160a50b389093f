package llama

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/weftrt/weft/ir"
)

// Llama2CHeaderBytes is the size of a llama2.c checkpoint header: seven
// little-endian int32s (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len).
const Llama2CHeaderBytes = 7 * 4

// LoadLlama2C reads a llama2.c checkpoint (the "legacy" float32 format of
// Karpathy's run.c; see /work/shared/models/README.md). A negative
// vocab_size in the header means the classifier is stored after the
// weights (unshared); otherwise it is the embedding table (tied). The two
// legacy RoPE tables are skipped: weft computes its own caches. Matrices
// are transposed from llama2.c's [out, in] to [in, out]. The returned
// Weights always carry Output (with tied embeddings, the transposed
// embedding table), so that every graph built from them shares it.
//
// The file is read into memory whole (checkpoints in this format are
// small); its length must be exactly what the header implies.
func LoadLlama2C(path string) (Config, *Weights, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, nil, fmt.Errorf("llama2.c: %w", err)
	}
	cfg, w, err := ParseLlama2C(data)
	if err != nil {
		return Config{}, nil, fmt.Errorf("llama2.c: %s: %w", path, err)
	}
	return cfg, w, nil
}

// ParseLlama2C decodes a llama2.c checkpoint held in memory (see
// LoadLlama2C).
func ParseLlama2C(data []byte) (Config, *Weights, error) {
	if len(data) < Llama2CHeaderBytes {
		return Config{}, nil, fmt.Errorf("file is %d bytes, shorter than the %d-byte header", len(data), Llama2CHeaderBytes)
	}
	var hdr [7]int64
	for i := range hdr {
		hdr[i] = int64(int32(binary.LittleEndian.Uint32(data[4*i:])))
	}
	shared := hdr[5] > 0
	vocab := hdr[5]
	if vocab < 0 {
		vocab = -vocab
	}
	cfg := Config{Dim: int(hdr[0]), HiddenDim: int(hdr[1]), Layers: int(hdr[2]), Heads: int(hdr[3]),
		KVHeads: int(hdr[4]), Vocab: int(vocab), MaxSeq: int(hdr[6]),
		RopeTheta: 10000, NormEps: 1e-5, TiedEmbeddings: shared}
	if err := cfg.Validate(); err != nil {
		return Config{}, nil, fmt.Errorf("header %v: %w", hdr, err)
	}
	// Sizes in floats, computed in int64 with an overflow guard (every
	// header field is below 2^31, so products of two fit; check the rest).
	d, h, L, v, seq := hdr[0], hdr[1], hdr[2], vocab, hdr[6]
	kv := hdr[4] * (d / hdr[3])
	hs := d / hdr[3]
	const limit = math.MaxInt64 / 8
	sizes := []struct {
		name string
		n    [3]int64
	}{
		{"token_embedding_table", [3]int64{v, d, 1}},
		{"rms_att_weight", [3]int64{L, d, 1}},
		{"wq", [3]int64{L, d, d}},
		{"wk", [3]int64{L, kv, d}},
		{"wv", [3]int64{L, kv, d}},
		{"wo", [3]int64{L, d, d}},
		{"rms_ffn_weight", [3]int64{L, d, 1}},
		{"w1", [3]int64{L, h, d}},
		{"w2", [3]int64{L, d, h}},
		{"w3", [3]int64{L, h, d}},
		{"rms_final_weight", [3]int64{d, 1, 1}},
		{"freq_cis_real", [3]int64{seq, hs / 2, 1}},
		{"freq_cis_imag", [3]int64{seq, hs / 2, 1}},
	}
	if !shared {
		sizes = append(sizes, struct {
			name string
			n    [3]int64
		}{"wcls", [3]int64{v, d, 1}})
	}
	arrays := map[string][]float32{}
	off := int64(Llama2CHeaderBytes)
	var total int64
	for _, s := range sizes {
		n := s.n[0] * s.n[1]
		if n > limit/s.n[2] {
			return Config{}, nil, fmt.Errorf("header %v: %s is too large", hdr, s.name)
		}
		total += n * s.n[2] * 4
		if total > limit {
			return Config{}, nil, fmt.Errorf("header %v: weights too large", hdr)
		}
	}
	if want := total + Llama2CHeaderBytes; int64(len(data)) != want {
		kind := "shared"
		if !shared {
			kind = "unshared"
		}
		what := "truncated or corrupt"
		if int64(len(data)) > want {
			what = "has trailing data or a wrong header"
		}
		return Config{}, nil, fmt.Errorf("file is %d bytes, the header (%v, %s classifier) implies %d: %s", len(data), hdr, kind, want, what)
	}
	for _, s := range sizes {
		n := s.n[0] * s.n[1] * s.n[2]
		f := make([]float32, n)
		for i := range f {
			f[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*int64(i):]))
		}
		arrays[s.name] = f
		off += 4 * n
	}
	mat := func(name string, layer int, out, in int64) *ir.Tensor {
		a := arrays[name][int64(layer)*out*in : int64(layer+1)*out*in]
		return Transpose2D(ir.FromFloat32([]int64{out, in}, a))
	}
	vec := func(name string, layer int) *ir.Tensor {
		return ir.FromFloat32([]int64{d}, arrays[name][int64(layer)*d:int64(layer+1)*d])
	}
	w := &Weights{Embed: ir.FromFloat32([]int64{v, d}, arrays["token_embedding_table"])}
	for l := 0; l < int(L); l++ {
		w.Layers = append(w.Layers, Layer{
			AttnNorm: vec("rms_att_weight", l),
			Wq:       mat("wq", l, d, d),
			Wk:       mat("wk", l, kv, d),
			Wv:       mat("wv", l, kv, d),
			Wo:       mat("wo", l, d, d),
			FFNNorm:  vec("rms_ffn_weight", l),
			W1:       mat("w1", l, h, d),
			W2:       mat("w2", l, d, h),
			W3:       mat("w3", l, h, d),
		})
	}
	w.FinalNorm = vec("rms_final_weight", 0)
	if shared {
		w.Output = Transpose2D(w.Embed)
	} else {
		w.Output = mat("wcls", 0, v, d)
	}
	if err := w.Check(cfg); err != nil {
		return Config{}, nil, errors.Join(errors.New("internal: decoded weights are inconsistent"), err)
	}
	return cfg, w, nil
}
