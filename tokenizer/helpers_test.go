package tokenizer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// kv is one metadata entry for writeGGUF.
type kv struct {
	key string
	val any // string, uint32, int32, float32, bool, uint64, []string, []float32, []int32
}

// writeGGUF encodes a tensor-less GGUF v3 file with the given metadata.
func writeGGUF(kvs []kv) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	w := func(x any) { _ = binary.Write(&b, le, x) }
	str := func(s string) { w(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	w(uint32(3))
	w(uint64(0))
	w(uint64(len(kvs)))
	for _, e := range kvs {
		str(e.key)
		switch v := e.val.(type) {
		case string:
			w(ggufString)
			str(v)
		case uint32:
			w(ggufU32)
			w(v)
		case int32:
			w(ggufI32)
			w(v)
		case float32:
			w(ggufF32)
			w(math.Float32bits(v))
		case bool:
			w(ggufBool)
			if v {
				b.WriteByte(1)
			} else {
				b.WriteByte(0)
			}
		case uint64:
			w(ggufU64)
			w(v)
		case []string:
			w(ggufArray)
			w(ggufString)
			w(uint64(len(v)))
			for _, s := range v {
				str(s)
			}
		case []float32:
			w(ggufArray)
			w(ggufF32)
			w(uint64(len(v)))
			w(v)
		case []int32:
			w(ggufArray)
			w(ggufI32)
			w(uint64(len(v)))
			w(v)
		default:
			panic(fmt.Sprintf("writeGGUF: %T", v))
		}
	}
	return b.Bytes()
}

// vocabBuilder makes small in-test vocabularies.
type vocabBuilder struct{ v Vocab }

func newVocab(model string) *vocabBuilder {
	return &vocabBuilder{Vocab{Model: model, BOS: -1, EOS: -1, UNK: -1, PAD: -1, SEP: -1, CLS: -1}}
}

func (b *vocabBuilder) add(text string, typ int32, score float32) int32 {
	b.v.Tokens = append(b.v.Tokens, text)
	b.v.Types = append(b.v.Types, typ)
	b.v.Scores = append(b.v.Scores, score)
	return int32(len(b.v.Tokens) - 1)
}

func (b *vocabBuilder) build(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := New(&b.v)
	require.NoError(t, err)
	return tok
}

// ids maps token texts to ids in tok's vocabulary, failing on unknown texts.
func ids(t testing.TB, tok *Tokenizer, texts ...string) []int32 {
	t.Helper()
	out := []int32{}
	for _, s := range texts {
		id, ok := tok.ids[s]
		require.True(t, ok, "token %q not in the test vocabulary", s)
		out = append(out, id)
	}
	return out
}

// spmVocab: <unk> <s> </s>, the 256 byte tokens, then scored pieces.
func spmVocab() *vocabBuilder {
	b := newVocab("llama")
	b.v.UNK = b.add("<unk>", TypeUnknown, 0)
	b.v.BOS = b.add("<s>", TypeControl, 0)
	b.v.EOS = b.add("</s>", TypeControl, 0)
	for i := 0; i < 256; i++ {
		b.add(fmt.Sprintf("<0x%02X>", i), TypeByte, 0)
	}
	for i, s := range []string{"▁", "h", "e", "l", "o", "a", "b", "c", "w", "r", "d"} {
		b.add(s, TypeNormal, -100-float32(i))
	}
	b.add("he", TypeNormal, -1)
	b.add("ll", TypeNormal, -2)
	b.add("▁he", TypeNormal, -3)
	b.add("llo", TypeNormal, -4)
	b.add("▁hello", TypeNormal, -5)
	b.add("ab", TypeNormal, -1)
	b.add("bc", TypeNormal, -0.5)
	b.add("▁▁", TypeNormal, -6)
	return b
}

// bpeVocab: the 256 byte characters, then merged tokens with their merges.
func bpeVocab(pre string) *vocabBuilder {
	b := newVocab("gpt2")
	b.v.Pre = pre
	for i := 0; i < 256; i++ {
		b.add(string(byteRune[i]), TypeNormal, 0)
	}
	b.v.Merges = []string{"h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "e l", "el l"}
	for _, s := range []string{"el", "he", "ll", "hell", "hello", "Ġw", "or", "Ġwor", "ell", "Ġworld"} {
		b.add(s, TypeNormal, 0)
	}
	b.v.EOS = b.add("<|endoftext|>", TypeControl, 0)
	b.v.BOS = b.v.EOS
	return b
}
