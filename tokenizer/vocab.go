package tokenizer

import (
	"errors"
	"fmt"
	"math"
)

// Token types, as stored in tokenizer.ggml.token_type.
const (
	TypeUndefined   int32 = 0
	TypeNormal      int32 = 1
	TypeUnknown     int32 = 2
	TypeControl     int32 = 3
	TypeUserDefined int32 = 4
	TypeUnused      int32 = 5
	TypeByte        int32 = 6
)

// Vocab is a tokenizer description as GGUF metadata carries it: the
// tokenizer.ggml.* and tokenizer.chat_template keys. It is plain data so
// that any GGUF reader (or a test) can build one.
type Vocab struct {
	// Model is tokenizer.ggml.model: "llama" (SentencePiece-style BPE),
	// "gpt2" (byte-level BPE) or "bert" (WordPiece).
	Model string
	// Pre is tokenizer.ggml.pre, the pre-tokenizer of a byte-level BPE
	// vocabulary ("gpt-2", "llama-bpe", "qwen2", "deepseek-coder", ...).
	Pre    string
	Tokens []string  // tokenizer.ggml.tokens: token id → text
	Scores []float32 // tokenizer.ggml.scores (SentencePiece merge priority); may be nil
	Types  []int32   // tokenizer.ggml.token_type (Type* constants); nil: all normal
	Merges []string  // tokenizer.ggml.merges: "left right", highest priority first

	// Special token ids; -1 when absent.
	BOS, EOS, UNK, PAD, SEP, CLS int32

	// AddBOS, AddEOS (tokenizer.ggml.add_bos_token / add_eos_token) and
	// AddSpacePrefix (tokenizer.ggml.add_space_prefix); nil means the
	// model's default (see New).
	AddBOS, AddEOS, AddSpacePrefix *bool

	// ChatTemplate is tokenizer.chat_template (a Jinja template; weft
	// recognises the common families, see DetectTemplate).
	ChatTemplate string
}

// Bool returns a pointer to b, for the optional Vocab fields.
func Bool(b bool) *bool { return &b }

