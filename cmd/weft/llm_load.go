package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
	"github.com/weftrt/weft/tokenizer"
)

// llmModel is a loaded, compiled language model.
type llmModel struct {
	path     string
	cfg      llama.Config
	capacity int
	model    *llm.Model
	tok      *tokenizer.Tokenizer // nil: token ids only (.bin, or a GGUF without a vocabulary)
	tokErr   error                // why tok is nil for a GGUF
	file     *gguf.File           // the mapping the weights live in (GGUF)
	weights  int64                // bytes of weights read per token (matrices, as stored)
	load     time.Duration
}

// Close releases the GGUF mapping.
func (m *llmModel) Close() {
	if m.file != nil {
		m.file.Close()
	}
}

// loadLLM reads a llama2.c checkpoint (.bin) or a GGUF model, builds the
// decode graph and prefill graphs of the given lengths with a kvType cache
// and compiles them. The cache holds up to ctxLen tokens (0: the model's
// context length); it starts with room for expect tokens (in pages of
// llm.PageTokens) and grows on demand.
func loadLLM(path string, ctxLen, expect int, prefill []int, kvType ir.DType, o weft.Options) (*llmModel, error) {
	t0 := time.Now()
	m := &llmModel{path: path}
	var w *llama.Weights
	var err error
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".bin":
		m.cfg, w, err = llama.LoadLlama2C(path)
	case ".gguf":
		m.file, err = gguf.Open(path)
		if err != nil {
			return nil, err
		}
		m.cfg, w, err = llama.FromGGUF(m.file)
		// The configuration is read; the vocabulary comes from the
		// tokenizer's own reader.
		m.file.DropMetadata()
		if err == nil {
			var v *tokenizer.Vocab
			if v, m.tokErr = tokenizer.LoadGGUFVocab(path); m.tokErr == nil {
				m.tok, m.tokErr = tokenizer.New(v)
			}
		}
	default:
		return nil, fmt.Errorf("%s: %w model type %q (want a llama2.c checkpoint .bin or a GGUF model .gguf)", path, ir.ErrUnsupported, ext)
	}
	if err != nil {
		m.Close()
		return nil, err
	}
	m.weights = weightBytes(w)
	m.capacity = m.cfg.MaxSeq
	if ctxLen > 0 {
		if ctxLen > m.cfg.MaxSeq {
			m.Close()
			return nil, fmt.Errorf("%s: --ctx %d exceeds the model's context of %d", path, ctxLen, m.cfg.MaxSeq)
		}
		m.capacity = ctxLen
	}
	// The cache starts at the pages the expected context needs and grows
	// on demand up to the capacity (recompiling the graphs per growth).
	// Prefill graphs of lastLogitsSeq tokens or more compute the last
	// token's logits only; shorter ones (a speculative target's
	// verification graph) keep every token's.
	factory := func(seq, capacity int) (llm.Runner, error) {
		g, err := llama.Build(m.cfg, w, llama.Mode{Seq: seq, Capacity: capacity, KVType: kvType, LastLogits: seq >= lastLogitsSeq, Ungrouped: !cpuOnly(o.Target)})
		if err != nil {
			return nil, err
		}
		return weft.New(g, o)
	}
	if m.model, err = llm.NewGrowing(factory, prefill, min(expect, m.capacity), m.capacity); err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Return the load's garbage (metadata, graph building, compilation) to
	// the OS now, before the runs touch the weights' pages: otherwise it
	// waits for the heap to double and adds to the peak RSS.
	debug.FreeOSMemory()
	m.load = time.Since(t0)
	return m, nil
}

// lastLogitsSeq is the shortest graph loadLLM builds with
// llama.Mode.LastLogits: prefill buckets, not the few-token graphs that
// verify speculative drafts (which need every token's logits).
const lastLogitsSeq = 16

// maxPrefillSeq caps the prefill graph length: a longer prompt runs in
// chunks of it (llm.Model.Feed), so that the graph's activations — which
// grow with its length — stay at about 10 MB, while each chunk is still
// long enough for the matrix kernels to run at full speed. Measured with
// weft bench (a 1920-token prompt, two threads, two rounds each), 128
// beat both 256 and 64: prefill tok/s of Qwen2-0.5B Q4_0 419–444 (256),
// 456–457 (128), 412–425 (64); Qwen2 F16 230–240, 244–258, 227–233;
// Llama-110M Q4_0 1154–1221, 1347–1419, 1152–1161; and the peak RSS at
// 128 is 6–10 MB under 256's (Qwen2: 11 MB).
const maxPrefillSeq = 128

// prefillBucket is the smallest power of two ≥ n (at least 2), capped at
// capacity and at maxPrefillSeq: the prefill graph size for an n-token
// prompt.
func prefillBucket(n, capacity int) int {
	b := 2
	for b < n && b < capacity && b < maxPrefillSeq {
		b *= 2
	}
	return min(b, capacity)
}

// weightBytes is the bytes of the weight matrices and embeddings row one
// token reads: every layer matrix, the classifier, one embedding row and
// the norms, as stored (quantized or f32).
func weightBytes(w *llama.Weights) int64 {
	var n int64
	add := func(ts ...*ir.Tensor) {
		for _, t := range ts {
			if t != nil {
				n += int64(len(t.Data))
			}
		}
	}
	for _, l := range w.Layers {
		add(l.AttnNorm, l.Wq, l.Wk, l.Wv, l.Wo, l.FFNNorm, l.W1, l.W2, l.W3, l.Bq, l.Bk, l.Bv)
	}
	add(w.FinalNorm, w.Output)
	if w.Embed != nil && len(w.Embed.Shape) == 2 && w.Embed.Shape[0] > 0 {
		n += int64(len(w.Embed.Data)) / w.Embed.Shape[0]
	}
	return n
}

