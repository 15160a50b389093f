package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/weftrt/weft/ir"
)

// ONNX TensorProto.DataType numbers.
const (
	dtUndefined  = 0
	dtFloat      = 1
	dtUint8      = 2
	dtInt8       = 3
	dtUint16     = 4
	dtInt16      = 5
	dtInt32      = 6
	dtInt64      = 7
	dtString     = 8
	dtBool       = 9
	dtFloat16    = 10
	dtDouble     = 11
	dtUint32     = 12
	dtUint64     = 13
	dtComplex64  = 14
	dtComplex128 = 15
	dtBFloat16   = 16
)

var fromONNX = map[int64]ir.DType{
	dtFloat: ir.Float32, dtUint8: ir.Uint8, dtInt8: ir.Int8, dtUint16: ir.Uint16,
	dtInt16: ir.Int16, dtInt32: ir.Int32, dtInt64: ir.Int64, dtBool: ir.Bool,
	dtFloat16: ir.Float16, dtDouble: ir.Float64, dtUint32: ir.Uint32,
	dtUint64: ir.Uint64, dtBFloat16: ir.BFloat16,
}

var unsupportedDTypes = map[int64]string{
	dtString: "string", dtComplex64: "complex64", dtComplex128: "complex128",
	17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz",
	21: "uint4", 22: "int4", 23: "float4e2m1",
}

// DType maps an ONNX TensorProto.DataType number (as used by the Cast `to`
// attribute and friends) to an ir.DType. Types weft does not handle (string,
// complex, float8, 4-bit) give an error wrapping ir.ErrUnsupported.
func DType(code int64) (ir.DType, error) {
	if dt, ok := fromONNX[code]; ok {
		return dt, nil
	}
	if name, ok := unsupportedDTypes[code]; ok {
		return ir.Invalid, fmt.Errorf("%s tensors: %w", name, ir.ErrUnsupported)
	}
	if code == dtUndefined {
		return ir.Invalid, errors.New("undefined data type")
	}
	return ir.Invalid, fmt.Errorf("invalid data type %d", code)
}

// ONNXDType is the inverse of DType (0 for ir.Invalid and ir.String).
func ONNXDType(dt ir.DType) int64 {
	for code, d := range fromONNX {
		if d == dt {
			return code
		}
	}
	return dtUndefined
}

func f32frombits(u uint32) float32 { return math.Float32frombits(u) }

// maxElems caps tensor element counts well below int overflow.
const maxElems = 1 << 50

// numElems multiplies dims, rejecting negative dims and overflow.
func numElems(dims []int64) (int64, error) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension in %v", dims)
		}
		if d != 0 && n > maxElems/d {
			return 0, fmt.Errorf("shape %v is too large", dims)
		}
		n *= d
	}
	return n, nil
}

// externalSource resolves external tensor data; nil means none is allowed.
type externalSource interface {
	external(location string, offset, length int64, hasLength bool) ([]byte, error)
}

// convertTensor turns a decoded TensorProto into an ir.Tensor. raw_data and
// external data are referenced, not copied.
func convertTensor(tp *tensorProto, ext externalSource) (*ir.Tensor, error) {
	t, err := convertTensor1(tp, ext)
	if err != nil {
		if tp.name != "" {
			return nil, fmt.Errorf("tensor %q: %w", tp.name, err)
		}
		return nil, fmt.Errorf("tensor: %w", err)
	}
	return t, nil
}

func convertTensor1(tp *tensorProto, ext externalSource) (*ir.Tensor, error) {
	dt, err := DType(int64(tp.dataType))
	if err != nil {
		return nil, err
	}
	if tp.hasSegment {
		return nil, fmt.Errorf("segmented tensors: %w", ir.ErrUnsupported)
	}
	n, err := numElems(tp.dims)
	if err != nil {
		return nil, err
	}
	t := &ir.Tensor{DType: dt, Shape: append([]int64{}, tp.dims...)}
	if tp.dims == nil {
		t.Shape = []int64{}
	}
	size := int64(dt.Size())
	nbytes := n * size

	// Which typed field carries this dtype, and how many values it holds.
	var typed int
	var field string
	switch dt {
	case ir.Float32:
		typed, field = len(tp.floatData), "float_data"
	case ir.Int64:
		typed, field = len(tp.int64Data), "int64_data"
	case ir.Float64:
		typed, field = len(tp.doubleData), "double_data"
	case ir.Uint32, ir.Uint64:
		typed, field = len(tp.uint64Data), "uint64_data"
	default:
		typed, field = len(tp.int32Data), "int32_data"
	}
	total := len(tp.floatData) + len(tp.int32Data) + len(tp.int64Data) + len(tp.doubleData) + len(tp.uint64Data) + tp.nString
	if total != typed {
		return nil, fmt.Errorf("%v tensor carries values in a field other than %s", dt, field)
	}

	external := tp.location == 1
	sources := 0
	for _, b := range []bool{tp.hasRaw, typed > 0, external} {
		if b {
			sources++
		}
	}
	if sources > 1 {
		return nil, errors.New("tensor data given in more than one of raw_data, typed fields and external data")
	}
	switch {
	case external:
		if ext == nil {
			return nil, errors.New("external data is not available here (no model directory)")
		}
		loc, off, length, hasLen, err := parseExternal(tp.external)
		if err != nil {
			return nil, err
		}
		data, err := ext.external(loc, off, length, hasLen)
		if err != nil {
			return nil, err
		}
		if int64(len(data)) != nbytes {
			return nil, fmt.Errorf("%v%v tensor has %d bytes of external data, want %d", dt, t.Shape, len(data), nbytes)
		}
		t.Data = data[:len(data):len(data)]
	case tp.hasRaw:
		if int64(len(tp.raw)) != nbytes {
			return nil, fmt.Errorf("%v%v tensor has %d bytes of raw_data, want %d", dt, t.Shape, len(tp.raw), nbytes)
		}
		// Zero-copy: the tensor aliases the model bytes; capacity is capped so
		// that an append can never write into the mapping.
		t.Data = tp.raw[:len(tp.raw):len(tp.raw)]
	default:
		if int64(typed) != n {
			return nil, fmt.Errorf("%v%v tensor has %d values in %s, want %d", dt, t.Shape, typed, field, n)
		}
		t.Data = ir.AlignedBytes(int(nbytes))
		fillTyped(t, tp)
	}
	return t, nil
}

