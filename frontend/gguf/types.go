package gguf

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the alignment of tensor data when the file does not
// set general.alignment.
const DefaultAlignment = 32

// KeyAlignment is the metadata key that overrides DefaultAlignment (a
// uint32, a power of two).
const KeyAlignment = "general.alignment"

// MaxDims is the most dimensions a GGUF tensor may have (ggml's
// GGML_MAX_DIMS).
const MaxDims = 4

// ValueType is the type tag of a metadata value.
type ValueType uint32

// The metadata value types, numbered as in the GGUF specification.
const (
	TypeUint8 ValueType = iota
	TypeInt8
	TypeUint16
	TypeInt16
	TypeUint32
	TypeInt32
	TypeFloat32
	TypeBool
	TypeString
	TypeArray
	TypeUint64
	TypeInt64
	TypeFloat64
	numValueTypes
)

var valueTypeNames = [numValueTypes]string{
	"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
	"bool", "string", "array", "uint64", "int64", "float64",
}

// String returns the name of the type (uint32, string, array, ...).
func (t ValueType) String() string {
	if t < numValueTypes {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// size is the encoded size of a fixed-size value, 0 for strings and arrays.
func (t ValueType) size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// minSize is the fewest bytes a value of type t can take in a file: used
// to reject absurd element counts before allocating.
func (t ValueType) minSize() int {
	switch t {
	case TypeString:
		return 8 // the length
	case TypeArray:
		return 12 // element type and count
	}
	return t.size()
}

// GGMLType is a ggml tensor type id as stored in a GGUF tensor descriptor.
type GGMLType uint32

// ggmlType describes one ggml tensor type: its name, block layout and the
// ir.DType it maps to (ir.Invalid when weft cannot hold it).
type ggmlType struct {
	name       string
	blockSize  int
	blockBytes int
	dt         ir.DType
}

// ggmlTypes lists the ggml tensor types by id. Ids 4 and 5 (Q4_2, Q4_3)
// were removed from ggml and are unknown here.
var ggmlTypes = map[GGMLType]ggmlType{
	0:  {"f32", 1, 4, ir.Float32},
	1:  {"f16", 1, 2, ir.Float16},
	2:  {"q4_0", 32, 18, ir.Q4_0},
	3:  {"q4_1", 32, 20, ir.Q4_1},
	6:  {"q5_0", 32, 22, ir.Q5_0},
	7:  {"q5_1", 32, 24, ir.Q5_1},
	8:  {"q8_0", 32, 34, ir.Q8_0},
	9:  {"q8_1", 32, 36, ir.Invalid},
	10: {"q2_k", 256, 84, ir.Invalid},
	11: {"q3_k", 256, 110, ir.Invalid},
	12: {"q4_k", 256, 144, ir.Q4_K},
	13: {"q5_k", 256, 176, ir.Q5_K},
	14: {"q6_k", 256, 210, ir.Q6_K},
	15: {"q8_k", 256, 292, ir.Invalid},
	16: {"iq2_xxs", 256, 66, ir.Invalid},
	17: {"iq2_xs", 256, 74, ir.Invalid},
	18: {"iq3_xxs", 256, 98, ir.Invalid},
	19: {"iq1_s", 256, 50, ir.Invalid},
	20: {"iq4_nl", 32, 18, ir.Invalid},
	21: {"iq3_s", 256, 110, ir.Invalid},
	22: {"iq2_s", 256, 82, ir.Invalid},
	23: {"iq4_xs", 256, 136, ir.Invalid},
	24: {"i8", 1, 1, ir.Int8},
	25: {"i16", 1, 2, ir.Int16},
	26: {"i32", 1, 4, ir.Int32},
	27: {"i64", 1, 8, ir.Int64},
	28: {"f64", 1, 8, ir.Float64},
	29: {"iq1_m", 256, 56, ir.Invalid},
	30: {"bf16", 1, 2, ir.BFloat16},
	34: {"tq1_0", 256, 54, ir.Invalid},
	35: {"tq2_0", 256, 66, ir.Invalid},
	39: {"mxfp4", 32, 17, ir.Invalid},
}

// String returns ggml's name for the type (q4_k, f16, ...).
func (t GGMLType) String() string {
	if g, ok := ggmlTypes[t]; ok {
		return g.name
	}
	return fmt.Sprintf("ggml_type(%d)", uint32(t))
}

// DType returns the ir.DType of the type, or ir.Invalid when weft cannot
// hold tensors of it.
func (t GGMLType) DType() ir.DType { return ggmlTypes[t].dt }

// GGMLTypeOf returns the ggml type id of an ir.DType; ok is false for
// dtypes GGUF cannot store (bool, the unsigned integers, ...).
func GGMLTypeOf(dt ir.DType) (t GGMLType, ok bool) {
	if dt == ir.Invalid {
		return 0, false
	}
	for id, g := range ggmlTypes {
		if g.dt == dt {
			return id, true
		}
	}
	return 0, false
}
