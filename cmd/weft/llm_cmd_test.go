package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
	"github.com/weftrt/weft/tokenizer"
)

// tinyGGUF writes the tiny random model of the given type.
func tinyGGUF(t *testing.T, typ string, extra ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny-"+typ+".gguf")
	code, _, errOut := cli(t, append([]string{"mkllm", "--preset", "tiny", "--type", typ, "-o", path}, extra...)...)
	require.Equal(t, 0, code, errOut)
	return path
}

// TestGenerateText: a text prompt is encoded with the GGUF's tokenizer and
// the streamed text is the decoding of the same run's token ids.
func TestGenerateText(t *testing.T) {
	path := tinyGGUF(t, "q8_0")
	v, err := tokenizer.LoadGGUFVocab(path)
	require.NoError(t, err)
	tok, err := tokenizer.New(v)
	require.NoError(t, err)
	prompt := "Once upon a time"
	ids := tok.Encode(prompt, true, false)
	code, text, errOut := cli(t, "generate", path, "-p", prompt, "-n", "10", "--stop", "2")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "prompt "+strconv.Itoa(len(ids))+" tokens")
	require.Contains(t, errOut, "peak RSS")
	var idText []string
	for _, id := range ids {
		idText = append(idText, strconv.Itoa(int(id)))
	}
	code, out, errOut := cli(t, "generate", path, "--ids", "-p", strings.Join(idText, ","), "-n", "10", "--stop", "2")
	require.Equal(t, 0, code, errOut)
	var gen []int32
	for _, f := range strings.Fields(out) {
		n, err := strconv.Atoi(f)
		require.NoError(t, err)
		gen = append(gen, int32(n))
	}
	require.NotEmpty(t, gen)
	full, err := tok.Decode(append(ids, gen...), false)
	require.NoError(t, err)
	want := strings.TrimPrefix(full, prompt)
	require.Equal(t, want+"\n", text)
}

// TestQuantizeGGUF: matrices are encoded by the codecs, the rest and the
// metadata copied; ffn-only touches the FFN only; the result generates.
func TestQuantizeGGUF(t *testing.T) {
	in := tinyGGUF(t, "f32")
	out := filepath.Join(t.TempDir(), "q.gguf")
	code, _, errOut := cli(t, "quantize", in, out, "--type", "q4_0")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "14 of 21 tensors quantized to q4_0")
	fi, err := gguf.Open(in)
	require.NoError(t, err)
	defer fi.Close()
	fo, err := gguf.Open(out)
	require.NoError(t, err)
	defer fo.Close()
	for _, kv := range fi.Metadata {
		v, ok := fo.Get(kv.Key)
		require.True(t, ok, kv.Key)
		require.Equal(t, kv.Value, v, kv.Key)
	}
	ft, err := fo.Int("general.file_type")
	require.NoError(t, err)
	require.EqualValues(t, 2, ft)
	for _, info := range fi.Tensors {
		a, err := fi.Tensor(info.Name)
		require.NoError(t, err)
		b, err := fo.Tensor(info.Name)
		require.NoError(t, err)
		require.Equal(t, a.Shape, b.Shape, info.Name)
		if len(a.Shape) == 2 && info.Name != "token_embd.weight" && info.Name != "output.weight" {
			require.Equal(t, ir.Q4_0, b.DType, info.Name)
			want, err := quant.Quantize(a, ir.Q4_0)
			require.NoError(t, err)
			require.Equal(t, want.Data, b.Data, info.Name)
		} else {
			require.Equal(t, a.DType, b.DType, info.Name)
			require.Equal(t, a.Data, b.Data, info.Name)
		}
	}
	code, _, errOut = cli(t, "generate", out, "-p", "hi", "-n", "4")
	require.Equal(t, 0, code, errOut)

	ffn := filepath.Join(t.TempDir(), "ffn.gguf")
	code, _, errOut = cli(t, "quantize", in, ffn, "--type", "q8_0", "--policy", "ffn-only", "-q")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "6 of 21 tensors quantized to q8_0")
	ff, err := gguf.Open(ffn)
	require.NoError(t, err)
	defer ff.Close()
	for name, dt := range map[string]ir.DType{"blk.1.ffn_up.weight": ir.Q8_0, "blk.0.ffn_down.weight": ir.Q8_0, "blk.0.attn_q.weight": ir.Float32} {
		info, ok := ff.TensorInfo(name)
		require.True(t, ok)
		require.Equal(t, dt, info.Type, name)
	}
	// q4_k needs rows of 256: the tiny model's rows of 64 and 128 are kept.
	code, _, errOut = cli(t, "quantize", in, filepath.Join(t.TempDir(), "k.gguf"), "--type", "q4_k", "-q")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "0 of 21 tensors quantized to q4_k")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"quantize", in, out, "--type", "q3_x"}, "unsupported"},
		{[]string{"quantize", in, out, "--policy", "some"}, "--policy"},
		{[]string{"quantize", filepath.Join(t.TempDir(), "none.gguf"), out}, "none.gguf"},
	} {
		code, _, errOut := cli(t, tc.args...)
		require.Equal(t, 1, code, tc.args)
		require.Contains(t, errOut, tc.want, tc.args)
	}
}

