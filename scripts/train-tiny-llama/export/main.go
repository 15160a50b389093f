package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"

	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/npy"
)

// config is model.json's "config" object.
type config struct {
	Vocab     int     `json:"vocab"`
	Dim       int     `json:"dim"`
	Layers    int     `json:"layers"`
	Heads     int     `json:"heads"`
	KVHeads   int     `json:"kv_heads"`
	FFN       int     `json:"ffn"`
	Ctx       int     `json:"ctx"`
	Eps       float64 `json:"eps"`
	RopeTheta float64 `json:"rope_theta"`
}

// model is model.json.
type model struct {
	Config    config    `json:"config"`
	Params    int64     `json:"params"`
	Tokens    []string  `json:"tokens"`
	Scores    []float32 `json:"scores"`
	TokenType []int32   `json:"token_type"`
}

func main() {
	in := flag.String("in", "", "directory train.py wrote (model.json, weights/)")
	out := flag.String("o", "tinyllama.gguf", "GGUF file to write")
	name := flag.String("name", "weft-tinyllama-fortunes", "general.name")
	flag.Parse()
	log.SetFlags(0)
	if *in == "" {
		log.Fatal("export: -in is required")
	}
	if err := export(*in, *out, *name); err != nil {
		log.Fatal(err)
	}
}

func export(dir, out, name string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	var m model
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("export: %s: %w", filepath.Join(dir, "model.json"), err)
	}
	c := m.Config
	if err := m.check(); err != nil {
		return fmt.Errorf("export: %s: %w", filepath.Join(dir, "model.json"), err)
	}
	w := gguf.NewWriter()
	u32 := func(v int) uint32 { return uint32(v) }
	meta := []struct {
		key string
		v   any
	}{
		{"general.architecture", "llama"},
		{"general.name", name},
		{"general.description", "tiny llama trained by weft's scripts/train-tiny-llama on the Debian fortunes corpus (BSD licence)"},
		{"general.file_type", uint32(0)}, // all F32
		{"llama.context_length", u32(c.Ctx)},
		{"llama.embedding_length", u32(c.Dim)},
		{"llama.block_count", u32(c.Layers)},
		{"llama.feed_forward_length", u32(c.FFN)},
		{"llama.attention.head_count", u32(c.Heads)},
		{"llama.attention.head_count_kv", u32(c.KVHeads)},
		{"llama.rope.freq_base", float32(c.RopeTheta)},
		{"llama.rope.dimension_count", u32(c.Dim / c.Heads)},
		{"llama.attention.layer_norm_rms_epsilon", float32(c.Eps)},
		{"llama.vocab_size", u32(c.Vocab)},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", m.Tokens},
		{"tokenizer.ggml.scores", m.Scores},
		{"tokenizer.ggml.token_type", m.TokenType},
		{"tokenizer.ggml.unknown_token_id", uint32(0)},
		{"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.ggml.eos_token_id", uint32(2)},
		{"tokenizer.ggml.add_bos_token", true},
		{"tokenizer.ggml.add_eos_token", false},
	}
	for _, kv := range meta {
		if err := w.Set(kv.key, kv.v); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	for _, tn := range tensorNames(c) {
		path := filepath.Join(dir, "weights", tn.name+".npy")
		t, err := npy.ReadFile(path)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if t.DType != ir.Float32 || !slices.Equal(t.Shape, tn.shape) {
			return fmt.Errorf("export: %s: %v %v, want float32 %v", path, t.DType, t.Shape, tn.shape)
		}
		if err := w.AddTensor(tn.name, t); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	if err := w.WriteFile(out); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	st, err := os.Stat(out)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Printf("wrote %s: %d bytes, %d parameters, vocab %d\n", out, st.Size(), m.Params, c.Vocab)
	return nil
}

func (m *model) check() error {
	c := m.Config
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"vocab", c.Vocab}, {"dim", c.Dim}, {"layers", c.Layers}, {"heads", c.Heads},
		{"kv_heads", c.KVHeads}, {"ffn", c.FFN}, {"ctx", c.Ctx}} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("config %s is %d, must be positive", f.name, f.v))
		}
	}
	if c.Heads > 0 && c.Dim%c.Heads != 0 {
		errs = append(errs, fmt.Errorf("dim %d is not a multiple of heads %d", c.Dim, c.Heads))
	}
	if len(m.Tokens) != c.Vocab || len(m.Scores) != c.Vocab || len(m.TokenType) != c.Vocab {
		errs = append(errs, fmt.Errorf("vocab %d but %d tokens, %d scores, %d token types",
			c.Vocab, len(m.Tokens), len(m.Scores), len(m.TokenType)))
	}
	if !(c.Eps > 0) || !(c.RopeTheta > 0) {
		errs = append(errs, fmt.Errorf("eps %v and rope_theta %v must be positive", c.Eps, c.RopeTheta))
	}
	return errors.Join(errs...)
}

type tensorName struct {
	name  string
	shape []int64
}

// tensorNames lists the GGUF tensors of a llama model in llama.cpp's order,
// with their weft (outer-first) shapes.
func tensorNames(c config) []tensorName {
	d, f, v := int64(c.Dim), int64(c.FFN), int64(c.Vocab)
	kv := int64(c.KVHeads * (c.Dim / c.Heads))
	ts := []tensorName{{"token_embd.weight", []int64{v, d}}}
	for i := range c.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			tensorName{p + "attn_norm.weight", []int64{d}},
			tensorName{p + "attn_q.weight", []int64{d, d}},
			tensorName{p + "attn_k.weight", []int64{kv, d}},
			tensorName{p + "attn_v.weight", []int64{kv, d}},
			tensorName{p + "attn_output.weight", []int64{d, d}},
			tensorName{p + "ffn_norm.weight", []int64{d}},
			tensorName{p + "ffn_gate.weight", []int64{f, d}},
			tensorName{p + "ffn_up.weight", []int64{f, d}},
			tensorName{p + "ffn_down.weight", []int64{d, f}},
		)
	}
	return append(ts, tensorName{"output_norm.weight", []int64{d}}, tensorName{"output.weight", []int64{v, d}})
}
