package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

func TestTypedFields(t *testing.T) {
	cases := []struct {
		name string
		tp   pb
		dt   ir.DType
		want []byte // little-endian data
	}{
		{"float", tensorPB("", dtFloat, 2).packedF32(4, 1.5, -2), ir.Float32,
			[]byte{0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}},
		{"float unpacked", tensorPB("", dtFloat, 2).f32(4, 1.5).f32(4, -2), ir.Float32,
			[]byte{0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}},
		{"double", tensorPB("", dtDouble, 1).packedF64(10, 1), ir.Float64,
			[]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{"int64", tensorPB("", dtInt64, 2).packedVarints(7, -1, 258), ir.Int64,
			[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 1, 0, 0, 0, 0, 0, 0}},
		{"int64 unpacked", tensorPB("", dtInt64, 1).varint(7, 5), ir.Int64,
			[]byte{5, 0, 0, 0, 0, 0, 0, 0}},
		{"int32", tensorPB("", dtInt32, 2).packedVarints(5, -2, 7), ir.Int32,
			[]byte{0xfe, 0xff, 0xff, 0xff, 7, 0, 0, 0}},
		{"int8", tensorPB("", dtInt8, 3).packedVarints(5, -1, 127, -128), ir.Int8,
			[]byte{0xff, 0x7f, 0x80}},
		{"uint8", tensorPB("", dtUint8, 2).packedVarints(5, 0, 255), ir.Uint8, []byte{0, 255}},
		{"int16", tensorPB("", dtInt16, 1).packedVarints(5, -3), ir.Int16, []byte{0xfd, 0xff}},
		{"uint16", tensorPB("", dtUint16, 1).packedVarints(5, 65535), ir.Uint16, []byte{0xff, 0xff}},
		{"bool", tensorPB("", dtBool, 3).packedVarints(5, 1, 0, 1), ir.Bool, []byte{1, 0, 1}},
		// float16 1.0 = 0x3c00, bfloat16 1.0 = 0x3f80: bit patterns in int32_data
		{"float16", tensorPB("", dtFloat16, 1).packedVarints(5, 0x3c00), ir.Float16, []byte{0x00, 0x3c}},
		{"bfloat16", tensorPB("", dtBFloat16, 1).packedVarints(5, 0x3f80), ir.BFloat16, []byte{0x80, 0x3f}},
		{"uint32", tensorPB("", dtUint32, 1).packedVarints(11, 0xfffffffe), ir.Uint32, []byte{0xfe, 0xff, 0xff, 0xff}},
		{"uint64", tensorPB("", dtUint64, 1).packedVarints(11, -1), ir.Uint64,
			[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"scalar", tensorPB("", dtInt64).packedVarints(7, 9), ir.Int64, []byte{9, 0, 0, 0, 0, 0, 0, 0}},
		{"empty", tensorPB("", dtFloat, 0, 3), ir.Float32, []byte{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tt, _, err := ReadTensor(tc.tp)
			require.NoError(t, err)
			require.Equal(t, tc.dt, tt.DType)
			require.Equal(t, tc.want, tt.Data)
			require.NoError(t, tt.Check())
		})
	}
}

func TestRawDataZeroCopy(t *testing.T) {
	raw := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	buf := rawTensor("w", dtFloat, []int64{3}, raw)
	tt, name, err := ReadTensor(buf)
	require.NoError(t, err)
	require.Equal(t, "w", name)
	require.Equal(t, raw, tt.Data)
	require.Equal(t, []int64{3}, tt.Shape)
	requireInside(t, tt.Data, buf)
	require.Equal(t, len(tt.Data), cap(tt.Data), "capacity must be capped so appends cannot write into the mapping")
}

// requireInside asserts that sub's bytes lie inside buf (no copy was made).
func requireInside(t *testing.T, sub, buf []byte) {
	t.Helper()
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	require.True(t, p >= lo && p+uintptr(len(sub)) <= lo+uintptr(len(buf)), "tensor data was copied")
}

func TestTensorErrors(t *testing.T) {
	cases := []struct {
		name        string
		tp          pb
		want        string
		unsupported bool
	}{
		{"raw too short", rawTensor("", dtFloat, []int64{2}, []byte{1, 2, 3}), "3 bytes of raw_data, want 8", false},
		{"raw too long", rawTensor("", dtInt8, []int64{2}, []byte{1, 2, 3}), "3 bytes of raw_data, want 2", false},
		{"typed count", tensorPB("", dtFloat, 3).packedF32(4, 1), "1 values in float_data, want 3", false},
		{"wrong field", tensorPB("", dtFloat, 1).packedVarints(7, 1), "other than float_data", false},
		{"two sources", tensorPB("", dtFloat, 1).packedF32(4, 1).bytes(9, []byte{0, 0, 0, 0}), "more than one", false},
		{"missing data", tensorPB("", dtFloat, 2), "0 values in float_data, want 2", false},
		{"negative dim", tensorPB("", dtFloat, -1), "negative dimension", false},
		{"huge dims", tensorPB("", dtFloat, 1<<40, 1<<40), "too large", false},
		{"bad dtype", tensorPB("", 99, 1), "invalid data type 99", false},
		{"undefined dtype", tensorPB("", 0, 1), "undefined data type", false},
		{"string", tensorPB("", dtString, 1).bytes(6, []byte("hi")), "string", true},
		{"complex", tensorPB("", dtComplex64, 1), "complex64", true},
		{"float8", tensorPB("", 17, 1), "float8", true},
		{"segment", tensorPB("", dtFloat, 1).packedF32(4, 1).msg(3, pb{}.varint(1, 0)), "segmented", true},
		{"external without dir", tensorPB("x", dtFloat, 1).msg(13, pb{}.str(1, "location").str(2, "w.bin")).varint(14, 1), "external data", false},
		{"truncated", rawTensor("", dtFloat, []int64{2}, make([]byte, 8))[:7], "malformed", false},
		{"bad wire type", pb{}.str(2, "x"), "wire type", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadTensor(tc.tp)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.Equal(t, tc.unsupported, errors.Is(err, ir.ErrUnsupported), "%v", err)
		})
	}
}

func TestReadTensorFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "input_0.pb")
	require.NoError(t, os.WriteFile(p, i64Tensor("x", []int64{2}, 4, 5), 0o644))
	tt, name, err := ReadTensorFile(p)
	require.NoError(t, err)
	require.Equal(t, "x", name)
	require.Equal(t, []int64{4, 5}, tt.Int64s())

	// A SequenceProto (name=1, elem_type=2, tensor_values=3) is refused as unsupported.
	seq := pb{}.str(1, "s").varint(2, 1).msg(3, f32Tensor("", []int64{1}, 1))
	q := filepath.Join(dir, "seq.pb")
	require.NoError(t, os.WriteFile(q, seq, 0o644))
	_, _, err = ReadTensorFile(q)
	require.ErrorIs(t, err, ir.ErrUnsupported)

	_, _, err = ReadTensorFile(filepath.Join(dir, "missing.pb"))
	require.Error(t, err)
}

