package tokenizer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Hand-checked encodings on tiny vocabularies; the expected pieces are
// derived by hand from the merge rules (see the comments).
func TestSPM(t *testing.T) {
	b := spmVocab()
	b.add("<|im_start|>", TypeControl, 0)
	b.add("<tag>", TypeUserDefined, 0)
	tok := b.build(t)
	for _, tc := range []struct {
		name, text          string
		addSpecial, special bool
		want                []string
	}{
		// ▁hello: he(-1) ll(-2) ▁he(-3) llo(-4) ▁hello(-5), best score first.
		{"merges by score", "hello", false, false, []string{"▁hello"}},
		// ▁abc: bc (-0.5) beats ab (-1) although ab is further left.
		{"score beats position", "abc", false, false, []string{"▁", "a", "bc"}},
		{"two words", "hello world", false, false, []string{"▁hello", "▁", "w", "o", "r", "l", "d"}},
		// € is not a token: its three UTF-8 bytes become byte tokens.
		{"byte fallback", "h€", false, false, []string{"▁", "h", "<0xE2>", "<0x82>", "<0xAC>"}},
		// ▁▁▁: two equal-score ▁▁ candidates, the left one merges.
		{"tie goes left", "  ", false, false, []string{"▁▁", "▁"}},
		{"empty", "", false, false, []string{}},
		{"bos", "hello", true, false, []string{"<s>", "▁hello"}},
		{"bos on empty", "", true, false, []string{"<s>"}},
		// A user-defined token is always matched; the text after it gets the space prefix again.
		{"user-defined", "a<tag>b", false, false, []string{"▁", "a", "<tag>", "▁", "b"}},
		{"control as text", "<|im_start|>", false, false, concat([]string{"▁"}, byteTokens("<|im_st"), []string{"a", "r"}, byteTokens("t|>"))},
		{"control parsed", "<|im_start|>a", false, true, []string{"<|im_start|>", "▁", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, ids(t, tok, tc.want...), nonNil(tok.Encode(tc.text, tc.addSpecial, tc.special)))
		})
	}
	for _, s := range []string{"hello world", "  h€llo\tab", "", "x", "<tag>"} {
		got, err := tok.Decode(tok.Encode(s, true, false), false)
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	// As in llama.cpp, text after a special token gets the space prefix
	// again, so it decodes with a space.
	got, err := tok.Decode(tok.Encode("<tag>a", true, false), false)
	require.NoError(t, err)
	require.Equal(t, "<tag> a", got)
	got, err = tok.Decode(tok.Encode("hello", true, false), true)
	require.NoError(t, err)
	require.Equal(t, "<s> hello", got, "special tokens are printed with special")
	_, err = tok.Decode([]int32{int32(len(b.v.Tokens))}, false)
	require.ErrorContains(t, err, "out of range")
}

func byteTokens(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		out = append(out, "<0x"+strings.ToUpper(hex2(s[i]))+">")
	}
	return out
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

func nonNil(a []int32) []int32 {
	if a == nil {
		return []int32{}
	}
	return a
}

func TestByteLevelBPE(t *testing.T) {
	gpt2 := bpeVocab("gpt-2").build(t)
	llama3 := bpeVocab("llama-bpe").build(t)
	// A merge may produce a piece that is not a token ("ca"), which a
	// later merge ("ca t") joins into one that is: such merges are ranked
	// by text, the rest by token ids.
	odd := bpeVocab("gpt-2")
	odd.v.Merges = append(odd.v.Merges, "c a", "ca t")
	odd.add("cat", TypeNormal, 0)
	oddTok := odd.build(t)
	require.Len(t, odd.v.Merges, 11, "New keeps the caller's Vocab as it is")
	for _, tc := range []struct {
		name string
		tok  *Tokenizer
		text string
		want []string
	}{
		// hello: "h e"(0) → "l l"(1) → "he ll"(2) → "hell o"(3).
		{"merges by rank", gpt2, "hello", []string{"hello"}},
		// ell: "l l"(1) beats "e l"(7) although "e l" is further left, so
		// "el l" never applies.
		{"rank beats position", gpt2, "ell", []string{"e", "ll"}},
		// " world" → Ġworld: "Ġ w"(4), "o r"(5), "Ġw or"(6); "Ġworld" is a
		// token but no merge reaches it.
		{"pre-tokenized words", gpt2, "hello world", []string{"hello", "Ġwor", "l", "d"}},
		// Llama 3 takes a pre-token that is a token whole, merges or not.
		{"llama3 whole-word tokens", llama3, "hello world", []string{"hello", "Ġworld"}},
		// 'é' is two bytes C3 A9, mapped to "Ã" and "©".
		{"bytes", gpt2, "é", []string{"Ã", "©"}},
		{"merge through a non-token", oddTok, "cat", []string{"cat"}},
		{"no merge to a non-token", oddTok, "ca", []string{"c", "a"}},
		{"control as text", gpt2, "<|endoftext|>", []string{"<", "|", "e", "n", "d", "o", "f", "t", "e", "x", "t", "|", ">"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, ids(t, tc.tok, tc.want...), nonNil(tc.tok.Encode(tc.text, false, false)))
		})
	}
	require.Equal(t, ids(t, gpt2, "<|endoftext|>", "hello"), gpt2.Encode("<|endoftext|>hello", false, true))
	require.Equal(t, ids(t, gpt2, "hello"), gpt2.Encode("hello", true, false), "gpt2 adds no BOS by default")
	b := bpeVocab("gpt-2")
	b.v.AddBOS = Bool(true)
	require.Equal(t, ids(t, gpt2, "<|endoftext|>", "hello"), b.build(t).Encode("hello", true, false))
	for _, s := range []string{"hello world", "  héllo\n\n\t🦙 it's 12345", "\xff\xfe broken \xc3", ""} {
		got, err := gpt2.Decode(gpt2.Encode(s, false, false), false)
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
}

