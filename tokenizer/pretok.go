package tokenizer

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Byte-level BPE first splits text into pre-tokens with a model-specific
// list of regular expressions, applied one after the other: each splits
// every piece left by the previous one, and the text between its matches
// stays a piece too (std::regex_search semantics, as in llama.cpp). The
// expressions need lookahead and Unicode classes Go's regexp lacks, so each
// is a hand-written matcher: given a piece and a position it returns the
// length of the match the regex engine would find there (0 for none).
//
// Character classes follow the regexes' Unicode semantics: \p{L}, \p{N},
// \p{P} are the Unicode general categories, \s is Unicode White_Space.

// cat is the character class of one code point, as the regexes see it.
type cat uint8

const (
	catOther  cat = iota // anything else: symbols, marks, controls, malformed bytes
	catLetter            // \p{L}
	catNumber            // \p{N}
	catSpace             // \s (checked first: White_Space wins over a category)
	catPunct             // \p{P}
)

type char struct {
	r rune
	c cat
}

func classify(r rune) cat {
	switch {
	case unicode.IsSpace(r):
		return catSpace
	case unicode.IsLetter(r):
		return catLetter
	case unicode.IsNumber(r):
		return catNumber
	case unicode.IsPunct(r):
		return catPunct
	}
	return catOther
}

// matcher returns the length (in chars) of the match starting at p[i], 0 if none.
type matcher func(p []char, i int) int

// preTokenizer returns the matchers for a tokenizer.ggml.pre name and
// whether a pre-token that is a token by itself skips merging.
func preTokenizer(name string) ([]matcher, bool, error) {
	switch name {
	case "", "default":
		return []matcher{
			runOf(func(c char) bool { return c.c == catPunct || isASCIIIn(c.r, "$+<=>^~|") }),
			gpt2,
			runOf(func(c char) bool { return c.c == catNumber }),
			digits3,
		}, false, nil
	case "gpt-2", "gpt2", "phi-2", "mpt", "olmo", "jais", "roberta-bpe":
		return []matcher{gpt2}, false, nil
	case "llama3", "llama-v3", "llama-bpe", "falcon3":
		return []matcher{llama3(3)}, true, nil
	case "qwen2", "stablelm2", "megrez":
		return []matcher{llama3(1)}, false, nil
	case "starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b":
		return []matcher{one(func(c char) bool { return c.c == catNumber }), gpt2}, false, nil
	case "falcon":
		return []matcher{
			runOf(func(c char) bool { return c.c == catPunct || isASCIIIn(c.r, "$+<=>^~|`") }),
			gpt2,
			digits3,
		}, false, nil
	case "deepseek-coder":
		return []matcher{
			one(func(c char) bool { return c.r == '\r' || c.r == '\n' }),
			spaceThenRun(func(c char) bool { return c.c == catLetter }),
			spaceThenRun(func(c char) bool { return c.c == catPunct }),
			runOf(func(c char) bool { return isCJKRange(c.r) }),
			one(func(c char) bool { return c.c == catNumber }),
		}, false, nil
	}
	return nil, false, fmt.Errorf("tokenizer: pre-tokenizer %q: %w", name, ErrUnsupported)
}

// pretokenize splits text with the matchers; the pieces are substrings of
// text (so malformed UTF-8 survives byte for byte).
func pretokenize(text string, ms []matcher) []string {
	chars := make([]char, 0, len(text))
	offs := make([]int, 0, len(text)+1) // byte offset of each char, then len(text)
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		chars = append(chars, char{r, classify(r)})
		offs = append(offs, i)
		i += n
	}
	offs = append(offs, len(text))
	bounds := []int{0, len(chars)} // piece k is chars[bounds[k]:bounds[k+1]]
	for _, m := range ms {
		next := []int{0}
		for k := 0; k+1 < len(bounds); k++ {
			a, b := bounds[k], bounds[k+1]
			p := chars[a:b]
			gap := 0
			for i := 0; i < len(p); {
				n := m(p, i)
				if n == 0 {
					i++
					continue
				}
				if i > gap {
					next = append(next, a+i)
				}
				i += n
				next = append(next, a+i)
				gap = i
			}
			if gap < len(p) {
				next = append(next, b)
			}
		}
		bounds = next
	}
	words := make([]string, 0, len(bounds)-1)
	for k := 0; k+1 < len(bounds); k++ {
		words = append(words, text[offs[bounds[k]]:offs[bounds[k+1]]])
	}
	return words
}

// gpt2 matches GPT-2's
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// and always matches at least one char.
func gpt2(p []char, i int) int {
	if n := contraction(p, i, false); n > 0 {
		return n
	}
	if n := spaceThen(p, i); n > 0 {
		return n
	}
	return spaces(p, i, false)
}

