package tokenizer

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func testGGUF() []byte {
	return writeGGUF([]kv{
		{"general.architecture", "llama"},
		{"llama.block_count", uint32(2)},
		{"llama.rope.freq_base", float32(10000)},
		{"some.list", []int32{1, 2, 3}},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.pre", "default"},
		{"tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>", "▁a"}},
		{"tokenizer.ggml.scores", []float32{0, 0, 0, -1.5}},
		{"tokenizer.ggml.token_type", []int32{2, 3, 3, 1}},
		{"tokenizer.ggml.unknown_token_id", uint32(0)},
		{"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.ggml.eos_token_id", int32(2)},
		{"tokenizer.ggml.add_bos_token", true},
		{"tokenizer.ggml.add_eos_token", false},
		{"tokenizer.chat_template", "<|im_start|>"},
	})
}

func TestReadGGUFVocab(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.gguf")
	require.NoError(t, os.WriteFile(path, testGGUF(), 0o644))
	v, err := LoadGGUFVocab(path)
	require.NoError(t, err)
	require.Equal(t, &Vocab{
		Model: "llama", Pre: "default",
		Tokens: []string{"<unk>", "<s>", "</s>", "▁a"},
		Scores: []float32{0, 0, 0, -1.5},
		Types:  []int32{2, 3, 3, 1},
		BOS:    1, EOS: 2, UNK: 0, PAD: -1, SEP: -1, CLS: -1,
		AddBOS: Bool(true), AddEOS: Bool(false),
		ChatTemplate: "<|im_start|>",
	}, v)
	tok, err := New(v)
	require.NoError(t, err)
	require.Equal(t, []int32{1, 3}, tok.Encode("a", true, false))
}

// TestReadGGUFCorrupt: every truncation and a set of damaged fields give
// an error (never a panic or a huge allocation).
func TestReadGGUFCorrupt(t *testing.T) {
	good := testGGUF()
	for n := 0; n < len(good); n++ {
		_, err := ReadGGUFVocab(bytes.NewReader(good[:n]), int64(n))
		require.Error(t, err, "truncated to %d bytes", n)
	}
	patch := func(off int, val uint64, size int) []byte {
		b := bytes.Clone(good)
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], val)
		copy(b[off:off+size], buf[:size])
		return b
	}
	keyOff := 24 // first key length
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"magic", append([]byte("GGML"), good[4:]...), "bad magic"},
		{"version", patch(4, 1, 4), "unsupported"},
		{"kv count", patch(16, 1<<40, 8), "metadata entries"},
		{"key length", patch(keyOff, 1<<62, 8), "string of"},
		{"value type", patch(keyOff+8+len("general.architecture"), 99, 4), "unknown value type"},
	} {
		_, err := ReadGGUFVocab(bytes.NewReader(tc.data), int64(len(tc.data)))
		require.ErrorContains(t, err, tc.want, tc.name)
	}
	bad := writeGGUF([]kv{{"tokenizer.ggml.model", uint32(3)}})
	_, err := ReadGGUFVocab(bytes.NewReader(bad), int64(len(bad)))
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "want string")
	bad = writeGGUF([]kv{{"general.architecture", "llama"}})
	_, err = ReadGGUFVocab(bytes.NewReader(bad), int64(len(bad)))
	require.ErrorContains(t, err, "no tokenizer")
	_, err = LoadGGUFVocab(filepath.Join(t.TempDir(), "missing.gguf"))
	require.Error(t, err)
}
