package tokenizer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// ErrCorrupt is wrapped by every error LoadGGUFVocab returns for a file that
// is not a well-formed GGUF file.
var ErrCorrupt = errors.New("corrupt gguf")

// GGUF metadata value type tags (GGUF v2/v3).
const (
	ggufU8 uint32 = iota
	ggufI8
	ggufU16
	ggufI16
	ggufU32
	ggufI32
	ggufF32
	ggufBool
	ggufString
	ggufArray
	ggufU64
	ggufI64
	ggufF64
)

// ggufScalarSize is the encoded size of each fixed-size type (0: variable).
var ggufScalarSize = [...]int64{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// maxGGUFString bounds one metadata string; token texts and templates are far smaller.
const maxGGUFString = 64 << 20

// LoadGGUFVocab reads the tokenizer metadata (the tokenizer.* keys) of the
// GGUF file at path. Only the header is read, so a vocab-only file and a
// multi-gigabyte model are equally cheap; tensor data is never touched.
func LoadGGUFVocab(path string) (*Vocab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	v, err := ReadGGUFVocab(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return v, nil
}

// ReadGGUFVocab reads the tokenizer metadata from a GGUF stream of the given
// size (the size bounds every length field, so corrupt counts fail fast
// instead of allocating). See LoadGGUFVocab.
func ReadGGUFVocab(r io.Reader, size int64) (*Vocab, error) {
	g := &ggufReader{r: bufio.NewReaderSize(r, 1<<16), left: size}
	magic, err := g.bytes(4)
	if err != nil {
		return nil, err
	}
	if string(magic) != "GGUF" {
		return nil, fmt.Errorf("%w: bad magic %q, want \"GGUF\"", ErrCorrupt, magic)
	}
	version, err := g.u32()
	if err != nil {
		return nil, err
	}
	if version != 2 && version != 3 {
		return nil, fmt.Errorf("gguf version %d: %w", version, errUnsupportedVersion)
	}
	if _, err := g.u64(); err != nil { // tensor count: not needed here
		return nil, err
	}
	nkv, err := g.u64()
	if err != nil {
		return nil, err
	}
	// Each KV takes at least 8 (key length) + 4 (type) + 1 bytes.
	if nkv > uint64(g.left)/13 {
		return nil, fmt.Errorf("%w: %d metadata entries in %d bytes", ErrCorrupt, nkv, size)
	}
	meta := map[string]any{}
	for i := uint64(0); i < nkv; i++ {
		key, err := g.str()
		if err != nil {
			return nil, fmt.Errorf("metadata entry %d: %w", i, err)
		}
		typ, err := g.u32()
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", clip(key), err)
		}
		keep := strings.HasPrefix(key, "tokenizer.")
		val, err := g.value(typ, keep)
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", clip(key), err)
		}
		if keep {
			meta[key] = val
		}
	}
	return vocabFromMeta(meta)
}

// clip shortens a (possibly garbage) key for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

var errUnsupportedVersion = fmt.Errorf("%w (weft reads GGUF v2 and v3)", ErrUnsupported)

type ggufReader struct {
	r    *bufio.Reader
	left int64 // bytes left in the stream
	buf  [8]byte
}

func (g *ggufReader) bytes(n int64) ([]byte, error) {
	if n < 0 || n > g.left {
		return nil, fmt.Errorf("%w: %d bytes wanted, %d left in file", ErrCorrupt, n, g.left)
	}
	var b []byte
	if n <= 8 {
		b = g.buf[:n]
	} else {
		b = make([]byte, n)
	}
	if _, err := io.ReadFull(g.r, b); err != nil {
		return nil, fmt.Errorf("%w: truncated: %v", ErrCorrupt, err)
	}
	g.left -= n
	return b, nil
}

func (g *ggufReader) skip(n int64) error {
	if n < 0 || n > g.left {
		return fmt.Errorf("%w: %d bytes wanted, %d left in file", ErrCorrupt, n, g.left)
	}
	if _, err := g.r.Discard(int(n)); err != nil {
		return fmt.Errorf("%w: truncated: %v", ErrCorrupt, err)
	}
	g.left -= n
	return nil
}

func (g *ggufReader) u32() (uint32, error) {
	b, err := g.bytes(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (g *ggufReader) u64() (uint64, error) {
	b, err := g.bytes(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (g *ggufReader) str() (string, error) {
	n, err := g.u64()
	if err != nil {
		return "", err
	}
	if n > maxGGUFString || int64(n) > g.left {
		return "", fmt.Errorf("%w: string of %d bytes (%d left in file)", ErrCorrupt, n, g.left)
	}
	b, err := g.bytes(int64(n))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// value reads one value of type typ; when keep is false it is skipped and nil returned.
func (g *ggufReader) value(typ uint32, keep bool) (any, error) {
	switch {
	case typ == ggufString:
		s, err := g.str()
		return s, err
	case typ == ggufArray:
		return g.array(keep)
	case typ < uint32(len(ggufScalarSize)):
		b, err := g.bytes(ggufScalarSize[typ])
		if err != nil || !keep {
			return nil, err
		}
		return scalar(typ, b), nil
	}
	return nil, fmt.Errorf("%w: unknown value type %d", ErrCorrupt, typ)
}

func (g *ggufReader) array(keep bool) (any, error) {
	et, err := g.u32()
	if err != nil {
		return nil, err
	}
	n, err := g.u64()
	if err != nil {
		return nil, err
	}
	if et == ggufArray {
		return nil, fmt.Errorf("nested arrays: %w", ErrUnsupported)
	}
	if et >= uint32(len(ggufScalarSize)) {
		return nil, fmt.Errorf("%w: unknown array element type %d", ErrCorrupt, et)
	}
	min := ggufScalarSize[et]
	if et == ggufString {
		min = 8
	}
	if n > uint64(g.left)/uint64(min) {
		return nil, fmt.Errorf("%w: array of %d elements in %d bytes", ErrCorrupt, n, g.left)
	}
	if !keep {
		if et != ggufString {
			return nil, g.skip(int64(n) * min)
		}
		for i := uint64(0); i < n; i++ {
			l, err := g.u64()
			if err != nil {
				return nil, err
			}
			if l > uint64(g.left) {
				return nil, fmt.Errorf("%w: string of %d bytes (%d left in file)", ErrCorrupt, l, g.left)
			}
			if err := g.skip(int64(l)); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	if et == ggufString {
		out := make([]string, n)
		for i := range out {
			if out[i], err = g.str(); err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
		}
		return out, nil
	}
	out := make([]any, n)
	for i := range out {
		b, err := g.bytes(min)
		if err != nil {
			return nil, err
		}
		out[i] = scalar(et, b)
	}
	return out, nil
}

// scalar decodes a fixed-size value: integers as int64 or uint64, floats as
// float64, bools as bool.
func scalar(typ uint32, b []byte) any {
	le := binary.LittleEndian
	switch typ {
	case ggufU8:
		return uint64(b[0])
	case ggufI8:
		return int64(int8(b[0]))
	case ggufU16:
		return uint64(le.Uint16(b))
	case ggufI16:
		return int64(int16(le.Uint16(b)))
	case ggufU32:
		return uint64(le.Uint32(b))
	case ggufI32:
		return int64(int32(le.Uint32(b)))
	case ggufF32:
		return float64(math.Float32frombits(le.Uint32(b)))
	case ggufBool:
		return b[0] != 0
	case ggufU64:
		return le.Uint64(b)
	case ggufI64:
		return int64(le.Uint64(b))
	case ggufF64:
		return math.Float64frombits(le.Uint64(b))
	}
	return nil
}