// TestChat: two turns, the second continuing from the cache; the reply to
// the second turn equals a fresh generation over the whole rendered
// conversation.
func TestChat(t *testing.T) {
	path := tinyGGUF(t, "q8_0")
	root := func(stdin string, args ...string) (int, string, string) {
		var o, e bytes.Buffer
		cmd := newRootCmd(&o, &e)
		cmd.SetIn(strings.NewReader(stdin))
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			e.WriteString(err.Error())
			return 1, o.String(), e.String()
		}
		return 0, o.String(), e.String()
	}
	code, out, errOut := root("hello there\n\nhow are you\n", "chat", path, "--temp", "0", "-n", "6")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "chat template chatml")
	replies := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, replies, 2, "%q", out)
	require.Equal(t, 2, strings.Count(errOut, "tokens in the cache"))

	// The same conversation as one prompt (ids), rendered by hand.
	v, err := tokenizer.LoadGGUFVocab(path)
	require.NoError(t, err)
	tok, err := tokenizer.New(v)
	require.NoError(t, err)
	turn1 := tok.Encode("<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\n", true, true)
	code, out1, errOut := cli(t, "generate", path, "--ids", "-p", joinIDs(turn1), "-n", "6", "--stop", "260,2")
	require.Equal(t, 0, code, errOut)
	r1 := parseIDList(t, out1)
	hist := append(append([]int32(nil), turn1...), r1...)
	// Whether the reply hit -n or sampled <|im_end|> (260, not printed),
	// the chat closes the turn with <|im_end|>.
	hist = append(hist, tok.Encode("<|im_end|>\n<|im_start|>user\nhow are you<|im_end|>\n<|im_start|>assistant\n", false, true)...)
	code, out2, errOut := cli(t, "generate", path, "--ids", "-p", joinIDs(hist), "-n", "6", "--stop", "260,2")
	require.Equal(t, 0, code, errOut)
	r2 := parseIDList(t, out2)
	text, err := tok.Decode(r2, false)
	require.NoError(t, err)
	require.Equal(t, text, replies[1])
}

func joinIDs(ids []int32) string {
	var s []string
	for _, id := range ids {
		s = append(s, strconv.Itoa(int(id)))
	}
	return strings.Join(s, ",")
}

func parseIDList(t *testing.T, s string) []int32 {
	var out []int32
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		require.NoError(t, err)
		out = append(out, int32(n))
	}
	return out
}

