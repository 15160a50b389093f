package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const storiesPath = "../../../shared/models/stories260K.bin"

func needStories(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(storiesPath); os.IsNotExist(err) {
		t.Skipf("%s is absent (the shared test models are not checked out)", storiesPath)
	}
}

func TestGenerateGreedy(t *testing.T) {
	needStories(t)
	code, out, errOut := cli(t, "generate", storiesPath, "-n", "12")
	require.Equal(t, 0, code, errOut)
	ids := strings.Fields(out)
	require.Len(t, ids, 12)
	// The same run at -O0, and with a prompt that is the first run's start:
	// greedy decoding continues it identically (the prompt goes through a
	// prefill graph).
	code, out0, errOut := cli(t, "generate", storiesPath, "-n", "12", "-O", "0")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, out, out0)
	code, cont, errOut := cli(t, "generate", storiesPath, "-n", "8", "--ids", "-p", "1,"+strings.Join(ids[:4], ","))
	require.Equal(t, 0, code, errOut)
	require.Equal(t, strings.Join(ids[4:12], " "), strings.TrimSpace(cont))
	require.Contains(t, errOut, "prompt 5 tokens, generated 8 (stop: max tokens)")
	require.Contains(t, errOut, "decode")
	require.Contains(t, errOut, "tok/s")
}

func TestGenerateSampling(t *testing.T) {
	needStories(t)
	args := []string{"generate", storiesPath, "-n", "20", "--temp", "0.9", "--top-k", "40", "--top-p", "0.95", "--stop", ""}
	code, a, errOut := cli(t, append(args, "--seed", "5")...)
	require.Equal(t, 0, code, errOut)
	_, b, _ := cli(t, append(args, "--seed", "5")...)
	_, c, _ := cli(t, append(args, "--seed", "6")...)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)
	require.Len(t, strings.Fields(a), 20)
	// A small context stops generation with a reason.
	code, out, errOut := cli(t, "generate", storiesPath, "-n", "100", "--ctx", "6", "--stop", "")
	require.Equal(t, 0, code, errOut)
	require.Len(t, strings.Fields(out), 6)
	require.Contains(t, errOut, "stop: context full")
}

func TestGenerateErrors(t *testing.T) {
	dir := t.TempDir()
	trunc := filepath.Join(dir, "bad.bin")
	require.NoError(t, os.WriteFile(trunc, make([]byte, 40), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"generate", filepath.Join(dir, "m.onnx")}, "unsupported"},
		{[]string{"generate", filepath.Join(dir, "m.gguf")}, "m.gguf"},
		{[]string{"generate", filepath.Join(dir, "m.gguf"), "--overflow", "shift"}, "want stop or slide"},
		{[]string{"generate", filepath.Join(dir, "missing.bin")}, "missing.bin"},
		{[]string{"generate", trunc}, "bad.bin"},
		{[]string{"generate", trunc, "-p", "1,x"}, `"x" is not a token id`},
		{[]string{"generate", trunc, "-p", "1 -2"}, `"-2" is not a token id`},
		{[]string{"generate", trunc, "-p", ""}, "bad.bin"},
		{[]string{"generate", trunc, "-n", "0"}, "-n 0"},
		{[]string{"generate", trunc, "--top-p", "3"}, "top-p"},
		{[]string{"generate"}, "accepts 1 arg"},
	} {
		code, _, errOut := cli(t, tc.args...)
		require.Equal(t, 1, code, tc.args)
		require.Contains(t, errOut, tc.want, tc.args)
	}
	needStories(t)
	code, _, errOut := cli(t, "generate", storiesPath, "--ctx", "1000")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "exceeds the model's context of 512")
	code, _, errOut = cli(t, "generate", storiesPath, "-p", "1,600")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "outside the vocabulary")
}

// TestParseIDs: a prompt of token ids takes commas, white space or both
// (so `weft tokenize`'s output is a valid --ids prompt), and refuses
// anything that is not a non-negative int32.
func TestParseIDs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int32
		err  string
	}{
		{"", nil, ""},
		{" \n", nil, ""},
		{"1,2,3", []int32{1, 2, 3}, ""},
		{"1 2 3", []int32{1, 2, 3}, ""},
		{"1, 2,,3\n", []int32{1, 2, 3}, ""},
		{"\t0\t2147483647 ", []int32{0, 2147483647}, ""},
		{"1 x", nil, `"x" is not a token id`},
		{"-1", nil, `"-1" is not a token id`},
		{"2147483648", nil, `"2147483648" is not a token id`},
		{"1;2", nil, `"1;2" is not a token id`},
	} {
		got, err := parseIDs(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}
