package scheduler

import (
	"regexp"
	"strings"
	"testing"
)

// globOracle translates the pattern to a regular expression.
func globOracle(pattern, s string) bool {
	var sb strings.Builder
	sb.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '*':
			sb.WriteString("(?s:.*)")
		case '?':
			sb.WriteString("(?s:.)")
		default:
			sb.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	sb.WriteString("$")
	return regexp.MustCompile(sb.String()).MatchString(s)
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"/layers.3/*", "/layers.3/attn/MatMul", true},
		{"/layers.3/*", "/layers.30/MatMul", false},
		{"*", "", true},
		{"Conv*", "ConvTranspose", true},
		{"*MatMul", "FusedMatMul", true},
		{"*MatMul", "MatMulInteger", false},
		{"a*b*c", "a-b-b-c", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
	} {
		if got := glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func FuzzGlob(f *testing.F) {
	f.Add("/layers.3/*", "/layers.3/x")
	f.Add("a*b?c*", "aXbYcZ")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 32 || len(s) > 64 {
			return
		}
		// Byte-wise '?' and rune-wise '.' differ on multi-byte text.
		for _, r := range pattern + s {
			if r >= 0x80 {
				return
			}
		}
		if got, want := glob(pattern, s), globOracle(pattern, s); got != want {
			t.Fatalf("glob(%q, %q) = %v, oracle %v", pattern, s, got, want)
		}
	})
}