// vocabFromMeta builds a Vocab from decoded GGUF metadata.
func vocabFromMeta(meta map[string]any) (*Vocab, error) {
	v := &Vocab{BOS: -1, EOS: -1, UNK: -1, PAD: -1, SEP: -1, CLS: -1}
	var err error
	str := func(key string, dst *string) {
		x, ok := meta[key]
		if !ok || err != nil {
			return
		}
		s, isStr := x.(string)
		if !isStr {
			err = fmt.Errorf("%w: metadata %q is %T, want string", ErrCorrupt, key, x)
			return
		}
		*dst = s
	}
	id := func(key string, dst *int32) {
		x, ok := meta[key]
		if !ok || err != nil {
			return
		}
		switch n := x.(type) {
		case uint64:
			if n > math.MaxInt32 {
				err = fmt.Errorf("%w: metadata %q = %d out of range", ErrCorrupt, key, n)
				return
			}
			*dst = int32(n)
		case int64:
			if n < -1 || n > math.MaxInt32 {
				err = fmt.Errorf("%w: metadata %q = %d out of range", ErrCorrupt, key, n)
				return
			}
			*dst = int32(n)
		default:
			err = fmt.Errorf("%w: metadata %q is %T, want an integer", ErrCorrupt, key, x)
		}
	}
	flag := func(key string, dst **bool) {
		x, ok := meta[key]
		if !ok || err != nil {
			return
		}
		b, isBool := x.(bool)
		if !isBool {
			err = fmt.Errorf("%w: metadata %q is %T, want bool", ErrCorrupt, key, x)
			return
		}
		*dst = Bool(b)
	}
	strs := func(key string, dst *[]string) {
		x, ok := meta[key]
		if !ok || err != nil {
			return
		}
		s, isStrs := x.([]string)
		if !isStrs {
			err = fmt.Errorf("%w: metadata %q is %T, want an array of strings", ErrCorrupt, key, x)
			return
		}
		*dst = s
	}
	str("tokenizer.ggml.model", &v.Model)
	str("tokenizer.ggml.pre", &v.Pre)
	str("tokenizer.chat_template", &v.ChatTemplate)
	strs("tokenizer.ggml.tokens", &v.Tokens)
	strs("tokenizer.ggml.merges", &v.Merges)
	id("tokenizer.ggml.bos_token_id", &v.BOS)
	id("tokenizer.ggml.eos_token_id", &v.EOS)
	id("tokenizer.ggml.unknown_token_id", &v.UNK)
	id("tokenizer.ggml.padding_token_id", &v.PAD)
	id("tokenizer.ggml.seperator_token_id", &v.SEP) // sic: the key GGUF writers use
	id("tokenizer.ggml.separator_token_id", &v.SEP)
	id("tokenizer.ggml.cls_token_id", &v.CLS)
	flag("tokenizer.ggml.add_bos_token", &v.AddBOS)
	flag("tokenizer.ggml.add_eos_token", &v.AddEOS)
	flag("tokenizer.ggml.add_space_prefix", &v.AddSpacePrefix)
	if err != nil {
		return nil, err
	}
	if x, ok := meta["tokenizer.ggml.scores"]; ok {
		arr, isArr := x.([]any)
		if !isArr {
			return nil, fmt.Errorf("%w: metadata \"tokenizer.ggml.scores\" is %T, want an array of floats", ErrCorrupt, x)
		}
		v.Scores = make([]float32, len(arr))
		for i, e := range arr {
			f, isF := e.(float64)
			if !isF {
				return nil, fmt.Errorf("%w: tokenizer.ggml.scores[%d] is %T, want float", ErrCorrupt, i, e)
			}
			v.Scores[i] = float32(f)
		}
	}
	if x, ok := meta["tokenizer.ggml.token_type"]; ok {
		arr, isArr := x.([]any)
		if !isArr {
			return nil, fmt.Errorf("%w: metadata \"tokenizer.ggml.token_type\" is %T, want an array of integers", ErrCorrupt, x)
		}
		v.Types = make([]int32, len(arr))
		for i, e := range arr {
			switch n := e.(type) {
			case int64:
				v.Types[i] = int32(n)
			case uint64:
				v.Types[i] = int32(min(n, math.MaxInt32))
			default:
				return nil, fmt.Errorf("%w: tokenizer.ggml.token_type[%d] is %T, want an integer", ErrCorrupt, i, e)
			}
		}
	}
	if v.Model == "" {
		return nil, errors.New("no tokenizer.ggml.model metadata: the file carries no tokenizer")
	}
	return v, nil
}

// check validates the lengths and ids of v.
func (v *Vocab) check() error {
	if len(v.Tokens) == 0 {
		return errors.New("tokenizer: vocabulary has no tokens")
	}
	if v.Scores != nil && len(v.Scores) != len(v.Tokens) {
		return fmt.Errorf("tokenizer: %d scores for %d tokens", len(v.Scores), len(v.Tokens))
	}
	if v.Types != nil && len(v.Types) != len(v.Tokens) {
		return fmt.Errorf("tokenizer: %d token types for %d tokens", len(v.Types), len(v.Tokens))
	}
	for _, s := range []struct {
		name string
		id   int32
	}{{"bos", v.BOS}, {"eos", v.EOS}, {"unknown", v.UNK}, {"padding", v.PAD}, {"separator", v.SEP}, {"cls", v.CLS}} {
		if s.id < -1 || int(s.id) >= len(v.Tokens) {
			return fmt.Errorf("tokenizer: %s token id %d out of range [0, %d)", s.name, s.id, len(v.Tokens))
		}
	}
	return nil
}

// tokenType is the type of token id (normal when the vocabulary has no types).
func (v *Vocab) tokenType(id int32) int32 {
	if v.Types == nil {
		return TypeNormal
	}
	return v.Types[id]
}
