package gguf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// raw builds GGUF bytes by hand for the corruption tests.
type raw []byte

func (b raw) u32(v uint32) raw { return binary.LittleEndian.AppendUint32(b, v) }
func (b raw) u64(v uint64) raw { return binary.LittleEndian.AppendUint64(b, v) }
func (b raw) str(s string) raw { return append(b.u64(uint64(len(s))), s...) }
func (b raw) pad(a int) raw {
	for len(b)%a != 0 {
		b = append(b, 0)
	}
	return b
}

func header(version uint32, nt, nkv uint64) raw {
	return raw("GGUF").u32(version).u64(nt).u64(nkv)
}

// tinfo appends a tensor descriptor with GGUF (innermost-first) dims.
func (b raw) tinfo(name string, typ uint32, off uint64, dims ...uint64) raw {
	b = b.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		b = b.u64(d)
	}
	return b.u32(typ).u64(off)
}

func TestCorrupt(t *testing.T) {
	f32 := func(nt uint64) raw { return header(3, nt, 0) }
	nested := header(3, 0, 1).str("deep").u32(uint32(TypeArray))
	for i := 0; i < 20; i++ {
		nested = nested.u32(uint32(TypeArray)).u64(1)
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a GGUF file"},
		{"magic", []byte("GGML\x03\x00\x00\x00"), "not a GGUF file"},
		{"short header", header(3, 0, 0)[:20], "truncated header"},
		{"version 1", header(1, 0, 0), "unsupported: GGUF version 1"},
		{"version 9", header(9, 0, 0), "unsupported: GGUF version 9"},
		{"big-endian", raw("GGUF").u32(0x03000000).u64(0).u64(0), "unsupported: big-endian"},
		{"absurd tensor count", header(3, 1<<60, 0), "tensor count: count 1152921504606846976 exceeds"},
		{"absurd kv count", header(3, 0, 1<<40), "metadata count: count"},
		{"kv count past end", header(3, 0, 2).str("a").u32(uint32(TypeUint8)).append(1), "metadata count: count 2 exceeds what the remaining 14 bytes can hold"},
		{"absurd key length", header(3, 0, 1).u64(1 << 62).u32(0).u64(0), "metadata entry 0: key: string of 4611686018427387904 bytes exceeds"},
		{"unknown value type", header(3, 0, 1).str("k").u32(13).u32(0), `key "k": unknown value type 13`},
		{"truncated value", header(3, 0, 1).str("k").u32(uint32(TypeUint64)).u32(0), `key "k": unexpected end of file`},
		{"absurd array count", header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(1 << 50), `key "k": array of uint32: count`},
		{"absurd string array", header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1 << 20).u64(0), "array of string: count 1048576"},
		{"array element type", header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(77).u64(0), "array of unknown value type 77"},
		{"string in array past end", header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(2).str("ab").u64(100), "string array element 1"},
		{"bool 2", header(3, 0, 1).str("k").u32(uint32(TypeBool)).append(2), "bool byte 2"},
		{"deep nesting", nested, "nested more than"},
		{"duplicate key", header(3, 0, 2).str("k").u32(uint32(TypeUint8)).append(1).str("k").u32(uint32(TypeUint8)).append(1), `key "k" appears twice`},
		{"alignment 0", header(3, 0, 1).str(KeyAlignment).u32(uint32(TypeUint32)).u32(0), "power-of-two uint32"},
		{"alignment 48", header(3, 0, 1).str(KeyAlignment).u32(uint32(TypeUint32)).u32(48), "power-of-two uint32"},
		{"alignment type", header(3, 0, 1).str(KeyAlignment).u32(uint32(TypeUint64)).u64(32), "power-of-two uint32"},
		{"5 dims", f32(1).tinfo("t", 0, 0, 1, 1, 1, 1, 1), `tensor 0 "t": 5 dimensions`},
		{"absurd dim", f32(1).tinfo("t", 0, 0, 1<<62), "absurdly large"},
		{"element overflow", f32(1).tinfo("t", 0, 0, 1<<30, 1<<30), "element count overflows"},
		{"unknown type", f32(1).tinfo("t", 99, 0, 4), `tensor 0 "t": unsupported: unknown ggml type id 99`},
		{"removed type 4", f32(1).tinfo("t", 4, 0, 32), "unknown ggml type id 4"},
		{"partial block", f32(1).tinfo("t", 12, 0, 100), "q4_k rows must be a multiple of 256"},
		{"absurd offset", f32(1).tinfo("t", 0, 1<<63, 4), "absurdly large"},
		{"misaligned offset", f32(1).tinfo("t", 0, 4, 1).pad(32).u64(0), "not a multiple of the alignment 32"},
		{"data past end", f32(1).tinfo("t", 0, 0, 16).pad(32).u64(0), `tensor "t": data [0, +64) lies outside the 8-byte data section`},
		{"data section past end", f32(1).tinfo("t", 0, 0, 1), "past the end"},
		{"overlap", f32(2).tinfo("a", 0, 0, 16).tinfo("b", 0, 32, 16).pad(32).append(make([]byte, 96)...), `tensors "a" and "b" overlap`},
		{"duplicate tensor", f32(2).tinfo("a", 0, 0, 8).tinfo("a", 0, 32, 8).pad(32).append(make([]byte, 64)...), `tensor name "a" appears twice`},
		{"truncated tensor info", f32(1).tinfo("t", 0, 0, 4)[:40], "tensor 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.data)
			require.Error(t, err)
			require.ErrorContains(t, err, c.want)
			require.True(t, strings.HasPrefix(err.Error(), "gguf: <memory>: "), err.Error())
		})
	}
}