// externalModel builds a model whose initializer w lives in an external file.
func externalModel(location string, offset, length int64) pb {
	w := tensorPB("w", dtFloat, 2).varint(14, 1).
		msg(13, pb{}.str(1, "location").str(2, location)).
		msg(13, pb{}.str(1, "offset").str(2, itoa(offset)))
	if length >= 0 {
		w = w.msg(13, pb{}.str(1, "length").str(2, itoa(length)))
	}
	return modelPB(13, graphPB("g",
		gInit(w),
		gIn(vi("x", dtFloat, 2)),
		gNode(nodePB("Add", "add", []string{"x", "w"}, []string{"y"})),
		gOut(vi("y", dtFloat, 2)),
	))
}

func itoa(v int64) string {
	s := ""
	if v == 0 {
		return "0"
	}
	for v > 0 {
		s = string(rune('0'+v%10)) + s
		v /= 10
	}
	return s
}

func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	// 4 bytes of padding, then 1.0f and 2.0f.
	data := []byte{9, 9, 9, 9, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "w.bin"), data, 0o644))
	write := func(name string, m pb) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, m, 0o644))
		return p
	}

	m, err := Load(write("ok.onnx", externalModel("sub/w.bin", 4, 8)))
	require.NoError(t, err)
	w := m.Graph.Consts[0].Const
	require.Equal(t, []float32{1, 2}, w.Float32s())
	require.NoError(t, ir.Verify(m.Graph))
	require.NoError(t, m.Close())

	// Without a length, the data runs to the end of the file.
	m, err = Load(write("nolen.onnx", externalModel("sub/w.bin", 4, -1)))
	require.NoError(t, err)
	require.NoError(t, m.Close())

	// Parse with a directory resolves too; without one it is an error.
	buf := externalModel("sub/w.bin", 4, 8)
	m, err = Parse(buf, dir)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	_, err = Parse(buf, "")
	require.ErrorContains(t, err, "external data")

	bad := []struct {
		name string
		m    pb
		want string
	}{
		{"escape", externalModel("../w.bin", 0, 8), "escapes the model directory"},
		{"absolute", externalModel("/etc/passwd", 0, 8), "escapes the model directory"},
		{"short", externalModel("sub/w.bin", 8, 4), "4 bytes of external data, want 8"},
		{"beyond", externalModel("sub/w.bin", 8, 8), "beyond the file"},
		{"offset beyond", externalModel("sub/w.bin", 100, -1), "beyond the file"},
		{"missing file", externalModel("nope.bin", 0, 8), "external data"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(write(tc.name+".onnx", tc.m))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.True(t, strings.HasPrefix(err.Error(), "onnx: "), err.Error())
			require.NotErrorIs(t, err, ir.ErrUnsupported)
		})
	}

	// A symlink that leaves the directory is refused as well.
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "w.bin"), data, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "w.bin"), filepath.Join(dir, "link.bin")))
	_, err = Load(write("link.onnx", externalModel("link.bin", 4, 8)))
	require.Error(t, err)
}

