package tokenizer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrUnsupported is wrapped by errors for tokenizer models or pre-tokenizers
// weft does not implement.
var ErrUnsupported = errors.New("unsupported")

type kind int

const (
	kindSPM kind = iota // SentencePiece-style BPE over characters ("llama")
	kindBPE             // byte-level BPE ("gpt2")
	kindWPM             // WordPiece ("bert")
)

// Tokenizer turns text into token ids and back. It is immutable after New
// and safe for concurrent use.
type Tokenizer struct {
	v    *Vocab
	kind kind
	ids  map[string]int32 // token text → id (the last id wins on duplicates, as in llama.cpp)

	special []int32 // control, user-defined and unknown tokens, longest text first

	addBOS, addEOS, addSpacePrefix bool

	byteTok [256]int32 // SPM: the <0xXX> token of each byte, -1 if none

	// BPE: the merge rank of each pair of tokens, by their ids (idPair),
	// and by text for the merges whose sides are not both tokens.
	ranks     map[uint64]int32
	textRanks map[pair]int32
	pre       []matcher // BPE: pre-tokenizer stages
	wholeTok  bool      // BPE: a pre-token that is itself a token skips merging (llama3)

	maxLen int // WPM: longest token text in bytes
}

type pair struct{ a, b string }

// idPair is the key of the pair of tokens l, r in Tokenizer.ranks.
func idPair(l, r int32) uint64 { return uint64(uint32(l))<<32 | uint64(uint32(r)) }

// New builds a tokenizer from v. Defaults for absent metadata follow
// llama.cpp: "llama" adds BOS and a space prefix, "bert" adds BOS (CLS) and
// EOS (SEP), "gpt2" adds nothing.
func New(v *Vocab) (*Tokenizer, error) {
	if err := v.check(); err != nil {
		return nil, err
	}
	cp := *v // New fills in defaults (BOS from CLS ...): keep the caller's Vocab as it is
	v = &cp
	t := &Tokenizer{v: v, ids: make(map[string]int32, len(v.Tokens))}
	for i, s := range v.Tokens {
		t.ids[s] = int32(i)
	}
	switch v.Model {
	case "llama":
		t.kind = kindSPM
		t.addBOS, t.addSpacePrefix = true, true
		for b := range t.byteTok {
			t.byteTok[b] = -1
			if id, ok := t.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
				t.byteTok[b] = id
			} else if id, ok := t.ids[string([]byte{byte(b)})]; ok {
				t.byteTok[b] = id
			}
		}
	case "gpt2":
		t.kind = kindBPE
		pre, wholeTok, err := preTokenizer(v.Pre)
		if err != nil {
			return nil, err
		}
		t.pre, t.wholeTok = pre, wholeTok
		t.ranks = make(map[uint64]int32, len(v.Merges))
		for i, m := range v.Merges {
			// Split at the first space after the first byte, as llama.cpp does.
			sp := -1
			if len(m) > 1 {
				sp = strings.IndexByte(m[1:], ' ')
			}
			if sp < 0 {
				return nil, fmt.Errorf("tokenizer: merge %d %q has no space", i, m)
			}
			l, r := m[:sp+1], m[sp+2:]
			li, lok := t.ids[l]
			ri, rok := t.ids[r]
			if !lok || !rok {
				// A side outside the vocabulary (no well-formed vocabulary
				// has one): ranked by text. Cloned, so that the merge
				// strings are not kept.
				if t.textRanks == nil {
					t.textRanks = map[pair]int32{}
				}
				p := pair{strings.Clone(l), strings.Clone(r)}
				if _, dup := t.textRanks[p]; !dup {
					t.textRanks[p] = int32(i)
				}
				continue
			}
			k := idPair(li, ri)
			if _, dup := t.ranks[k]; !dup {
				t.ranks[k] = int32(i)
			}
		}
		// The ranks hold what the merges said: the tokenizer need not keep
		// their text (151k strings for Qwen2's vocabulary).
		v.Merges = nil
	case "bert":
		t.kind = kindWPM
		t.addBOS, t.addEOS = true, true
		if v.BOS < 0 && v.CLS >= 0 {
			v.BOS = v.CLS
		}
		if v.EOS < 0 && v.SEP >= 0 {
			v.EOS = v.SEP
		}
		for _, s := range v.Tokens {
			t.maxLen = max(t.maxLen, len(s))
		}
	default:
		return nil, fmt.Errorf("tokenizer: model %q: %w (weft knows llama, gpt2 and bert)", v.Model, ErrUnsupported)
	}
	if v.AddBOS != nil {
		t.addBOS = *v.AddBOS
	}
	if v.AddEOS != nil {
		t.addEOS = *v.AddEOS
	}
	if v.AddSpacePrefix != nil {
		t.addSpacePrefix = *v.AddSpacePrefix
	}
	if t.addBOS && v.BOS < 0 {
		return nil, errors.New("tokenizer: add_bos_token set but the vocabulary has no BOS token")
	}
	if t.addEOS && v.EOS < 0 {
		return nil, errors.New("tokenizer: add_eos_token set but the vocabulary has no EOS token")
	}
	for i, s := range v.Tokens {
		switch v.tokenType(int32(i)) {
		case TypeControl, TypeUserDefined, TypeUnknown:
			if s != "" {
				t.special = append(t.special, int32(i))
			}
		}
	}
	sort.SliceStable(t.special, func(i, j int) bool {
		return len(v.Tokens[t.special[i]]) > len(v.Tokens[t.special[j]])
	})
	return t, nil
}