func (b raw) append(x ...byte) raw { return append(b, x...) }

// TestCorruptValidNeighbours checks that the hand-built files around the
// corruption cases are valid when not corrupted, so the errors above come
// from the corruption and not from the builder.
func TestCorruptValidNeighbours(t *testing.T) {
	ok := []raw{
		header(3, 0, 0),
		header(2, 0, 0),
		header(3, 0, 1).str(KeyAlignment).u32(uint32(TypeUint32)).u32(64),
		header(3, 1, 0).tinfo("t", 0, 0, 16).pad(32).append(make([]byte, 64)...),
		header(3, 2, 0).tinfo("a", 0, 0, 8).tinfo("b", 0, 32, 8).pad(32).append(make([]byte, 64)...),
		header(3, 1, 0).tinfo("z", 0, 0, 0, 4).pad(32), // zero elements, no bytes
	}
	for i, b := range ok {
		_, err := Parse(b)
		require.NoError(t, err, "case %d", i)
	}
}

// TestTruncations parses every prefix of a valid file: each must fail with
// an error (or, for prefixes that cut only trailing data padding, parse),
// never panic.
func TestTruncations(t *testing.T) {
	b, _, _ := buildFile(t, 0)
	full, err := Parse(b)
	require.NoError(t, err)
	end := full.DataOffset
	for _, ti := range full.Tensors {
		end = max(end, full.DataOffset+ti.Offset+ti.Size)
	}
	for n := 0; n < len(b); n++ {
		_, err := Parse(b[:n])
		if int64(n) < end {
			require.Error(t, err, "prefix of %d bytes", n)
		} else {
			require.NoError(t, err, "prefix of %d bytes", n)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "missing.gguf"))
	require.Error(t, err)
	path := filepath.Join(t.TempDir(), "bad.gguf")
	require.NoError(t, os.WriteFile(path, []byte("GGUF\x01\x00\x00\x00"), 0o644))
	_, err = Open(path)
	require.ErrorContains(t, err, path)
	empty := filepath.Join(t.TempDir(), "empty.gguf")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = Open(empty)
	require.ErrorContains(t, err, "not a GGUF file")
}

// vocabDir holds vocabulary-only GGUF files from the ggml test data.
const vocabDir = "../../../shared/tokenizer-tests"

// mangled reports whether b looks like a binary file that went through a
// lossy UTF-8 text decoding: every byte sequence invalid in UTF-8 replaced
// by U+FFFD (EF BF BD), leaving a file that is valid UTF-8 throughout,
// which a real GGUF file (binary counts and floats) practically never is.
func mangled(b []byte) bool {
	return utf8.Valid(b) && bytes.Contains(b, []byte("\xef\xbf\xbd"))
}

// unmangle undoes such a decoding as far as possible, assuming each
// U+FFFD stood for one byte (put back as 0x80). The structure of the file
// comes back when that assumption holds; the values of the damaged bytes
// do not.
func unmangle(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("\xef\xbf\xbd"), []byte{0x80})
}

// vocabFiles returns the vocabulary files' contents by name.
func vocabFiles(tb testing.TB) map[string][]byte {
	paths, _ := filepath.Glob(filepath.Join(vocabDir, "*.gguf"))
	if len(paths) == 0 {
		tb.Skipf("no vocabulary files in %s", vocabDir)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(tb, err)
		out[p] = b
	}
	return out
}