func TestPreTokenizers(t *testing.T) {
	for _, tc := range []struct {
		pre, text string
		want      []string
	}{
		// \s+(?!\S) leaves the last space of a run to the word after it.
		{"gpt-2", "Hello world's  test 123!!\n\n x", []string{"Hello", " world", "'s", " ", " test", " 123", "!!", "\n\n", " x"}},
		{"gpt-2", "trailing  ", []string{"trailing", "  "}},
		{"gpt-2", "IT'S", []string{"IT", "'", "S"}},
		// Llama 3: digits in threes, punctuation takes following newlines,
		// contractions fold case.
		{"llama-bpe", "Hello world's 12345 ...\n\nyes", []string{"Hello", " world", "'s", " ", "123", "45", " ...\n\n", "yes"}},
		{"llama-bpe", "IT'S", []string{"IT", "'S"}},
		{"llama-bpe", "a \n\n b", []string{"a", " \n\n", " b"}},
		{"qwen2", "x12345", []string{"x", "1", "2", "3", "4", "5"}},
		{"deepseek-coder", "Hi 你好 123\nx", []string{"Hi", " ", "你好", " ", "1", "2", "3", "\n", "x"}},
		{"falcon", "a+b=1234", []string{"a", "+", "b", "=", "123", "4"}},
		{"starcoder", "x 12", []string{"x", " ", "1", "2"}},
		{"default", "$12345 ok", []string{"$", "123", "45", " ok"}},
	} {
		ms, _, err := preTokenizer(tc.pre)
		require.NoError(t, err)
		require.Equal(t, tc.want, pretokenize(tc.text, ms), "%s %q", tc.pre, tc.text)
	}
	_, _, err := preTokenizer("no-such-model")
	require.ErrorIs(t, err, ErrUnsupported)
}

func TestWordPiece(t *testing.T) {
	b := newVocab("bert")
	b.v.UNK = b.add("[UNK]", TypeUnknown, 0)
	b.v.CLS = b.add("[CLS]", TypeControl, 0)
	b.v.SEP = b.add("[SEP]", TypeControl, 0)
	for _, s := range []string{"▁hello", "▁un", "aff", "able", "▁,", "▁!", "▁你", "▁好", "▁a", "▁$"} {
		b.add(s, TypeNormal, 0)
	}
	tok := b.build(t)
	// Accents fold to the base letter, case folds, punctuation, ASCII
	// symbols and CJK ideographs are words of their own; "▁unaffable" is
	// matched longest-first as ▁un + aff + able; xyz and "una" (▁un + an
	// unmatched "a") are unknown as a whole.
	got := tok.Encode("Héllo, UNaffable! xyz 你好 una $", true, false)
	want := ids(t, tok, "[CLS]", "▁hello", "▁,", "▁un", "aff", "able", "▁!", "[UNK]", "▁你", "▁好", "[UNK]", "▁$", "[SEP]")
	require.Equal(t, want, got)
	text, err := tok.Decode(got, false)
	require.NoError(t, err)
	require.Equal(t, "hello , unaffable ! 你 好 $", text)
	require.Equal(t, []string{"a", "b"}, wpmWords("a\u0000\u0301b"[:1]+" b"), "controls dropped")
}

func TestNew(t *testing.T) {
	b := newVocab("t5")
	b.add("a", TypeNormal, 0)
	_, err := New(&b.v)
	require.ErrorIs(t, err, ErrUnsupported)
	_, err = New(&Vocab{Model: "llama"})
	require.ErrorContains(t, err, "no tokens")
	b = spmVocab()
	b.v.Scores = b.v.Scores[:3]
	_, err = New(&b.v)
	require.ErrorContains(t, err, "scores")
	b = spmVocab()
	b.v.BOS = 1 << 20
	_, err = New(&b.v)
	require.ErrorContains(t, err, "bos token id")
	b = spmVocab()
	b.v.BOS = -1
	_, err = New(&b.v)
	require.ErrorContains(t, err, "no BOS")
	b = bpeVocab("gpt-2")
	b.v.Merges = append(b.v.Merges, "nospace")
	_, err = New(&b.v)
	require.ErrorContains(t, err, "has no space")
}
