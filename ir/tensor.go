package ir

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// Tensor is a dense, row-major, little-endian array: a constant (weights,
// possibly a zero-copy slice of a memory-mapped file) or runtime data.
type Tensor struct {
	DType DType
	Shape []int64
	Data  []byte
}

// NewTensor allocates a zeroed tensor. Its Data is 64-byte aligned. For a
// block-quantized dtype the element count must be a whole number of blocks.
func NewTensor(dt DType, shape []int64) *Tensor {
	n := dt.Bytes(NumElements(shape))
	if n < 0 {
		panic(fmt.Sprintf("ir: NewTensor: %v%v is not a whole number of blocks", dt, shape))
	}
	return &Tensor{DType: dt, Shape: append([]int64{}, shape...), Data: AlignedBytes(int(n))}
}

// AlignedBytes returns a zeroed byte slice of length n whose first byte is
// 64-byte aligned.
func AlignedBytes(n int) []byte {
	buf := make([]byte, n+64)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(buf))) & 63)
	return buf[off : off+n : off+n]
}

// Len is the number of elements.
func (t *Tensor) Len() int { return int(NumElements(t.Shape)) }

// Bytes is the size of the data in bytes (-1 for a quantized tensor whose
// element count is not a whole number of blocks).
func (t *Tensor) Bytes() int { return int(t.DType.Bytes(int64(t.Len()))) }

// Check verifies that Data holds exactly the bytes that DType and Shape call for.
func (t *Tensor) Check() error {
	if !t.DType.Valid() {
		return fmt.Errorf("unsupported dtype %v", t.DType)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("negative dim in shape %v", t.Shape)
		}
	}
	if t.DType.IsQuantized() && (len(t.Shape) == 0 || t.Shape[len(t.Shape)-1]%int64(t.DType.BlockSize()) != 0) {
		return fmt.Errorf("%v%v: the last dimension must be a multiple of the block size %d", t.DType, t.Shape, t.DType.BlockSize())
	}
	if want := t.Bytes(); len(t.Data) != want {
		return fmt.Errorf("%v%v tensor has %d bytes of data, want %d", t.DType, t.Shape, len(t.Data), want)
	}
	return nil
}

// Clone returns a deep copy with freshly allocated, aligned data.
func (t *Tensor) Clone() *Tensor {
	c := &Tensor{DType: t.DType, Shape: append([]int64{}, t.Shape...), Data: AlignedBytes(len(t.Data))}
	copy(c.Data, t.Data)
	return c
}

// String summarises the tensor as dtype[shape].
func (t *Tensor) String() string { return fmt.Sprintf("%v%v", t.DType, t.Shape) }

// Float64 reads element i converted to float64 (bools as 0/1).
func (t *Tensor) Float64(i int) float64 {
	d := t.Data
	switch t.DType {
	case Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(d[i*4:])))
	case Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(d[i*8:]))
	case Float16:
		return float64(F16ToF32(binary.LittleEndian.Uint16(d[i*2:])))
	case BFloat16:
		return float64(BF16ToF32(binary.LittleEndian.Uint16(d[i*2:])))
	case Uint64:
		return float64(binary.LittleEndian.Uint64(d[i*8:]))
	}
	return float64(t.Int64(i))
}

// SetFloat64 stores v into element i, converting to the tensor's dtype
// (rounding for floats; truncation toward zero for integers; v != 0 for bool).
func (t *Tensor) SetFloat64(i int, v float64) {
	d := t.Data
	switch t.DType {
	case Float32:
		binary.LittleEndian.PutUint32(d[i*4:], math.Float32bits(float32(v)))
	case Float64:
		binary.LittleEndian.PutUint64(d[i*8:], math.Float64bits(v))
	case Float16:
		binary.LittleEndian.PutUint16(d[i*2:], F32ToF16(roundToOdd32(v)))
	case BFloat16:
		binary.LittleEndian.PutUint16(d[i*2:], F32ToBF16(roundToOdd32(v)))
	case Bool:
		if v != 0 {
			d[i] = 1
		} else {
			d[i] = 0
		}
	case Uint64:
		binary.LittleEndian.PutUint64(d[i*8:], uint64(v))
	case Uint32:
		t.SetInt64(i, int64(uint32(int64(v))))
	default:
		t.SetInt64(i, int64(v))
	}
}

