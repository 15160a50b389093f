package tokenizer

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// FuzzEncode: encoding then decoding never panics; byte-level BPE gives
// back the exact input; SentencePiece gives back valid UTF-8 input without
// ▁ characters; every id is in range.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", " ", "hello world", "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～",
		"  \n\n\t x", "\xff\xfe\xc3", "3333333", "<|endoftext|>hi", "<tag>é", "'S 'll 'Re"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	spmB := spmVocab()
	spmB.add("<tag>", TypeUserDefined, 0)
	toks := map[string]*Tokenizer{"spm": spmB.build(f)}
	for _, pre := range []string{"gpt-2", "llama-bpe", "qwen2", "deepseek-coder", "falcon", "starcoder", "default"} {
		toks[pre] = bpeVocab(pre).build(f)
	}
	wb := newVocab("bert")
	wb.v.UNK = wb.add("[UNK]", TypeUnknown, 0)
	wb.v.BOS = wb.add("[CLS]", TypeControl, 0)
	wb.v.EOS = wb.add("[SEP]", TypeControl, 0)
	wb.add("▁a", TypeNormal, 0)
	wb.add("b", TypeNormal, 0)
	toks["bert"] = wb.build(f)
	f.Fuzz(func(t *testing.T, s string, special bool) {
		for name, tok := range toks {
			got := tok.Encode(s, special, special)
			for _, id := range got {
				if id < 0 || int(id) >= len(tok.v.Tokens) {
					t.Fatalf("%s: id %d out of range", name, id)
				}
			}
			back, err := tok.Decode(got, false)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			switch {
			case tok.kind == kindBPE && !special:
				if back != s {
					t.Fatalf("%s: decode(encode(%q)) = %q", name, s, back)
				}
			case tok.kind == kindSPM && !special && utf8.ValidString(s) && !bytes.Contains([]byte(s), []byte(spaceMarker)) && !bytes.Contains([]byte(s), []byte("<tag>")):
				if back != s {
					t.Fatalf("%s: decode(encode(%q)) = %q", name, s, back)
				}
			}
		}
	})
}

// FuzzReadGGUFVocab: any bytes give a vocabulary or an error, never a panic.
func FuzzReadGGUFVocab(f *testing.F) {
	f.Add(testGGUF())
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadGGUFVocab(bytes.NewReader(data), int64(len(data)))
		if err == nil {
			_, _ = New(v) // must not panic either
		}
	})
}
