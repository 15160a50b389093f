package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// field is one decoded protobuf field. Exactly one of u (varint, fixed32,
// fixed64) and b (length-delimited) is meaningful, as typ says.
type field struct {
	num protowire.Number
	typ protowire.Type
	u   uint64
	b   []byte
}

// walk calls fn for every field of the message encoded in b. Every length is
// bounds-checked by protowire; groups are skipped.
func walk(b []byte, fn func(f field) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireErr(n)
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.u, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.u = uint64(v)
		case protowire.Fixed64Type:
			f.u, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(b)
		case protowire.StartGroupType:
			n = protowire.ConsumeFieldValue(num, typ, b)
		default:
			return fmt.Errorf("field %d: bad wire type %d", num, typ)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, wireErr(n))
		}
		b = b[n:]
		if typ == protowire.StartGroupType {
			continue
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

func wireErr(n int) error {
	return fmt.Errorf("malformed protobuf: %w", protowire.ParseError(n))
}

func (f field) want(t protowire.Type) error {
	if f.typ != t {
		return fmt.Errorf("field %d has wire type %d, want %d", f.num, f.typ, t)
	}
	return nil
}

func (f field) int64() (int64, error) {
	if err := f.want(protowire.VarintType); err != nil {
		return 0, err
	}
	return int64(f.u), nil
}

func (f field) int32() (int32, error) {
	v, err := f.int64()
	return int32(v), err
}

func (f field) float32() (float32, error) {
	if err := f.want(protowire.Fixed32Type); err != nil {
		return 0, err
	}
	return math.Float32frombits(uint32(f.u)), nil
}

func (f field) bytes() ([]byte, error) {
	if err := f.want(protowire.BytesType); err != nil {
		return nil, err
	}
	return f.b, nil
}

func (f field) str() (string, error) {
	b, err := f.bytes()
	return string(b), err
}

// appendVarints appends a repeated varint field, packed or not.
func appendVarints(dst []int64, f field) ([]int64, error) {
	switch f.typ {
	case protowire.VarintType:
		return append(dst, int64(f.u)), nil
	case protowire.BytesType:
		b := f.b
		for len(b) > 0 {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return dst, fmt.Errorf("field %d: %w", f.num, wireErr(n))
			}
			dst = append(dst, int64(v))
			b = b[n:]
		}
		return dst, nil
	}
	return dst, fmt.Errorf("field %d has wire type %d, want varint", f.num, f.typ)
}

// appendFixed32s appends a repeated fixed32 field (float), packed or not.
func appendFixed32s(dst []uint32, f field) ([]uint32, error) {
	switch f.typ {
	case protowire.Fixed32Type:
		return append(dst, uint32(f.u)), nil
	case protowire.BytesType:
		if len(f.b)%4 != 0 {
			return dst, fmt.Errorf("field %d: packed fixed32 data of %d bytes", f.num, len(f.b))
		}
		for i := 0; i < len(f.b); i += 4 {
			dst = append(dst, binary.LittleEndian.Uint32(f.b[i:]))
		}
		return dst, nil
	}
	return dst, fmt.Errorf("field %d has wire type %d, want fixed32", f.num, f.typ)
}

// appendFixed64s appends a repeated fixed64 field (double), packed or not.
func appendFixed64s(dst []uint64, f field) ([]uint64, error) {
	switch f.typ {
	case protowire.Fixed64Type:
		return append(dst, f.u), nil
	case protowire.BytesType:
		if len(f.b)%8 != 0 {
			return dst, fmt.Errorf("field %d: packed fixed64 data of %d bytes", f.num, len(f.b))
		}
		for i := 0; i < len(f.b); i += 8 {
			dst = append(dst, binary.LittleEndian.Uint64(f.b[i:]))
		}
		return dst, nil
	}
	return dst, fmt.Errorf("field %d has wire type %d, want fixed64", f.num, f.typ)
}
