package gguf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"

	"github.com/weftrt/weft/ir"
)

// maxNameLen is the longest tensor name ggml accepts (GGML_MAX_NAME is 64
// including the terminating NUL).
const maxNameLen = 63

// Writer builds a GGUF version 3 file. Metadata and tensors are written in
// the order they were added, so the same calls give the same bytes.
// Tensor data is referenced, not copied, until the file is written.
type Writer struct {
	kvs     []KV
	keys    map[string]int
	tensors []wtensor
	names   map[string]bool
}

type wtensor struct {
	name string
	typ  GGMLType
	t    *ir.Tensor
}

// NewWriter returns an empty Writer (the zero Writer is ready to use too).
func NewWriter() *Writer {
	return &Writer{keys: map[string]int{}, names: map[string]bool{}}
}

// Set adds a metadata entry, or replaces the value of an existing key in
// place. v is a Value, an Array or a Go value ValueOf accepts. Setting
// general.alignment (a power-of-two uint32) changes the data alignment.
func (w *Writer) Set(key string, v any) error {
	val, err := ValueOf(v)
	if err != nil {
		return fmt.Errorf("gguf: metadata %q: %w", key, err)
	}
	if key == KeyAlignment {
		a, ok := val.V.(uint32)
		if !ok || a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: %s must be a power-of-two uint32, got %v %v", KeyAlignment, val.Type, val)
		}
	}
	if i, ok := w.keys[key]; ok {
		w.kvs[i].Value = val
		return nil
	}
	if w.keys == nil {
		w.keys = map[string]int{}
	}
	w.keys[key] = len(w.kvs)
	w.kvs = append(w.kvs, KV{key, val})
	return nil
}

// AddTensor adds a tensor. Its dtype must have a ggml type (f32, f16, bf16,
// f64, i8, i16, i32, i64, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k),
// its rank at most MaxDims; block-quantized data is written as its blocks.
// A scalar is written as one dimension of size 1.
func (w *Writer) AddTensor(name string, t *ir.Tensor) error {
	switch {
	case name == "":
		return fmt.Errorf("gguf: a tensor needs a name")
	case len(name) > maxNameLen:
		return fmt.Errorf("gguf: tensor name %q is longer than %d bytes", name, maxNameLen)
	case w.names[name]:
		return fmt.Errorf("gguf: tensor %q added twice", name)
	case len(t.Shape) > MaxDims:
		return fmt.Errorf("gguf: tensor %q: %d dimensions (GGUF holds at most %d)", name, len(t.Shape), MaxDims)
	}
	typ, ok := GGMLTypeOf(t.DType)
	if !ok {
		return fmt.Errorf("gguf: tensor %q: %w dtype %v (GGUF has no such type)", name, ir.ErrUnsupported, t.DType)
	}
	if err := t.Check(); err != nil {
		return fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	if w.names == nil {
		w.names = map[string]bool{}
	}
	w.names[name] = true
	w.tensors = append(w.tensors, wtensor{name, typ, t})
	return nil
}

func (w *Writer) alignment() int64 {
	if i, ok := w.keys[KeyAlignment]; ok {
		return int64(w.kvs[i].Value.V.(uint32))
	}
	return DefaultAlignment
}

// WriteTo writes the file to out.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	cw := &countWriter{w: bufio.NewWriterSize(out, 1<<16)}
	e := &encoder{w: cw}
	e.raw([]byte(Magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type))
		e.value(kv.Value)
	}
	align := w.alignment()
	var off int64
	offsets := make([]int64, len(w.tensors))
	for i, wt := range w.tensors {
		e.str(wt.name)
		shape := wt.t.Shape
		if len(shape) == 0 {
			shape = []int64{1}
		}
		e.u32(uint32(len(shape)))
		for d := len(shape) - 1; d >= 0; d-- {
			e.u64(uint64(shape[d]))
		}
		e.u32(uint32(wt.typ))
		e.u64(uint64(off))
		offsets[i] = off
		off = alignUp(off+int64(len(wt.t.Data)), align)
	}
	e.pad(align)
	for _, wt := range w.tensors {
		e.raw(wt.t.Data)
		e.pad(align)
	}
	if e.err == nil {
		e.err = cw.w.(*bufio.Writer).Flush()
	}
	if e.err != nil {
		return cw.n, fmt.Errorf("gguf: writing: %w", e.err)
	}
	return cw.n, nil
}

// Bytes returns the file as bytes.
func (w *Writer) Bytes() ([]byte, error) {
	var b bytes.Buffer
	_, err := w.WriteTo(&b)
	return b.Bytes(), err
}

// WriteFile writes the file to path.
func (w *Writer) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("%w (file %s)", err, path)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// encoder writes little-endian values, keeping the first error.
type encoder struct {
	w   *countWriter
	err error
	buf [8]byte
}

func (e *encoder) raw(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], v)
	e.raw(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], v)
	e.raw(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

var zeros [256]byte

// pad writes zeros up to the next multiple of align.
func (e *encoder) pad(align int64) {
	for n := alignUp(e.w.n, align) - e.w.n; n > 0; {
		k := min(n, int64(len(zeros)))
		e.raw(zeros[:k])
		n -= k
	}
}

// value writes v's payload (its type tag is written by the caller).
func (e *encoder) value(v Value) {
	switch x := v.V.(type) {
	case string:
		e.str(x)
	case Array:
		e.u32(uint32(x.Elem))
		n := x.Len()
		e.u64(uint64(n))
		rv := reflect.ValueOf(x.Values)
		for i := 0; i < n; i++ {
			e.value(Value{x.Elem, rv.Index(i).Interface()})
		}
	case uint8:
		e.raw([]byte{x})
	case int8:
		e.raw([]byte{byte(x)})
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		e.raw([]byte{b})
	case uint16:
		binary.LittleEndian.PutUint16(e.buf[:], x)
		e.raw(e.buf[:2])
	case int16:
		binary.LittleEndian.PutUint16(e.buf[:], uint16(x))
		e.raw(e.buf[:2])
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	default:
		if e.err == nil {
			e.err = fmt.Errorf("metadata value of Go type %T", v.V)
		}
	}
}