// summary is the one-line description printed after loading.
func (m *llmModel) summary() string {
	c := m.cfg
	return fmt.Sprintf("%s: dim %d, %d layers, %d heads (%d kv), vocab %d, context %d, %.1f MB of weights per token, %s; loaded and compiled in %v",
		m.path, c.Dim, c.Layers, c.Heads, c.KVHeads, c.Vocab, m.capacity, float64(m.weights)/1e6, m.cacheNote(), m.load.Round(time.Millisecond))
}

// textStream writes the text of generated tokens as it becomes complete:
// it decodes the latest generated tokens, after a few tokens before them,
// and writes what is new, holding back an incomplete UTF-8 sequence (a
// character split over byte tokens) until it is whole.
//
// A token's text depends only on the tokens just before it (a
// SentencePiece space, a character split over at most four byte tokens),
// so a window of streamWindow tokens before the new ones is enough: the
// window moves on once the text so far is all written. (Decoding the
// whole context for every token took 0.15–0.3 ms a token at 2,000
// tokens, more than a Llama-110M decode step's tenth.)
type textStream struct {
	tok     *tokenizer.Tokenizer
	out     io.Writer
	left    []int32 // the tokens before seg, at most streamWindow (decoding depends on them)
	seg     []int32 // the generated tokens since the window last moved
	base    string  // left's text
	written int     // bytes of seg's text written
	pending string  // seg's text so far
	buf     []int32 // left, then seg: what add decodes
}

// streamWindow is the number of tokens before the new ones textStream
// decodes with them; the window moves once seg holds twice as many.
const streamWindow = 16

// flush writes what add held back (an incomplete character at the end).
func (s *textStream) flush() error {
	if len(s.pending) > s.written {
		_, err := io.WriteString(s.out, s.pending[s.written:])
		s.written = len(s.pending)
		return err
	}
	return nil
}

func newTextStream(tok *tokenizer.Tokenizer, out io.Writer, context []int32) *textStream {
	s := &textStream{tok: tok, out: out}
	s.setLeft(context)
	return s
}

// setLeft makes the last streamWindow tokens of ctx the window before an
// empty segment.
func (s *textStream) setLeft(ctx []int32) {
	s.left = append(s.left[:0], ctx[max(0, len(ctx)-streamWindow):]...)
	s.base, _ = s.tok.Decode(s.left, false)
	s.seg, s.written, s.pending = s.seg[:0], 0, ""
}

// add writes the text token id completes.
func (s *textStream) add(id int32) error {
	s.seg = append(s.seg, id)
	s.buf = append(append(s.buf[:0], s.left...), s.seg...)
	full, err := s.tok.Decode(s.buf, false)
	if err != nil {
		return err
	}
	text := strings.TrimPrefix(full, s.base)
	if len(text) == len(full) && s.base != "" {
		// The context's text is not a prefix (a merged space): decode the
		// generated tokens alone.
		if text, err = s.tok.Decode(s.seg, false); err != nil {
			return err
		}
	}
	end := len(text)
	// Hold back a trailing incomplete character (its lead byte and the
	// continuation bytes so far).
	i := len(text) - 1
	for i >= 0 && len(text)-i < utf8.UTFMax && text[i]&0xC0 == 0x80 {
		i--
	}
	if i >= 0 && text[i] >= 0xC0 && !utf8.FullRuneInString(text[i:]) {
		end = i
	}
	s.pending = text
	if end > s.written {
		_, err = io.WriteString(s.out, text[s.written:end])
		s.written = end
	}
	if err == nil && len(s.seg) >= 2*streamWindow && s.written == len(s.pending) {
		s.setLeft(s.buf)
	}
	return err
}

// kvTypeFlag registers --kv-type and returns its parsed value's getter.
func kvTypeFlag(cmd *cobra.Command) func() (ir.DType, error) {
	s := cmd.Flags().String("kv-type", "f16", "KV cache storage: f16 (half the memory of f32), f32, or q8_0 (about a quarter; needs a head size that is a multiple of 32)")
	return func() (ir.DType, error) {
		switch *s {
		case "f16":
			return ir.Float16, nil
		case "f32":
			return ir.Float32, nil
		case "q8_0":
			return ir.Q8_0, nil
		}
		return ir.Invalid, fmt.Errorf("--kv-type %q: %w (want f16, f32 or q8_0)", *s, ir.ErrUnsupported)
	}
}

// cacheNote describes the KV cache memory.
func (m *llmModel) cacheNote() string {
	c := m.model
	b := 2 * int64(c.Layers*c.KVHeads*c.Capacity) * c.KVType.Bytes(int64(c.HeadDim))
	return fmt.Sprintf("KV cache %v, %d of up to %d tokens allocated (%.1f MB)", c.KVType, c.Capacity, c.MaxCapacity(), float64(b)/1e6)
}

// cpuOnly reports whether targets name the CPU only (llama graphs then use
// QMatMulGroup, which only the CPU backend has a kernel for).
func cpuOnly(targets []string) bool {
	for _, t := range targets {
		if t != "cpu" && !strings.HasPrefix(t, "cpu:") {
			return false
		}
	}
	return len(targets) > 0
}
