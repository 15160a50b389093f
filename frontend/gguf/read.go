package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"slices"
	"unsafe"

	"github.com/weftrt/weft/internal/mmapfile"
	"github.com/weftrt/weft/ir"
)

// File is a parsed GGUF file. Its tensors' data may alias the mapped file,
// so they stay valid only until Close.
type File struct {
	Path       string // the file name (empty for Parse)
	Version    uint32
	Metadata   []KV // in file order
	Tensors    []TensorInfo
	Alignment  int64 // of tensor data: general.alignment or DefaultAlignment
	DataOffset int64 // where the tensor data section starts in the file

	data   []byte
	unmap  func() error
	keys   map[string]int
	byName map[string]int
}

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name string
	// Shape is weft's row-major shape, outermost dimension first: the GGUF
	// dims reversed (GGUF lists ne[0], the row length, first).
	Shape    []int64
	GGMLType GGMLType
	Type     ir.DType // ir.Invalid for ggml types weft cannot hold
	Offset   int64    // of the data, relative to File.DataOffset
	Size     int64    // of the data in bytes
}

// memoryName stands for the file name in errors about bytes from Parse.
const memoryName = "<memory>"

// Open maps a GGUF file read-only and parses it. Tensor data is not copied.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	data, unmap, err := mmapfile.Map(fh)
	fh.Close()
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: %w", path, err)
	}
	f, err := parse(data, path)
	if err != nil {
		unmap()
		return nil, err
	}
	f.Path, f.unmap = path, unmap
	return f, nil
}

// Parse parses a GGUF file held in data, which the returned File's tensors
// alias.
func Parse(data []byte) (*File, error) { return parse(data, memoryName) }

// Close releases the mapping of a file from Open. Tensors from File.Tensor
// must not be used afterwards.
func (f *File) Close() error {
	f.data = nil
	if f.unmap == nil {
		return nil
	}
	u := f.unmap
	f.unmap = nil
	return u()
}

// Tensor returns the named tensor as an ir.Tensor whose Data is a slice of
// the file's bytes (no copy).
func (f *File) Tensor(name string) (*ir.Tensor, error) {
	i, ok := f.byName[name]
	if !ok {
		return nil, fmt.Errorf("gguf: %s: no tensor %q", f.name(), name)
	}
	ti := f.Tensors[i]
	if ti.Type == ir.Invalid {
		return nil, fmt.Errorf("gguf: %s: tensor %q: %w ggml type %v (%d)", f.name(), name, ir.ErrUnsupported, ti.GGMLType, uint32(ti.GGMLType))
	}
	if f.data == nil {
		return nil, fmt.Errorf("gguf: %s: tensor %q: file is closed", f.name(), name)
	}
	start := f.DataOffset + ti.Offset
	end := start + ti.Size
	return &ir.Tensor{DType: ti.Type, Shape: slices.Clone(ti.Shape), Data: f.data[start:end:end]}, nil
}

