package gguf

import (
	"fmt"
	"reflect"
	"strings"
)

// Value is a typed metadata value. V holds the Go value of the type:
// uint8, int8, uint16, int16, uint32, int32, float32, bool, string, uint64,
// int64, float64, or an Array for TypeArray.
type Value struct {
	Type ValueType
	V    any
}

// Array is an array value. Values is a slice of the Go type of Elem
// ([]uint8 ... []string, []bool), or []Array for an array of arrays.
type Array struct {
	Elem   ValueType
	Values any
}

// Len is the number of elements.
func (a Array) Len() int {
	if a.Values == nil {
		return 0
	}
	return reflect.ValueOf(a.Values).Len()
}

// KV is one metadata entry.
type KV struct {
	Key   string
	Value Value
}

// goTypes maps each scalar value type to the Go type of its values.
var goTypes = map[ValueType]reflect.Type{
	TypeUint8: reflect.TypeFor[uint8](), TypeInt8: reflect.TypeFor[int8](),
	TypeUint16: reflect.TypeFor[uint16](), TypeInt16: reflect.TypeFor[int16](),
	TypeUint32: reflect.TypeFor[uint32](), TypeInt32: reflect.TypeFor[int32](),
	TypeFloat32: reflect.TypeFor[float32](), TypeBool: reflect.TypeFor[bool](),
	TypeString: reflect.TypeFor[string](), TypeUint64: reflect.TypeFor[uint64](),
	TypeInt64: reflect.TypeFor[int64](), TypeFloat64: reflect.TypeFor[float64](),
	TypeArray: reflect.TypeFor[Array](),
}

// ValueOf wraps a Go value as a metadata Value: the fixed-width numeric
// types, bool and string map to their GGUF types, slices of them to arrays
// ([]Array to an array of arrays), an Array to itself and a Value is
// returned unchanged. Other types (int, uint, maps, ...) are an error.
func ValueOf(v any) (Value, error) {
	switch x := v.(type) {
	case Value:
		return x, x.check(0)
	case Array:
		val := Value{TypeArray, x}
		return val, val.check(0)
	}
	rt := reflect.TypeOf(v)
	for t, g := range goTypes {
		if rt == g {
			return Value{t, v}, nil
		}
	}
	if rt != nil && rt.Kind() == reflect.Slice {
		for t, g := range goTypes {
			if rt.Elem() == g {
				val := Value{TypeArray, Array{t, v}}
				return val, val.check(0)
			}
		}
	}
	return Value{}, fmt.Errorf("gguf: no metadata type for Go type %T", v)
}

// maxDepth bounds the nesting of arrays of arrays.
const maxDepth = 8

// check verifies that V holds the Go type Type calls for.
func (v Value) check(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("gguf: arrays nested more than %d deep", maxDepth)
	}
	g, ok := goTypes[v.Type]
	if !ok {
		return fmt.Errorf("gguf: unknown metadata type %v", v.Type)
	}
	if reflect.TypeOf(v.V) != g {
		return fmt.Errorf("gguf: %v value holds a Go %T", v.Type, v.V)
	}
	if v.Type != TypeArray {
		return nil
	}
	a := v.V.(Array)
	eg, ok := goTypes[a.Elem]
	if !ok {
		return fmt.Errorf("gguf: unknown array element type %v", a.Elem)
	}
	if rt := reflect.TypeOf(a.Values); rt == nil || rt.Kind() != reflect.Slice || rt.Elem() != eg {
		return fmt.Errorf("gguf: array of %v holds a Go %T", a.Elem, a.Values)
	}
	if a.Elem == TypeArray {
		for _, sub := range a.Values.([]Array) {
			if err := (Value{TypeArray, sub}).check(depth + 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// String formats the value, summarizing long arrays (see Summary).
func (v Value) String() string { return v.Summary(8) }

// Summary formats the value with arrays longer than n elements shown as
// their first n elements and the count, and long strings shortened.
func (v Value) Summary(n int) string {
	switch x := v.V.(type) {
	case string:
		return quoteShort(x, 80)
	case Array:
		var b strings.Builder
		l := x.Len()
		rv := reflect.ValueOf(x.Values)
		b.WriteString("[")
		for i := 0; i < l && i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(Value{x.Elem, rv.Index(i).Interface()}.Summary(n))
		}
		if l > n {
			fmt.Fprintf(&b, ", ... (%d total)", l)
		}
		b.WriteString("]")
		return b.String()
	}
	return fmt.Sprint(v.V)
}

// quoteShort quotes s, cutting it to about max bytes.
func quoteShort(s string, max int) string {
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:max], len(s))
}
