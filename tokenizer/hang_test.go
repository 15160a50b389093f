package tokenizer

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

func TestHang(t *testing.T) {
	spmB := spmVocab()
	spmB.add("<tag>", TypeUserDefined, 0)
	toks := map[string]*Tokenizer{"spm": spmB.build(t)}
	for _, pre := range []string{"gpt-2", "llama-bpe", "qwen2", "deepseek-coder", "falcon", "starcoder", "default"} {
		toks[pre] = bpeVocab(pre).build(t)
	}
	wb := newVocab("bert")
	wb.v.UNK = wb.add("[UNK]", TypeUnknown, 0)
	wb.v.BOS = wb.add("[CLS]", TypeControl, 0)
	wb.v.EOS = wb.add("[SEP]", TypeControl, 0)
	wb.add("▁a", TypeNormal, 0)
	wb.add("b", TypeNormal, 0)
	toks["bert"] = wb.build(t)
	alpha := []string{"a", "b", " ", "\n", "1", "'", "s", "<", "tag>", "é", "\xff", "!", "你", "▁", "\t", "<|endoftext|>", "$"}
	r := rand.New(rand.NewSource(1))
	for it := 0; it < 20000; it++ {
		s := ""
		for k := r.Intn(12); k > 0; k-- {
			s += alpha[r.Intn(len(alpha))]
		}
		for name, tok := range toks {
			for _, sp := range []bool{false, true} {
				done := make(chan bool)
				go func() { _, _ = tok.Decode(tok.Encode(s, sp, sp), false); close(done) }()
				select {
				case <-done:
				case <-time.After(2 * time.Second):
					panic(fmt.Sprintf("hang %s %v %q", name, sp, s))
				}
			}
		}
	}
}