// Vocab returns the vocabulary t was built from.
func (t *Tokenizer) Vocab() *Vocab { return t.v }

// Encode tokenizes text. With addSpecial, BOS and EOS are added as the
// vocabulary's add_bos/add_eos say. User-defined tokens are always matched
// in the text; control tokens (like "<|im_start|>") only with parseSpecial.
// Encode never fails: text no token covers becomes byte tokens or UNK.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	var out []int32
	if addSpecial && t.addBOS {
		out = append(out, t.v.BOS)
	}
	prevSpecial := true // SPM: a text fragment at the start or after a special token gets the space prefix
	for _, f := range t.partition(text, parseSpecial) {
		if f.tok >= 0 {
			out = append(out, f.tok)
			prevSpecial = true
			continue
		}
		switch t.kind {
		case kindSPM:
			s := f.text
			if t.addSpacePrefix && prevSpecial {
				s = " " + s
			}
			out = t.encodeSPM(strings.ReplaceAll(s, " ", spaceMarker), out)
		case kindBPE:
			out = t.encodeBPE(f.text, out)
		case kindWPM:
			out = t.encodeWPM(f.text, out)
		}
		prevSpecial = false
	}
	if addSpecial && t.addEOS {
		out = append(out, t.v.EOS)
	}
	return out
}

// fragment is a piece of the input: raw text (tok < 0) or a special token.
type fragment struct {
	text string
	tok  int32
}

// partition splits text at occurrences of special tokens, longest first.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil
	}
	frags := []fragment{{text: text, tok: -1}}
	for _, id := range t.special {
		if !parseSpecial && t.v.tokenType(id) != TypeUserDefined {
			continue
		}
		sp := t.v.Tokens[id]
		var next []fragment
		for _, f := range frags {
			if f.tok >= 0 || !strings.Contains(f.text, sp) {
				next = append(next, f)
				continue
			}
			s := f.text
			for {
				i := strings.Index(s, sp)
				if i < 0 {
					break
				}
				if i > 0 {
					next = append(next, fragment{text: s[:i], tok: -1})
				}
				next = append(next, fragment{tok: id})
				s = s[i+len(sp):]
			}
			if s != "" {
				next = append(next, fragment{text: s, tok: -1})
			}
		}
		frags = next
	}
	return frags
}

// Decode turns ids back into text. Control tokens (BOS, EOS, ...) are
// dropped unless special is set. For SentencePiece vocabularies with a space
// prefix the leading space the encoder added is removed, so that
// Decode(Encode(s)) == s.
func (t *Tokenizer) Decode(ids []int32, special bool) (string, error) {
	var b strings.Builder
	stripSpace := t.kind == kindSPM && t.addSpacePrefix || t.kind == kindWPM
	for i, id := range ids {
		if id < 0 || int(id) >= len(t.v.Tokens) {
			return "", fmt.Errorf("tokenizer: token %d (position %d) out of range [0, %d)", id, i, len(t.v.Tokens))
		}
		piece := t.piece(id, special)
		if stripSpace && piece != "" {
			piece = strings.TrimPrefix(piece, " ")
			stripSpace = false
		}
		b.WriteString(piece)
	}
	return b.String(), nil
}

// piece is the text of one token.
func (t *Tokenizer) piece(id int32, special bool) string {
	text := t.v.Tokens[id]
	switch t.v.tokenType(id) {
	case TypeControl, TypeUnknown:
		if !special {
			return ""
		}
		return text
	case TypeUserDefined:
		return text
	case TypeByte:
		if b, ok := parseByteToken(text); ok {
			return string([]byte{b})
		}
	}
	switch t.kind {
	case kindSPM:
		return strings.ReplaceAll(text, spaceMarker, " ")
	case kindBPE:
		return unmapBytes(text)
	default: // WordPiece: a word-initial token carries the ▁ marker, a continuation none
		if s, ok := strings.CutPrefix(text, spaceMarker); ok {
			return " " + s
		}
		return text
	}
}

// parseByteToken parses "<0xXX>".
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	var b byte
	for _, c := range s[3:5] {
		b <<= 4
		switch {
		case c >= '0' && c <= '9':
			b |= byte(c - '0')
		case c >= 'A' && c <= 'F':
			b |= byte(c - 'A' + 10)
		case c >= 'a' && c <= 'f':
			b |= byte(c - 'a' + 10)
		default:
			return 0, false
		}
	}
	return b, true
}
