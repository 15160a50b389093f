package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// chatCLI runs `weft chat` with stdin and returns the exit code, stdout
// and stderr.
func chatCLI(stdin string, args ...string) (int, string, string) {
	var o, e bytes.Buffer
	cmd := newRootCmd(&o, &e)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(append([]string{"chat"}, args...))
	if err := cmd.Execute(); err != nil {
		e.WriteString(err.Error())
		return 1, o.String(), e.String()
	}
	return 0, o.String(), e.String()
}

// TestChatSpeculative: greedy chat replies with a draft (the target's first
// layer, or a q8_0 copy of the target) are the replies without one, turn
// for turn, across turns continued from both caches and a /reset; each
// reply reports the acceptance on stderr.
func TestChatSpeculative(t *testing.T) {
	target := tinyGGUF(t, "f32")
	copyQ8 := tinyGGUF(t, "q8_0")
	const stdin = "hello there\nhow are you\ntell me more about it\n/reset\nhello again\nand then\n"
	base := []string{target, "--temp", "0", "-n", "12"}
	code, want, errOut := chatCLI(stdin, base...)
	require.Equal(t, 0, code, errOut)
	require.Len(t, strings.Split(strings.TrimSuffix(want, "\n"), "\n"), 5, "%q", want)
	for _, tc := range []struct {
		k     string
		draft []string
	}{
		{"3", []string{"--draft-layers", "1"}},
		{"4", []string{"--draft", copyQ8}},
		{"2", []string{"--draft", copyQ8, "--draft-p-min", "0.01"}},
	} {
		code, got, errOut := chatCLI(stdin, append(append(base, tc.draft...), "-k", tc.k)...)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, want, got, "draft %v", tc.draft)
		require.Contains(t, errOut, "weft: draft ")
		require.Equal(t, 5, strings.Count(errOut, "speculative k="+tc.k+": accepted "), errOut)
		require.Equal(t, 5, strings.Count(errOut, "tokens in the cache"), errOut)
		require.NotContains(t, errOut, "cannot hold the conversation")
		t.Logf("draft %v -k %s:\n%s", tc.draft, tc.k, errOut)
	}
	// The target as its own draft: with both caches holding the
	// conversation, every proposal of every turn is accepted.
	code, got, errOut := chatCLI(stdin, append(base, "--draft", target, "-k", "4")...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, want, got)
	acc := regexp.MustCompile(`accepted (\d+) of (\d+) draft tokens`).FindAllStringSubmatch(errOut, -1)
	require.Len(t, acc, 5, errOut)
	for i, m := range acc {
		require.Equal(t, m[2], m[1], "turn %d: %s", i, errOut)
		require.NotEqual(t, "0", m[2], "turn %d: %s", i, errOut)
	}
	// A draft of 64 tokens' context fills up in the second turn: it says
	// so once, the target goes on alone (the same replies), and after
	// /reset the draft proposes again.
	short := tinyGGUF(t, "q8_0", "--ctx", "64")
	code, got, errOut = chatCLI(stdin, append(base, "--draft", short)...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, want, got)
	require.Equal(t, 2, strings.Count(errOut, "the draft's context of 64 tokens cannot hold the conversation"), errOut)
	turns := strings.Split(errOut, "conversation reset")
	require.Len(t, turns, 2)
	require.Contains(t, turns[0], "accepted 0 of 0 draft tokens", "turn 3 runs the target alone")
	require.NotContains(t, strings.Split(turns[1], "\n")[1], "accepted 0 of 0", "the first turn after /reset proposes")
	// Sampling with a draft: a seed reproduces the replies.
	samp := []string{target, "--temp", "0.8", "--seed", "5", "-n", "12", "--draft-layers", "1"}
	code, a, errOut := chatCLI(stdin, samp...)
	require.Equal(t, 0, code, errOut)
	code, b, errOut := chatCLI(stdin, samp...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, a, b)
}

// TestChatSpeculativeErrors: chat shares generate's draft flag checks.
func TestChatSpeculativeErrors(t *testing.T) {
	tiny := tinyGGUF(t, "f32")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--draft-layers", "2"}, "has 2 layers"},
		{[]string{"--draft-layers", "1", "--draft", tiny}, "give one draft"},
		{[]string{"--draft-layers", "1", "-k", "0"}, "-k 0"},
		{[]string{"--draft-layers", "1", "--draft-p-min", "-1"}, "--draft-p-min -1"},
	} {
		code, _, errOut := chatCLI("hi\n", append([]string{tiny}, tc.args...)...)
		require.Equal(t, 1, code, "%v", tc.args)
		require.Contains(t, errOut, tc.want, "%v", tc.args)
	}
}