// llama3 matches Llama 3's (maxDigits 3) and Qwen2's (maxDigits 1)
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,maxDigits}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func llama3(maxDigits int) matcher {
	return func(p []char, i int) int {
		if n := contraction(p, i, true); n > 0 {
			return n
		}
		c := p[i]
		if c.r != '\r' && c.r != '\n' && c.c != catNumber {
			if c.c == catLetter || i+1 < len(p) && p[i+1].c == catLetter {
				j := i + 1
				for j < len(p) && p[j].c == catLetter {
					j++
				}
				return j - i
			}
		}
		if c.c == catNumber {
			n := 0
			for i+n < len(p) && p[i+n].c == catNumber && n < maxDigits {
				n++
			}
			return n
		}
		start := i
		if c.r == ' ' {
			start++
		}
		if start < len(p) && isOtherChar(p[start]) {
			j := start
			for j < len(p) && isOtherChar(p[j]) {
				j++
			}
			for j < len(p) && (p[j].r == '\r' || p[j].r == '\n') {
				j++
			}
			return j - i
		}
		return spaces(p, i, true)
	}
}

// contraction matches 's|'t|'re|'ve|'m|'ll|'d (case-insensitively if fold).
func contraction(p []char, i int, fold bool) int {
	if p[i].r != '\'' || i+1 >= len(p) {
		return 0
	}
	lower := func(r rune) rune {
		if fold {
			return unicode.ToLower(r)
		}
		return r
	}
	switch lower(p[i+1].r) {
	case 's', 't', 'm', 'd':
		return 2
	}
	if i+2 < len(p) {
		switch string([]rune{lower(p[i+1].r), lower(p[i+2].r)}) {
		case "re", "ve", "ll":
			return 3
		}
	}
	return 0
}

// spaceThen matches ` ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+`.
func spaceThen(p []char, i int) int {
	start := i
	if p[i].r == ' ' {
		start++
	}
	if start >= len(p) {
		return 0
	}
	var in func(char) bool
	switch c := p[start]; {
	case c.c == catLetter:
		in = func(c char) bool { return c.c == catLetter }
	case c.c == catNumber:
		in = func(c char) bool { return c.c == catNumber }
	case isOtherChar(c):
		in = isOtherChar
	default:
		return 0
	}
	j := start
	for j < len(p) && in(p[j]) {
		j++
	}
	return j - i
}

// spaces matches (with newlines: `\s*[\r\n]+|`)\s+(?!\S)|\s+, and one char
// when nothing matches (no regex alternative is left out).
func spaces(p []char, i int, newlines bool) int {
	n, lastNL := 0, -1
	for i+n < len(p) && p[i+n].c == catSpace {
		if r := p[i+n].r; r == '\r' || r == '\n' {
			lastNL = n + 1
		}
		n++
	}
	switch {
	case newlines && lastNL > 0:
		return lastNL
	case n > 1 && i+n < len(p): // leave the last space to the word after it
		return n - 1
	case n > 0:
		return n
	}
	return 1
}

// isOtherChar is [^\s\p{L}\p{N}].
func isOtherChar(c char) bool { return c.c != catSpace && c.c != catLetter && c.c != catNumber }

// runOf matches [class]+.
func runOf(in func(char) bool) matcher {
	return func(p []char, i int) int {
		j := i
		for j < len(p) && in(p[j]) {
			j++
		}
		return j - i
	}
}

// one matches a single [class].
func one(in func(char) bool) matcher {
	return func(p []char, i int) int {
		if in(p[i]) {
			return 1
		}
		return 0
	}
}

// spaceThenRun matches \s?[class]+.
func spaceThenRun(in func(char) bool) matcher {
	return func(p []char, i int) int {
		j := i
		if p[j].c == catSpace {
			j++
		}
		k := j
		for k < len(p) && in(p[k]) {
			k++
		}
		if k == j {
			if j == i {
				return 0
			}
			// backtrack the optional space: [class]+ must start at i
			return runOf(in)(p, i)
		}
		return k - i
	}
}

// digits3 matches [0-9][0-9][0-9].
func digits3(p []char, i int) int {
	if i+3 > len(p) {
		return 0
	}
	for _, c := range p[i : i+3] {
		if c.r < '0' || c.r > '9' {
			return 0
		}
	}
	return 3
}

// isCJKRange is DeepSeek's [一-龥ࠀ-一가-퟿].
func isCJKRange(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FA5 || r >= 0x0800 && r <= 0x4E00 || r >= 0xAC00 && r <= 0xD7FF
}

func isASCIIIn(r rune, set string) bool {
	for i := 0; i < len(set); i++ {
		if rune(set[i]) == r {
			return true
		}
	}
	return false
}