// TestBenchLLM: bench on a GGUF reports the LLM metrics.
func TestBenchLLM(t *testing.T) {
	path := tinyGGUF(t, "q4_0")
	code, out, errOut := cli(t, "bench", path, "--prefill", "8", "--decode", "16", "--json")
	require.Equal(t, 0, code, errOut)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	for _, k := range []string{"prefill_tok_s", "decode_tok_s", "ttft_ms"} {
		require.Greater(t, r[k].(float64), 0.0, k)
	}
	require.EqualValues(t, 16, r["decode_tokens"])
	// The read probe's passes: before the first of the paired generation's
	// 16 steps and after every fourth (16/8 = 2 steps would leave none
	// counted); the 3 steps after each pass are not counted.
	require.EqualValues(t, 5, r["read_bandwidth_passes"])
	require.EqualValues(t, 4, r["read_bandwidth_every_steps"])
	require.EqualValues(t, 3, r["paired_settle_steps"])
	require.EqualValues(t, 4, r["paired_decode_steps"])
	read, paired := r["read_bandwidth_gb_s"].(float64), r["paired_decode_tok_s"].(float64)
	require.Greater(t, read, 0.0)
	require.Greater(t, paired, 0.0)
	require.GreaterOrEqual(t, r["read_bandwidth_best_gb_s"].(float64), read)
	// The share is the median of the 4 stretches' (one step each: the
	// lower middle of four).
	var fr []float64
	for _, f := range r["decode_bandwidth_fraction_stretches"].([]any) {
		require.Greater(t, f.(float64), 0.0)
		fr = append(fr, f.(float64))
	}
	require.Len(t, fr, 4)
	// With the KV rows: each stretch's share is above its weights' alone.
	var tr []float64
	for i, f := range r["decode_traffic_fraction_stretches"].([]any) {
		require.Greater(t, f.(float64), fr[i])
		tr = append(tr, f.(float64))
	}
	require.Len(t, tr, 4)
	slices.Sort(fr)
	slices.Sort(tr)
	require.Equal(t, fr[1], r["decode_bandwidth_fraction"].(float64))
	require.Equal(t, tr[1], r["decode_traffic_fraction"].(float64))
	// The counted steps are the 4th, 8th, 12th and 16th after the 8-token
	// prompt: they read 12, 16, 20 and 24 positions' keys and values, 18
	// on average, and a position's are the KV cache's bytes over its 25.
	require.EqualValues(t, 25, r["ctx"])
	require.Equal(t, 18*r["kv_cache_bytes"].(float64)/25, r["decode_kv_read_bytes_per_token"].(float64))
	// From an empty context (llama-bench's tg): the same 16 steps after a
	// 1-token prompt, paired with the probe alike; its counted steps read
	// 5, 9, 13 and 17 positions, 11 on average.
	e := r["from_empty_context"].(map[string]any)
	require.EqualValues(t, 16, e["decode_tokens"])
	require.Greater(t, e["decode_tok_s"].(float64), 0.0)
	require.EqualValues(t, 5, e["read_bandwidth_passes"])
	require.EqualValues(t, 4, e["paired_decode_steps"])
	require.Len(t, e["decode_bandwidth_fraction_stretches"].([]any), 4)
	require.Greater(t, e["decode_bandwidth_fraction"].(float64), 0.0)
	require.Equal(t, 11*r["kv_cache_bytes"].(float64)/25, e["decode_kv_read_bytes_per_token"].(float64))
	code, out, errOut = cli(t, "bench", path, "--prefill", "8", "--decode", "8")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "decode  8 tokens")
	// 8 steps: a pass after every fourth, the last of each four counted.
	require.Contains(t, out, "read bandwidth between decode steps (3 passes of ")
	require.Contains(t, out, "(the 2 steps not among the 3 after each pass)")
	require.Contains(t, out, "of the read bandwidth (median of the stretches between passes: ")
	require.Contains(t, out, "with the KV cache its attention reads (")
	require.Contains(t, out, "from an empty context (llama-bench's tg: a 1-token prompt, then 8 steps): decode ")
	require.Contains(t, out, "\n    decode moves weights at ")
	// A 1-token prompt is an empty context already: no second figure.
	code, out, errOut = cli(t, "bench", path, "--prefill", "1", "--decode", "4", "--json")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "from_empty_context")
	code, out, errOut = cli(t, "bench", path, "--prefill", "8", "--decode", "3")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "no decode step to compare with (each was among the 3 after a pass: --decode 4 or more)")
	code, _, errOut = cli(t, "bench", path, "--prefill", "8", "--decode", "4", "--ctx", "5")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "--ctx 5")
}

// TestGenerateSlide: --overflow slide keeps generating past the context.
func TestGenerateSlide(t *testing.T) {
	path := tinyGGUF(t, "f32")
	code, out, errOut := cli(t, "generate", path, "--ids", "-p", "1,7,8", "-n", "30", "--ctx", "16", "--overflow", "slide", "--stop", "")
	require.Equal(t, 0, code, errOut)
	require.Len(t, strings.Fields(out), 30)
	require.Contains(t, errOut, "context slides")
	code, out, errOut = cli(t, "generate", path, "--ids", "-p", "1,7,8", "-n", "30", "--ctx", "16", "--stop", "")
	require.Equal(t, 0, code, errOut)
	require.Len(t, strings.Fields(out), 14)
	require.Contains(t, errOut, "stop: context full")
}

