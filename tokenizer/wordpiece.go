package tokenizer

//go:generate python3 gen/nfd.py nfd_table.go

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// encodeWPM appends the WordPiece tokens of text. GGUF BERT vocabularies
// store word-initial pieces with a ▁ prefix and continuations bare (the
// "##" of the original vocab.txt removed), so each word is matched as
// "▁word", greedily longest piece first; a word with any unmatched rest
// becomes UNK as a whole.
func (t *Tokenizer) encodeWPM(text string, out []int32) []int32 {
	for _, word := range wpmWords(text) {
		w := spaceMarker + word
		n0 := len(out)
		for i := 0; i < len(w); {
			j := min(len(w), i+t.maxLen)
			for ; j > i; j-- {
				if id, ok := t.ids[w[i:j]]; ok {
					out = append(out, id)
					break
				}
			}
			if j == i { // no piece fits here: the whole word is unknown
				out = out[:n0]
				break
			}
			i = j
		}
		if len(out) == n0 && t.v.UNK >= 0 {
			out = append(out, t.v.UNK)
		}
	}
	return out
}

// wpmWords is BERT's basic tokenizer: fold each character to the base of
// its canonical decomposition and lower-case it, drop controls, split on
// whitespace, and make each punctuation mark, ASCII symbol and CJK
// ideograph a word of its own.
func wpmWords(text string) []string {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		r = nfdBase(r)
		switch {
		case unicode.IsSpace(r):
			flush()
		case r == 0 || r == utf8.RuneError || unicode.Is(unicode.C, r):
		case unicode.IsPunct(r) || r < 0x7F && unicode.IsSymbol(r) || isCJKIdeograph(r):
			flush()
			words = append(words, string(unicode.ToLower(r)))
		default:
			cur.WriteRune(unicode.ToLower(r))
		}
	}
	flush()
	return words
}

type nfdRange struct{ first, last, base rune }

// nfdBase is the first code point of r's canonical decomposition (r itself
// when it has none): "Ä" → "A".
func nfdBase(r rune) rune {
	if r < 0xC0 {
		return r
	}
	k := sort.Search(len(nfdRanges), func(k int) bool { return nfdRanges[k].last >= r })
	if k < len(nfdRanges) && nfdRanges[k].first <= r {
		return nfdRanges[k].base
	}
	return r
}

// isCJKIdeograph is BERT's _is_chinese_char (the CJK Unified Ideographs
// blocks and their extensions and compatibility forms).
func isCJKIdeograph(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF || r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}