// Int64 reads element i as an int64 (floats truncated toward zero; uint64
// reinterpreted bit for bit).
func (t *Tensor) Int64(i int) int64 {
	d := t.Data
	switch t.DType {
	case Int8:
		return int64(int8(d[i]))
	case Uint8, Bool:
		return int64(d[i])
	case Int16:
		return int64(int16(binary.LittleEndian.Uint16(d[i*2:])))
	case Uint16:
		return int64(binary.LittleEndian.Uint16(d[i*2:]))
	case Int32:
		return int64(int32(binary.LittleEndian.Uint32(d[i*4:])))
	case Uint32:
		return int64(binary.LittleEndian.Uint32(d[i*4:]))
	case Int64, Uint64:
		return int64(binary.LittleEndian.Uint64(d[i*8:]))
	}
	return int64(t.Float64(i))
}

// SetInt64 stores v into element i, wrapping integers to the dtype's width
// (two's complement) and converting to float for float dtypes.
func (t *Tensor) SetInt64(i int, v int64) {
	d := t.Data
	switch t.DType {
	case Int8, Uint8:
		d[i] = byte(v)
	case Bool:
		if v != 0 {
			d[i] = 1
		} else {
			d[i] = 0
		}
	case Int16, Uint16:
		binary.LittleEndian.PutUint16(d[i*2:], uint16(v))
	case Int32, Uint32:
		binary.LittleEndian.PutUint32(d[i*4:], uint32(v))
	case Int64, Uint64:
		binary.LittleEndian.PutUint64(d[i*8:], uint64(v))
	default:
		t.SetFloat64(i, float64(v))
	}
}

// Uint64 reads element i as a uint64 (bit pattern for Uint64, value otherwise).
func (t *Tensor) Uint64(i int) uint64 {
	if t.DType == Uint64 {
		return binary.LittleEndian.Uint64(t.Data[i*8:])
	}
	if t.DType.IsFloat() {
		return uint64(t.Float64(i))
	}
	return uint64(t.Int64(i))
}

// Bool reads element i as a truth value.
func (t *Tensor) Bool(i int) bool {
	if t.DType.IsFloat() {
		return t.Float64(i) != 0
	}
	return t.Int64(i) != 0
}

// Float32s views the data of a Float32 tensor as []float32 without copying
// when it is 4-byte aligned, and as a copy otherwise.
func (t *Tensor) Float32s() []float32 {
	if t.DType != Float32 {
		panic(fmt.Sprintf("ir: Float32s on %v tensor", t.DType))
	}
	n := t.Len()
	if n == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(t.Data))
	if uintptr(p)%4 == 0 {
		return unsafe.Slice((*float32)(p), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[i*4:]))
	}
	return out
}

// Int64s copies the elements out as int64s (handy for shape-like tensors).
func (t *Tensor) Int64s() []int64 {
	out := make([]int64, t.Len())
	for i := range out {
		out[i] = t.Int64(i)
	}
	return out
}

// FromFloat32 builds a Float32 tensor holding a copy of vals.
func FromFloat32(shape []int64, vals []float32) *Tensor {
	t := NewTensor(Float32, shape)
	if len(vals) != t.Len() {
		panic(fmt.Sprintf("ir: FromFloat32: %d values for shape %v", len(vals), shape))
	}
	for i, v := range vals {
		binary.LittleEndian.PutUint32(t.Data[i*4:], math.Float32bits(v))
	}
	return t
}

// FromInt64 builds an Int64 tensor holding a copy of vals.
func FromInt64(shape []int64, vals []int64) *Tensor {
	t := NewTensor(Int64, shape)
	if len(vals) != t.Len() {
		panic(fmt.Sprintf("ir: FromInt64: %d values for shape %v", len(vals), shape))
	}
	for i, v := range vals {
		binary.LittleEndian.PutUint64(t.Data[i*8:], uint64(v))
	}
	return t
}

// FromFloat64 builds a tensor of dtype dt from float64 values (converted
// with SetFloat64).
func FromFloat64(dt DType, shape []int64, vals []float64) *Tensor {
	t := NewTensor(dt, shape)
	if len(vals) != t.Len() {
		panic(fmt.Sprintf("ir: FromFloat64: %d values for shape %v", len(vals), shape))
	}
	for i, v := range vals {
		t.SetFloat64(i, v)
	}
	return t
}

// roundToOdd32 rounds v to float32 precision, breaking inexact results toward
// the neighbour whose last significand bit is 1 ("round to odd"). Rounding to
// odd first and then to the narrower f16/bf16 equals one correct rounding of
// v, which a plain float64 -> float32 -> f16 chain does not guarantee.
func roundToOdd32(v float64) float32 {
	f := float32(v)
	if float64(f) == v || v != v || math.IsInf(float64(f), 0) {
		return f
	}
	if math.Float32bits(f)&1 == 0 {
		if float64(f) < v {
			f = math.Nextafter32(f, float32(math.Inf(1)))
		} else {
			f = math.Nextafter32(f, float32(math.Inf(-1)))
		}
	}
	return f
}