func TestDTypeMapping(t *testing.T) {
	for code := int64(1); code <= 23; code++ {
		dt, err := DType(code)
		if err != nil {
			require.ErrorIs(t, err, ir.ErrUnsupported, "code %d", code)
			continue
		}
		require.Equal(t, code, ONNXDType(dt))
	}
	_, err := DType(0)
	require.Error(t, err)
	require.NotErrorIs(t, err, ir.ErrUnsupported)
}

func TestLoadMapsFile(t *testing.T) {
	raw := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}
	m := modelPB(13, graphPB("g",
		gInit(rawTensor("w", dtFloat, []int64{2}, raw)),
		gIn(vi("x", dtFloat, 2)),
		gNode(nodePB("Mul", "mul", []string{"x", "w"}, []string{"y"})),
		gOut(vi("y", dtFloat, 2)),
	))
	p := filepath.Join(t.TempDir(), "model.onnx")
	require.NoError(t, os.WriteFile(p, m, 0o644))
	mod, err := Load(p)
	require.NoError(t, err)
	require.Equal(t, p, mod.Path)
	w := mod.Graph.Consts[0].Const
	require.Equal(t, []float32{1, 2}, w.Float32s())
	requireInside(t, w.Data, mod.data)
	require.NoError(t, ir.Verify(mod.Graph))
	require.NoError(t, mod.Close())
	require.NoError(t, mod.Close(), "Close is idempotent")

	_, err = Load(filepath.Join(t.TempDir(), "missing.onnx"))
	require.Error(t, err)
	// Errors name the file.
	bad := filepath.Join(t.TempDir(), "bad.onnx")
	require.NoError(t, os.WriteFile(bad, []byte{0xff, 0xff}, 0o644))
	_, err = Load(bad)
	require.ErrorContains(t, err, "onnx: "+bad+": ")
}