// fillTyped copies the typed-field values of tp into t.Data.
func fillTyped(t *ir.Tensor, tp *tensorProto) {
	d := t.Data
	le := binary.LittleEndian
	switch t.DType {
	case ir.Float32:
		for i, v := range tp.floatData {
			le.PutUint32(d[i*4:], v)
		}
	case ir.Float64:
		for i, v := range tp.doubleData {
			le.PutUint64(d[i*8:], v)
		}
	case ir.Int64:
		for i, v := range tp.int64Data {
			le.PutUint64(d[i*8:], uint64(v))
		}
	case ir.Uint64:
		for i, v := range tp.uint64Data {
			le.PutUint64(d[i*8:], uint64(v))
		}
	case ir.Uint32:
		for i, v := range tp.uint64Data {
			le.PutUint32(d[i*4:], uint32(v))
		}
	case ir.Int32:
		for i, v := range tp.int32Data {
			le.PutUint32(d[i*4:], uint32(v))
		}
	case ir.Int16, ir.Uint16, ir.Float16, ir.BFloat16:
		// float16/bfloat16 values travel as their bit patterns.
		for i, v := range tp.int32Data {
			le.PutUint16(d[i*2:], uint16(v))
		}
	case ir.Bool:
		for i, v := range tp.int32Data {
			if v != 0 {
				d[i] = 1
			}
		}
	default: // int8, uint8
		for i, v := range tp.int32Data {
			d[i] = byte(v)
		}
	}
}

func parseExternal(entries []kv) (loc string, off, length int64, hasLen bool, err error) {
	for _, e := range entries {
		switch e.key {
		case "location":
			loc = e.value
		case "offset", "length":
			v, perr := strconv.ParseInt(e.value, 10, 64)
			if perr != nil || v < 0 {
				return "", 0, 0, false, fmt.Errorf("external data %s %q is not a non-negative integer", e.key, e.value)
			}
			if e.key == "offset" {
				off = v
			} else {
				length, hasLen = v, true
			}
		}
	}
	if loc == "" {
		return "", 0, 0, false, errors.New("external data without a location")
	}
	return loc, off, length, hasLen, nil
}

// ReadTensor decodes one serialized TensorProto (the ONNX backend-test
// input_N.pb/output_N.pb files) and returns it with its name. The tensor's
// raw data aliases data. External data is not allowed here.
func ReadTensor(data []byte) (*ir.Tensor, string, error) {
	tp, err := decodeTensor(data)
	if err != nil {
		return nil, "", fmt.Errorf("onnx: %w", err)
	}
	t, err := convertTensor(tp, nil)
	if err != nil {
		return nil, tp.name, fmt.Errorf("onnx: %w", err)
	}
	return t, tp.name, nil
}

// ReadTensorFile reads a file holding one serialized TensorProto. A file that
// holds a SequenceProto or another non-tensor value may fail with an error
// wrapping ir.ErrUnsupported.
func ReadTensorFile(path string) (*ir.Tensor, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("onnx: %w", err)
	}
	t, name, err := ReadTensor(data)
	if err != nil {
		if looksLikeSequence(data) {
			return nil, "", fmt.Errorf("onnx: %s: sequence/map/optional values: %w", path, ir.ErrUnsupported)
		}
		return nil, "", fmt.Errorf("onnx: %s: %w", path, errors.Unwrap(err))
	}
	return t, name, nil
}

// looksLikeSequence reports whether data decodes as a SequenceProto or
// OptionalProto (tensor_values = 3 holding TensorProtos, elem_type = 2).
func looksLikeSequence(data []byte) bool {
	hasElemType := false
	ok := walk(data, func(f field) error {
		switch f.num {
		case 1:
			if f.typ != 2 {
				return errors.New("no")
			}
		case 2:
			if f.typ != 0 || f.u > 5 {
				return errors.New("no")
			}
			hasElemType = true
		}
		return nil
	}) == nil
	return ok && hasElemType
}