// TestChatTurnText: what a later turn feeds is the rendered conversation
// after the previous reply: its end-of-turn marker and the new turn.
func TestChatTurnText(t *testing.T) {
	for _, tc := range []struct {
		tmpl          tokenizer.Template
		first, second string
	}{
		{tokenizer.TemplateChatML, "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
			"<|im_end|>\n<|im_start|>user\nmore<|im_end|>\n<|im_start|>assistant\n"},
		{tokenizer.TemplateLlama3, "<|start_header_id|>system<|end_header_id|>\n\nbe brief<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
			"<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nmore<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
		{tokenizer.TemplateLlama2, "[INST] <<SYS>>\nbe brief\n<</SYS>>\n\nhi [/INST]", "</s><s>[INST] more [/INST]"},
	} {
		c := &chatSession{tmpl: tc.tmpl, system: "be brief"}
		got, err := c.turnText("hi")
		require.NoError(t, err)
		require.Equal(t, tc.first, got, tc.tmpl)
		c.msgs = []tokenizer.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}
		got, err = c.turnText("more")
		require.NoError(t, err)
		require.Equal(t, tc.second, got, tc.tmpl)
	}
}

// TestMkLLM: the same flags give the same bytes; qwen2 files load; bad
// flags fail clearly.
func TestMkLLM(t *testing.T) {
	a, b := tinyGGUF(t, "q4_0"), tinyGGUF(t, "q4_0")
	da, err := os.ReadFile(a)
	require.NoError(t, err)
	db, err := os.ReadFile(b)
	require.NoError(t, err)
	require.Equal(t, da, db)
	q := tinyGGUF(t, "f16", "--arch", "qwen2", "--tied")
	code, _, errOut := cli(t, "generate", q, "-p", "hello", "-n", "3")
	require.Equal(t, 0, code, errOut)
	f, err := gguf.Open(q)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, "qwen2", f.Architecture())
	_, ok := f.TensorInfo("output.weight")
	require.False(t, ok)
	_, ok = f.TensorInfo("blk.0.attn_q.bias")
	require.True(t, ok)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mkllm"}, "-o OUT.gguf is required"},
		{[]string{"mkllm", "-o", filepath.Join(t.TempDir(), "x.gguf"), "--preset", "huge"}, "unknown preset"},
		{[]string{"mkllm", "-o", filepath.Join(t.TempDir(), "x.gguf"), "--type", "i32"}, "unsupported"},
		{[]string{"mkllm", "-o", filepath.Join(t.TempDir(), "x.gguf"), "--arch", "gpt2"}, "unsupported"},
	} {
		code, _, errOut := cli(t, tc.args...)
		require.Equal(t, 1, code, tc.args)
		require.Contains(t, errOut, tc.want, tc.args)
	}
}

// TestGenerateTinyLlama: the trained example model's greedy text, streamed
// by `weft generate`, is PyTorch's (examples/tinyllama/greedy.json).
func TestGenerateTinyLlama(t *testing.T) {
	const dir = "../../examples/tinyllama/"
	raw, err := os.ReadFile(dir + "greedy.json")
	if os.IsNotExist(err) {
		t.Skip("examples/tinyllama is absent")
	}
	require.NoError(t, err)
	var ref struct {
		Prompt     string  `json:"prompt"`
		GreedyIDs  []int32 `json:"greedy_ids"`
		GreedyText string  `json:"greedy_text"`
	}
	require.NoError(t, json.Unmarshal(raw, &ref))
	// Up to the first EOS (id 2), where generate stops by default.
	n := 0
	for n < len(ref.GreedyIDs) && ref.GreedyIDs[n] != 2 {
		n++
	}
	code, out, errOut := cli(t, "generate", dir+"tinyllama.gguf", "-p", ref.Prompt, "-n", "32")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "generated "+strconv.Itoa(n)+" (stop: stop token)")
	require.True(t, strings.HasPrefix(ref.GreedyText, strings.TrimSuffix(out, "\n")), "got %q, PyTorch %q", out, ref.GreedyText)
	require.Greater(t, len(out), 20)
}

// TestTextStream: a character split over byte tokens is written whole,
// once its last byte arrives; a dangling byte is written by flush.
func TestTextStream(t *testing.T) {
	v, err := tokenizer.LoadGGUFVocab(tinyGGUF(t, "f32"))
	require.NoError(t, err)
	tok, err := tokenizer.New(v)
	require.NoError(t, err)
	byteTok := func(b byte) int32 { return 3 + int32(b) } // <0x00> is id 3
	var out bytes.Buffer
	s := newTextStream(tok, &out, tok.Encode("a", true, false))
	require.NoError(t, s.add(byteTok('x')))
	require.Equal(t, "x", out.String())
	require.NoError(t, s.add(byteTok(0xC3)))
	require.Equal(t, "x", out.String(), "half of é is held back")
	require.NoError(t, s.add(byteTok(0xA9)))
	require.Equal(t, "xé", out.String())
	require.NoError(t, s.add(byteTok(0xE2)))
	require.NoError(t, s.flush())
	require.Equal(t, "xé\xe2", out.String())
}

