package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeVocabGGUF writes a vocabulary-only GGUF v3 file: a byte-level BPE
// vocabulary with the 256 byte characters (ids 0-255, in byte order: ids
// below are the characters' positions in GPT-2's byte map), "he" (256),
// "ll" (257), "hell" (258), "hello" (259) and <|endoftext|> (260).
func writeVocabGGUF(t *testing.T) string {
	var b bytes.Buffer
	w := func(x any) { require.NoError(t, binary.Write(&b, binary.LittleEndian, x)) }
	str := func(s string) { w(uint64(len(s))); b.WriteString(s) }
	tokens := make([]string, 0, 261)
	for c := 0; c < 256; c++ {
		tokens = append(tokens, string(gpt2Char(byte(c))))
	}
	tokens = append(tokens, "he", "ll", "hell", "hello", "<|endoftext|>")
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = 1
	}
	types[260] = 3
	b.WriteString("GGUF")
	w(uint32(3))
	w(uint64(0))
	w(uint64(6))
	str("tokenizer.ggml.model")
	w(uint32(8))
	str("gpt2")
	str("tokenizer.ggml.pre")
	w(uint32(8))
	str("gpt-2")
	str("tokenizer.ggml.tokens")
	w(uint32(9))
	w(uint32(8))
	w(uint64(len(tokens)))
	for _, s := range tokens {
		str(s)
	}
	str("tokenizer.ggml.token_type")
	w(uint32(9))
	w(uint32(5))
	w(uint64(len(types)))
	w(types)
	str("tokenizer.ggml.merges")
	w(uint32(9))
	w(uint32(8))
	w(uint64(3))
	for _, m := range []string{"h e", "l l", "he ll"} {
		str(m)
	}
	str("tokenizer.ggml.bos_token_id")
	w(uint32(4))
	w(uint32(260))
	path := filepath.Join(t.TempDir(), "vocab.gguf")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return path
}

// gpt2Char is GPT-2's printable stand-in for byte c.
func gpt2Char(c byte) rune {
	if c >= '!' && c <= '~' || c >= 0xA1 && c <= 0xAC || c >= 0xAE {
		return rune(c)
	}
	n := 0
	for x := 0; x < int(c); x++ {
		if !(x >= '!' && x <= '~' || x >= 0xA1 && x <= 0xAC || x >= 0xAE) {
			n++
		}
	}
	return rune(256 + n)
}

func TestTokenize(t *testing.T) {
	path := writeVocabGGUF(t)
	// "hello" → he, ll, then "he ll" → hell, o (no "hell o" merge);
	// " h" → Ġ (byte 32 is the 33rd stand-in: id 32) and h (104).
	code, out, errOut := cli(t, "tokenize", path, "hello h")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "258 111 32 104\n", out)

	code, out, errOut = cli(t, "tokenize", path, "--parse-special", "<|endoftext|>he")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "260 256\n", out)
	code, out, _ = cli(t, "tokenize", path, "<|endoftext|>")
	require.Equal(t, 0, code)
	require.NotContains(t, out, "260", "control tokens are text without --parse-special")

	code, out, errOut = cli(t, "tokenize", path, "--decode", "258 111 32 104")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "hello h\n", out)

	root := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	var o bytes.Buffer
	root.SetOut(&o)
	root.SetIn(strings.NewReader("hell"))
	root.SetArgs([]string{"tokenize", path, "-"})
	require.NoError(t, root.Execute())
	require.Equal(t, "258\n", o.String())

	code, _, errOut = cli(t, "tokenize", path, "--decode", "1 x")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `--decode: "x" is not a token id`)
	code, _, errOut = cli(t, "tokenize", path, "--decode", "9999")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "out of range")

	bad := filepath.Join(t.TempDir(), "bad.gguf")
	require.NoError(t, os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00\x00"), 0o644))
	code, _, errOut = cli(t, "tokenize", bad, "x")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "bad.gguf")
	require.Contains(t, errOut, "corrupt")
}