// TensorInfo returns the descriptor of the named tensor.
func (f *File) TensorInfo(name string) (TensorInfo, bool) {
	i, ok := f.byName[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

func (f *File) name() string {
	if f.Path == "" {
		return memoryName
	}
	return f.Path
}

// reader walks the bytes of a file, checking every read against its end.
type reader struct {
	b    []byte
	off  int
	file string
}

var errTruncated = errors.New("unexpected end of file")

func (r *reader) errorf(format string, args ...any) error {
	return fmt.Errorf("gguf: %s: "+format, append([]any{r.file}, args...)...)
}

func (r *reader) left() int { return len(r.b) - r.off }

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || n > r.left() {
		return nil, errTruncated
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s, nil
}

func (r *reader) u32() (uint32, error) {
	s, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(s), nil
}

func (r *reader) u64() (uint64, error) {
	s, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(s), nil
}

// count reads a u64 count of items each at least minSize bytes long and
// checks that that many could fit in the rest of the file.
func (r *reader) count(minSize int) (int, error) {
	n, err := r.u64()
	if err != nil {
		return 0, err
	}
	if minSize > 0 && n > uint64(r.left()/minSize) || n > math.MaxInt32 {
		return 0, fmt.Errorf("count %d exceeds what the remaining %d bytes can hold", n, r.left())
	}
	return int(n), nil
}

func (r *reader) str() (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(r.left()) {
		return "", fmt.Errorf("string of %d bytes exceeds the remaining %d", n, r.left())
	}
	s, _ := r.take(int(n))
	return string(s), nil
}

func parse(data []byte, file string) (*File, error) {
	r := &reader{b: data, file: file}
	f := &File{data: data, Alignment: DefaultAlignment, keys: map[string]int{}, byName: map[string]int{}}
	if file != memoryName {
		f.Path = file
	}
	if len(data) < 4 || string(data[:4]) != Magic {
		return nil, r.errorf("not a GGUF file (no %q magic)", Magic)
	}
	if len(data) < 24 {
		return nil, r.errorf("truncated header (%d bytes)", len(data))
	}
	r.off = 4
	f.Version, _ = r.u32()
	switch {
	case f.Version == 2 || f.Version == 3:
	case f.Version&0xffff == 0 && bits.ReverseBytes32(f.Version)-1 < 3: // 1..3 byte-swapped
		return nil, r.errorf("%w: big-endian GGUF files", ir.ErrUnsupported)
	default:
		return nil, r.errorf("%w: GGUF version %d (want 2 or 3)", ir.ErrUnsupported, f.Version)
	}
	nt, err := r.count(24) // name length, n_dims, type, offset
	if err != nil {
		return nil, r.errorf("tensor count: %v", err)
	}
	nkv, err := r.count(13) // key length, value type, one byte of value
	if err != nil {
		return nil, r.errorf("metadata count: %v", err)
	}
	f.Metadata = make([]KV, 0, nkv)
	for i := 0; i < nkv; i++ {
		kv, err := r.kv()
		if err != nil {
			return nil, r.errorf("metadata entry %d: %v", i, err)
		}
		if _, dup := f.keys[kv.Key]; dup {
			return nil, r.errorf("metadata key %s appears twice", quoteShort(kv.Key, 64))
		}
		f.keys[kv.Key] = len(f.Metadata)
		f.Metadata = append(f.Metadata, kv)
	}
	if v, ok := f.Get(KeyAlignment); ok {
		a, isU32 := v.V.(uint32)
		if !isU32 || a == 0 || a&(a-1) != 0 {
			return nil, r.errorf("%s must be a power-of-two uint32, got %v %v", KeyAlignment, v.Type, v)
		}
		f.Alignment = int64(a)
	}
	f.Tensors = make([]TensorInfo, 0, nt)
	for i := 0; i < nt; i++ {
		ti, err := r.tensorInfo()
		if err != nil {
			if ti.Name != "" {
				return nil, r.errorf("tensor %d %s: %w", i, quoteShort(ti.Name, 64), err)
			}
			return nil, r.errorf("tensor %d: %w", i, err)
		}
		if _, dup := f.byName[ti.Name]; dup {
			return nil, r.errorf("tensor name %s appears twice", quoteShort(ti.Name, 64))
		}
		f.byName[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
	}
	f.DataOffset = alignUp(int64(r.off), f.Alignment)
	if err := f.checkData(int64(len(data))); err != nil {
		return nil, r.errorf("%v", err)
	}
	return f, nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// checkData verifies that every tensor's data is aligned, inside the data
// section of a file of size bytes, and overlaps no other tensor.
func (f *File) checkData(size int64) error {
	if len(f.Tensors) == 0 {
		return nil
	}
	if f.DataOffset > size {
		return fmt.Errorf("the tensor data section starts at %d, past the end of the %d-byte file", f.DataOffset, size)
	}
	avail := size - f.DataOffset
	order := make([]int, len(f.Tensors))
	for i, t := range f.Tensors {
		order[i] = i
		if t.Offset%f.Alignment != 0 {
			return fmt.Errorf("tensor %s: data offset %d is not a multiple of the alignment %d", quoteShort(t.Name, 64), t.Offset, f.Alignment)
		}
		if t.Offset > avail || t.Size > avail-t.Offset {
			return fmt.Errorf("tensor %s: data [%d, +%d) lies outside the %d-byte data section", quoteShort(t.Name, 64), t.Offset, t.Size, avail)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ta, tb := f.Tensors[a], f.Tensors[b]
		if ta.Offset != tb.Offset {
			return int(min(max(ta.Offset-tb.Offset, -1), 1))
		}
		return int(min(max(ta.Size-tb.Size, -1), 1))
	})
	// Walk in offset order keeping the non-empty tensor that reaches
	// furthest; empty tensors occupy no bytes and overlap nothing.
	var end int64
	last := -1
	for _, i := range order {
		t := f.Tensors[i]
		if t.Size == 0 {
			continue
		}
		if last >= 0 && t.Offset < end {
			return fmt.Errorf("tensors %s and %s overlap in the data section", quoteShort(f.Tensors[last].Name, 64), quoteShort(t.Name, 64))
		}
		end, last = t.Offset+t.Size, i
	}
	return nil
}

func (r *reader) kv() (KV, error) {
	key, err := r.str()
	if err != nil {
		return KV{}, fmt.Errorf("key: %v", err)
	}
	t, err := r.u32()
	if err != nil {
		return KV{Key: key}, fmt.Errorf("key %s: %v", quoteShort(key, 64), err)
	}
	v, err := r.value(ValueType(t), 0)
	if err != nil {
		return KV{Key: key}, fmt.Errorf("key %s: %v", quoteShort(key, 64), err)
	}
	return KV{key, v}, nil
}

// value reads one value of type t; depth counts enclosing arrays.
func (r *reader) value(t ValueType, depth int) (Value, error) {
	if t == TypeArray {
		if depth >= maxDepth {
			return Value{}, fmt.Errorf("arrays nested more than %d deep", maxDepth)
		}
		a, err := r.array(depth)
		return Value{TypeArray, a}, err
	}
	if t == TypeString {
		s, err := r.str()
		return Value{TypeString, s}, err
	}
	n := t.size()
	if n == 0 {
		return Value{}, fmt.Errorf("unknown value type %d", uint32(t))
	}
	b, err := r.take(n)
	if err != nil {
		return Value{}, err
	}
	v, err := scalar(t, b)
	return Value{t, v}, err
}

// scalar decodes a fixed-size value from b.
func scalar(t ValueType, b []byte) (any, error) {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return b[0], nil
	case TypeInt8:
		return int8(b[0]), nil
	case TypeBool:
		if b[0] > 1 {
			return nil, fmt.Errorf("bool byte %d is neither 0 nor 1", b[0])
		}
		return b[0] == 1, nil
	case TypeUint16:
		return le.Uint16(b), nil
	case TypeInt16:
		return int16(le.Uint16(b)), nil
	case TypeUint32:
		return le.Uint32(b), nil
	case TypeInt32:
		return int32(le.Uint32(b)), nil
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(b)), nil
	case TypeUint64:
		return le.Uint64(b), nil
	case TypeInt64:
		return int64(le.Uint64(b)), nil
	case TypeFloat64:
		return math.Float64frombits(le.Uint64(b)), nil
	}
	return nil, fmt.Errorf("unknown value type %d", uint32(t))
}

// array reads an array's element type, count and elements into a typed slice.
func (r *reader) array(depth int) (Array, error) {
	et, err := r.u32()
	if err != nil {
		return Array{}, err
	}
	t := ValueType(et)
	if t >= numValueTypes {
		return Array{}, fmt.Errorf("array of unknown value type %d", et)
	}
	n, err := r.count(t.minSize())
	if err != nil {
		return Array{}, fmt.Errorf("array of %v: %v", t, err)
	}
	switch t {
	case TypeString:
		out, err := r.strings(n)
		return Array{t, out}, err
	case TypeArray:
		if depth+1 >= maxDepth {
			return Array{}, fmt.Errorf("arrays nested more than %d deep", maxDepth)
		}
		out := make([]Array, n)
		for i := range out {
			if out[i], err = r.array(depth + 1); err != nil {
				return Array{}, fmt.Errorf("array element %d: %v", i, err)
			}
		}
		return Array{t, out}, nil
	}
	b, err := r.take(n * t.size())
	if err != nil {
		return Array{}, err
	}
	vals, err := fixedArray(t, b, n)
	return Array{t, vals}, err
}

// fixedArray decodes n fixed-size values of type t from b into a typed slice.
func fixedArray(t ValueType, b []byte, n int) (any, error) {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return slices.Clone(b), nil
	case TypeInt8:
		return fill(b, n, 1, func(p []byte) int8 { return int8(p[0]) }), nil
	case TypeBool:
		for i, c := range b {
			if c > 1 {
				return nil, fmt.Errorf("element %d: bool byte %d is neither 0 nor 1", i, c)
			}
		}
		return fill(b, n, 1, func(p []byte) bool { return p[0] == 1 }), nil
	case TypeUint16:
		return fill(b, n, 2, le.Uint16), nil
	case TypeInt16:
		return fill(b, n, 2, func(p []byte) int16 { return int16(le.Uint16(p)) }), nil
	case TypeUint32:
		return fill(b, n, 4, le.Uint32), nil
	case TypeInt32:
		return fill(b, n, 4, func(p []byte) int32 { return int32(le.Uint32(p)) }), nil
	case TypeFloat32:
		return fill(b, n, 4, func(p []byte) float32 { return math.Float32frombits(le.Uint32(p)) }), nil
	case TypeUint64:
		return fill(b, n, 8, le.Uint64), nil
	case TypeInt64:
		return fill(b, n, 8, func(p []byte) int64 { return int64(le.Uint64(p)) }), nil
	case TypeFloat64:
		return fill(b, n, 8, func(p []byte) float64 { return math.Float64frombits(le.Uint64(p)) }), nil
	}
	return nil, fmt.Errorf("unknown value type %d", uint32(t))
}

// fill decodes n values of sz bytes each from b with dec.
func fill[T any](b []byte, n, sz int, dec func([]byte) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = dec(b[i*sz : (i+1)*sz])
	}
	return out
}

