package tokenizer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vectorsDir holds llama.cpp's tokenizer test vectors (see its README.md).
const vectorsDir = "../../shared/tokenizer-tests"

// vocabFiles lists the vocab-only GGUF files of the test vectors, skipping
// the test when they are absent.
func vocabFiles(t testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join(vectorsDir, "ggml-vocab-*.gguf"))
	if len(files) == 0 {
		t.Skipf("no tokenizer test vectors in %s (ggml-vocab-*.gguf): skipping", vectorsDir)
	}
	return files
}

// readVectors returns the cases of file.inp and the expected ids of file.out.
func readVectors(t *testing.T, file string) ([]string, [][]int32) {
	inp, err := os.ReadFile(file + ".inp")
	require.NoError(t, err)
	out, err := os.ReadFile(file + ".out")
	require.NoError(t, err)
	cases := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	require.Equal(t, "", cases[len(cases)-1], "%s.inp: want a separator after the last case", file)
	cases = cases[:len(cases)-1]
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(cases), "%s: .out lines vs .inp cases", file)
	want := make([][]int32, len(lines))
	for i, l := range lines {
		want[i] = []int32{}
		for _, f := range strings.Fields(l) {
			n, err := strconv.ParseInt(f, 10, 32)
			require.NoError(t, err, "%s.out line %d", file, i+1)
			want[i] = append(want[i], int32(n))
		}
	}
	return cases, want
}

// TestVectors encodes every case of every vocabulary's test vectors and
// compares with llama.cpp's ids; it also checks the decoding round trip.
func TestVectors(t *testing.T) {
	for _, file := range vocabFiles(t) {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "ggml-vocab-"), ".gguf")
		t.Run(name, func(t *testing.T) {
			v, damaged, err := loadTestVocab(file)
			require.NoError(t, err)
			if damaged {
				t.Logf("%s: damaged by a UTF-8 text conversion (see damaged_test.go); read tolerantly", name)
			}
			tok, err := New(v)
			require.NoError(t, err)
			cases, want := readVectors(t, file)
			pass := 0
			for i, text := range cases {
				got := tok.Encode(text, false, false)
				if len(got) == 0 {
					got = []int32{}
				}
				if equalIDs(got, want[i]) {
					pass++
				} else {
					t.Errorf("case %d %q:\n got %v\nwant %v", i, text, got, want[i])
				}
				if v.Model != "bert" { // WordPiece folds case and accents: no round trip
					back, err := tok.Decode(got, false)
					require.NoError(t, err)
					require.Equal(t, text, back, "case %d: decode(encode(s)) != s", i)
				}
			}
			t.Logf("%s (model %s, pre %q): %d/%d cases pass", name, v.Model, v.Pre, pass, len(cases))
		})
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkEncode encodes the test-vector inputs with each vocabulary.
func BenchmarkEncode(b *testing.B) {
	for _, file := range vocabFiles(b) {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "ggml-vocab-"), ".gguf")
		v, _, err := loadTestVocab(file)
		require.NoError(b, err)
		tok, err := New(v)
		require.NoError(b, err)
		inp, err := os.ReadFile(file + ".inp")
		require.NoError(b, err)
		text := strings.Repeat(strings.ReplaceAll(string(inp), "\n__ggml_vocab_test__\n", " "), 4)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tok.Encode(text, false, false)
			}
		})
	}
}
