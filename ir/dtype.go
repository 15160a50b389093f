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
}

// String returns the short name used in the text form (f32, i64, bool, ...).
func (d DType) String() string {
	if d < numDTypes {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the size of one element in bytes (0 for Invalid and String).
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

// Valid reports whether d is a numeric or bool type that tensors can hold.
func (d DType) Valid() bool { return d > Invalid && d < String }

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