// checkVocab asserts what every vocabulary file holds: no tensors, a
// tokenizer model and a large token list with parallel arrays.
func checkVocab(t *testing.T, f *File) {
	require.Contains(t, []uint32{2, 3}, f.Version)
	require.Empty(t, f.Tensors)
	toks, err := f.Strings("tokenizer.ggml.tokens")
	require.NoError(t, err)
	require.Greater(t, len(toks), 1000)
	model, err := f.String("tokenizer.ggml.model")
	require.NoError(t, err)
	require.NotEmpty(t, model)
	if tt, err := f.Int32s("tokenizer.ggml.token_type"); err == nil {
		require.Len(t, tt, len(toks))
	}
	if sc, err := f.Float32s("tokenizer.ggml.scores"); err == nil {
		require.Len(t, sc, len(toks))
	}
	// The metadata round-trips through the writer.
	w := NewWriter()
	for _, kv := range f.Metadata {
		require.NoError(t, w.Set(kv.Key, kv.Value))
	}
	b, err := w.Bytes()
	require.NoError(t, err)
	g, err := Parse(b)
	require.NoError(t, err)
	require.Equal(t, f.Metadata, g.Metadata)
}

// TestVocabFiles parses the real-world vocabulary files: no tensors,
// large string arrays. The copies in the shared directory have been
// through a lossy UTF-8 decoding (see mangled); such a file must fail
// with a clean error naming it, and is then parsed again as far as
// unmangle restores its structure. At least one file must parse fully.
func TestVocabFiles(t *testing.T) {
	parsed := 0
	for p, b := range vocabFiles(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			start := time.Now()
			f, err := Open(p)
			elapsed := time.Since(start)
			if err == nil {
				defer f.Close()
				t.Logf("%d keys, parsed in %v", len(f.Metadata), elapsed)
				checkVocab(t, f)
				parsed++
				return
			}
			require.True(t, mangled(b), "an intact file failed: %v", err)
			require.ErrorContains(t, err, p)
			t.Logf("file is mangled (%d U+FFFD replacements); parse error: %.160s", bytes.Count(b, []byte("\xef\xbf\xbd")), err)
			f, err = Parse(unmangle(b))
			if err != nil {
				t.Logf("not recoverable by unmangle: %.160s", err)
				return
			}
			t.Logf("recovered by unmangle: %d keys", len(f.Metadata))
			checkVocab(t, f)
			parsed++
		})
	}
	require.Positive(t, parsed, "no vocabulary file parsed, even unmangled")
}

// syntheticVocab builds a vocabulary-only file of n tokens with scores,
// token types and merges, the shape of a large real tokenizer.
func syntheticVocab(tb testing.TB, n int) []byte {
	toks := make([]string, n)
	scores := make([]float32, n)
	types := make([]int32, n)
	merges := make([]string, n-256)
	for i := range toks {
		toks[i] = fmt.Sprintf("tok%d_%s", i, strings.Repeat("x", i%9))
		scores[i] = -float32(i)
		types[i] = int32(1 + i%3)
	}
	for i := range merges {
		merges[i] = toks[i] + " " + toks[i+1]
	}
	w := NewWriter()
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", "llama"},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.tokens", toks},
		{"tokenizer.ggml.scores", scores},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.merges", merges},
	} {
		require.NoError(tb, w.Set(kv.k, kv.v))
	}
	b, err := w.Bytes()
	require.NoError(tb, err)
	return b
}

func TestSyntheticVocab(t *testing.T) {
	f, err := Parse(syntheticVocab(t, 5000))
	require.NoError(t, err)
	checkVocab(t, f)
	toks, _ := f.Strings("tokenizer.ggml.tokens")
	require.Equal(t, "tok4999_xxxx", toks[4999]) // 4999 % 9 = 4
}

// BenchmarkParseVocab parses the largest vocabulary file that parses
// (unmangled if need be) and a synthetic 152k-token vocabulary.
func BenchmarkParseVocab(b *testing.B) {
	var big []byte
	var name string
	for p, d := range vocabFiles(b) {
		if mangled(d) {
			d = unmangle(d)
		}
		if _, err := Parse(d); err == nil && len(d) > len(big) {
			big, name = d, filepath.Base(p)
		}
	}
	inputs := map[string][]byte{"synthetic-152k": syntheticVocab(b, 152064)}
	if big != nil {
		inputs[name] = big
	}
	for n, d := range inputs {
		b.Run(n, func(b *testing.B) {
			b.SetBytes(int64(len(d)))
			for b.Loop() {
				if _, err := Parse(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