// maxElements bounds a tensor's element count so that sizes stay far from
// int64 overflow.
const maxElements = 1 << 52

func (r *reader) tensorInfo() (TensorInfo, error) {
	var ti TensorInfo
	var err error
	if ti.Name, err = r.str(); err != nil {
		return ti, fmt.Errorf("name: %v", err)
	}
	nd, err := r.u32()
	if err != nil {
		return ti, err
	}
	if nd > MaxDims {
		return ti, fmt.Errorf("%d dimensions (at most %d)", nd, MaxDims)
	}
	ti.Shape = make([]int64, nd)
	elems := int64(1)
	for i := 0; i < int(nd); i++ {
		d, err := r.u64()
		if err != nil {
			return ti, err
		}
		if d > maxElements {
			return ti, fmt.Errorf("dimension %d is %d, absurdly large", i, d)
		}
		ti.Shape[int(nd)-1-i] = int64(d)
		if d != 0 && elems > maxElements/int64(d) {
			return ti, fmt.Errorf("dims %v: element count overflows", ti.Shape)
		}
		elems *= int64(d)
	}
	tt, err := r.u32()
	if err != nil {
		return ti, err
	}
	ti.GGMLType = GGMLType(tt)
	g, ok := ggmlTypes[ti.GGMLType]
	if !ok {
		return ti, fmt.Errorf("%w: unknown ggml type id %d", ir.ErrUnsupported, tt)
	}
	ti.Type = g.dt
	if g.blockSize > 1 && (nd == 0 || ti.Shape[nd-1]%int64(g.blockSize) != 0) {
		return ti, fmt.Errorf("%v rows must be a multiple of %d elements, dims %v", ti.GGMLType, g.blockSize, ti.Shape)
	}
	ti.Size = elems / int64(g.blockSize) * int64(g.blockBytes)
	off, err := r.u64()
	if err != nil {
		return ti, err
	}
	if off > math.MaxInt64/2 {
		return ti, fmt.Errorf("data offset %d is absurdly large", off)
	}
	ti.Offset = int64(off)
	return ti, nil
}

// strings reads n strings. It copies them all into one buffer in a first
// pass that also checks their lengths, then slices that buffer, so a large
// vocabulary costs two allocations instead of one per token.
func (r *reader) strings(n int) ([]string, error) {
	start, total := r.off, 0
	for i := 0; i < n; i++ {
		l, err := r.u64()
		if err == nil && l > uint64(r.left()) {
			err = fmt.Errorf("string of %d bytes exceeds the remaining %d", l, r.left())
		}
		if err != nil {
			return nil, fmt.Errorf("string array element %d: %v", i, err)
		}
		r.off += int(l)
		total += int(l)
	}
	buf := make([]byte, 0, total)
	out := make([]string, n)
	for i := range out {
		l := int(binary.LittleEndian.Uint64(r.b[start:]))
		start += 8
		at := len(buf)
		buf = append(buf, r.b[start:start+l]...)
		start += l
		out[i] = unsafe.String(unsafe.SliceData(buf[at:]), l)
	}
	return out, nil
}