// TestTextStreamLong: a generation many windows long (streamWindow) is
// written exactly as decoding it whole after its context gives it, with
// characters of two to four bytes split over byte tokens across the
// window's moves.
func TestTextStreamLong(t *testing.T) {
	v, err := tokenizer.LoadGGUFVocab(tinyGGUF(t, "f32"))
	require.NoError(t, err)
	tok, err := tokenizer.New(v)
	require.NoError(t, err)
	ctx := tok.Encode("Once upon a time", true, false)
	text := strings.Repeat("The café’s owner said: «voilà» 🦙 and smiled. ", 12)
	gen := tok.Encode(text, false, false)
	require.Greater(t, len(gen), 8*streamWindow)
	full, err := tok.Decode(append(slices.Clone(ctx), gen...), false)
	require.NoError(t, err)
	base, err := tok.Decode(ctx, false)
	require.NoError(t, err)
	want := strings.TrimPrefix(full, base)
	var out bytes.Buffer
	s := newTextStream(tok, &out, ctx)
	for _, id := range gen {
		require.NoError(t, s.add(id))
		require.True(t, strings.HasPrefix(want, out.String()), "after %d bytes: %q is not a prefix", out.Len(), out.String())
		require.Less(t, len(s.seg), 3*streamWindow, "the window moves on")
	}
	require.NoError(t, s.flush())
	require.Equal(t, want, out.String())
}

// TestQuantizeKMix: q6_k and llama.cpp's q4_k_m on a model whose rows are
// whole super-blocks (dim 256, 8 layers): q4_k_m puts output.weight and,
// in layers 0, 3, 6 and 7 (the first and last eighth and every third one
// between), attn_v and ffn_down in Q6_K and every other selected matrix
// in Q4_K, with each tensor's bytes as quant.Quantize writes them; both
// files generate.
func TestQuantizeKMix(t *testing.T) {
	cfg := llama.Config{Dim: 256, HiddenDim: 512, Layers: 8, Heads: 4, KVHeads: 2, Vocab: 300, MaxSeq: 64, RopeTheta: 10000, NormEps: 1e-5}
	gw, err := llama.RandomGGUF(cfg, ir.Float32, 3)
	require.NoError(t, err)
	in := filepath.Join(t.TempDir(), "k.gguf")
	require.NoError(t, gw.WriteFile(in))
	fi, err := gguf.Open(in)
	require.NoError(t, err)
	defer fi.Close()
	for _, tc := range []struct {
		typ      string
		fileType int
		want     func(name string) ir.DType
	}{
		{"q6_k", 18, func(string) ir.DType { return ir.Q6_K }},
		{"q4_k_m", 15, func(name string) ir.DType {
			for _, l := range []string{"0", "3", "6", "7"} {
				if name == "blk."+l+".attn_v.weight" || name == "blk."+l+".ffn_down.weight" {
					return ir.Q6_K
				}
			}
			if name == "output.weight" {
				return ir.Q6_K
			}
			return ir.Q4_K
		}},
	} {
		out := filepath.Join(t.TempDir(), tc.typ+".gguf")
		code, _, errOut := cli(t, "quantize", in, out, "--type", tc.typ, "--policy", "all", "-q")
		require.Equal(t, 0, code, errOut)
		fo, err := gguf.Open(out)
		require.NoError(t, err)
		ft, err := fo.Int("general.file_type")
		require.NoError(t, err)
		require.EqualValues(t, tc.fileType, ft, tc.typ)
		for _, info := range fi.Tensors {
			a, err := fi.Tensor(info.Name)
			require.NoError(t, err)
			b, err := fo.Tensor(info.Name)
			require.NoError(t, err)
			if len(a.Shape) != 2 {
				require.Equal(t, a.Data, b.Data, info.Name)
				continue
			}
			dt := tc.want(info.Name)
			require.Equal(t, dt, b.DType, "%s %s", tc.typ, info.Name)
			want, err := quant.Quantize(a, dt)
			require.NoError(t, err)
			require.Equal(t, want.Data, b.Data, info.Name)
		}
		fo.Close()
		code, _, errOut = cli(t, "generate", out, "--ids", "-p", "1 2 3", "-n", "4")
		require.Equal(t, 0, code, errOut)
	}
}
