package ir

import (
	"fmt"
	"strings"
)

// DType is the element type of a Value or Tensor.
type DType uint8

// The element types. Their numbering is weft's own (it is stored in plan
// files), not ONNX's.
const (
	Invalid DType = iota
	Float32
	Float64
	Float16
	BFloat16
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Bool
	String // only for refusing string models with a clear error

	// Block-quantized types in GGUF's layouts. A tensor of one of these
	// has its logical (element) shape; its last dimension is a multiple of
	// BlockSize and its data is the blocks, row by row. Codecs live in
	// package ir/quant.
	Q8_0 // 32 elements: f16 scale d, 32 × int8 q; x = d·q
	Q4_0 // 32 elements: f16 scale d, 16 bytes of nibbles; x = d·(q-8)
	Q4_1 // 32 elements: f16 d, f16 m, 16 bytes of nibbles; x = d·q + m
	Q5_0 // 32 elements: f16 d, 4 bytes high bits, 16 bytes nibbles; x = d·(q-16)
	Q5_1 // 32 elements: f16 d, f16 m, 4 bytes high bits, 16 bytes nibbles
	Q4_K // 256-element super-blocks with 6-bit sub-block scales
	Q5_K // 256-element super-blocks
	Q6_K // 256-element super-blocks
	numDTypes
)

var dtypeInfo = [numDTypes]struct {
	name string
	size int
}{
	Invalid:  {"invalid", 0},
	Float32:  {"f32", 4},
	Float64:  {"f64", 8},
	Float16:  {"f16", 2},
	BFloat16: {"bf16", 2},
	Int8:     {"i8", 1},
	Int16:    {"i16", 2},
	Int32:    {"i32", 4},
	Int64:    {"i64", 8},
	Uint8:    {"u8", 1},
	Uint16:   {"u16", 2},
	Uint32:   {"u32", 4},
	Uint64:   {"u64", 8},
	Bool:     {"bool", 1},
	String:   {"string", 0},
	Q8_0:     {"q8_0", 0},
	Q4_0:     {"q4_0", 0},
	Q4_1:     {"q4_1", 0},
	Q5_0:     {"q5_0", 0},
	Q5_1:     {"q5_1", 0},
	Q4_K:     {"q4_k", 0},
	Q5_K:     {"q5_k", 0},
	Q6_K:     {"q6_k", 0},
}

// blockInfo gives elements per block and bytes per block of the quantized
// types (zero for the others). An array, not a map: Bytes runs on every
// node of every run.
var blockInfo = [numDTypes][2]int{
	Q8_0: {32, 34}, Q4_0: {32, 18}, Q4_1: {32, 20}, Q5_0: {32, 22}, Q5_1: {32, 24},
	Q4_K: {256, 144}, Q5_K: {256, 176}, Q6_K: {256, 210},
}

// block returns d's block geometry and whether d is block-quantized.
func (d DType) block() ([2]int, bool) {
	if d < numDTypes && blockInfo[d][0] != 0 {
		return blockInfo[d], true
	}
	return [2]int{}, false
}

// String returns the short name used in the text form (f32, i64, bool, ...).
func (d DType) String() string {
	if d < numDTypes {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// IsQuantized reports whether d is a block-quantized type.
func (d DType) IsQuantized() bool { _, ok := d.block(); return ok }

// BlockSize returns the elements per block (1 for plain types).
func (d DType) BlockSize() int {
	if b, ok := d.block(); ok {
		return b[0]
	}
	return 1
}

// BlockBytes returns the bytes per block (Size for plain types).
func (d DType) BlockBytes() int {
	if b, ok := d.block(); ok {
		return b[1]
	}
	return d.Size()
}

// Bytes returns the storage size of n elements, or -1 when n is not a
// whole number of blocks.
func (d DType) Bytes(n int64) int64 {
	bs := int64(d.BlockSize())
	if n%bs != 0 {
		return -1
	}
	return n / bs * int64(d.BlockBytes())
}

// Size is the size of one element in bytes (0 for Invalid, String and the
// block-quantized types, whose size is per block: see Bytes).
func (d DType) Size() int {
	if d < numDTypes {
		return dtypeInfo[d].size
	}
	return 0
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool {
	return d == Float32 || d == Float64 || d == Float16 || d == BFloat16
}

// IsInt reports whether d is a signed or unsigned integer type (not Bool).
func (d DType) IsInt() bool { return d.IsSigned() || d.IsUnsigned() }

// IsSigned reports whether d is a signed integer type.
func (d DType) IsSigned() bool { return d == Int8 || d == Int16 || d == Int32 || d == Int64 }

// IsUnsigned reports whether d is an unsigned integer type.
func (d DType) IsUnsigned() bool { return d == Uint8 || d == Uint16 || d == Uint32 || d == Uint64 }

// Valid reports whether d is a numeric, bool or block-quantized type that
// tensors can hold.
func (d DType) Valid() bool { return d > Invalid && d < numDTypes && d != String }

// ParseDType parses the short name printed by DType.String.
func ParseDType(s string) (DType, error) {
	s = strings.ToLower(s)
	for d := DType(1); d < numDTypes; d++ {
		if dtypeInfo[d].name == s {
			return d, nil
		}
	}
	return Invalid, fmt.Errorf("ir: unknown dtype %q", s)
}
