package tokenizer

import (
	"strings"
)

// Byte-level BPE works on text where every byte is replaced by a printable
// character (GPT-2's bytes_to_unicode): the printable Latin-1 bytes
// '!'..'~', '¡'..'¬', '®'..'ÿ' stand for themselves, the other 68 bytes map
// in order to U+0100, U+0101, ...
var (
	byteRune [256]rune
	runeByte = map[rune]byte{}
)

func init() {
	n := rune(0)
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			byteRune[b] = rune(b)
		} else {
			byteRune[b] = 256 + n
			n++
		}
		runeByte[byteRune[b]] = byte(b)
	}
}

// mapBytes returns s with each byte replaced by its printable character.
func mapBytes(s string) string {
	var b strings.Builder
	b.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteRune[s[i]])
	}
	return b.String()
}

// unmapBytes inverts mapBytes; a character outside the map is kept as is.
func unmapBytes(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if c, ok := runeByte[r]; ok {
			b.WriteByte(c)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
