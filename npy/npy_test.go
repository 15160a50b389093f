package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/weftrt/weft/ir"
)

// The fixtures in testdata were written by NumPy 1.24 (np.save and
// numpy.lib.format.write_array); the expected values are the arrays that
// produced them.
func TestReadNumPyFixtures(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		file  string
		dt    ir.DType
		shape []int64
		f     []float64 // expected values via Float64 (floats, small ints)
		u     []uint64  // expected values via Uint64 (u64)
		i     []int64   // expected values via Int64 (i64)
	}{
		{file: "f32_2x3.npy", dt: ir.Float32, shape: []int64{2, 3}, f: []float64{-1, -0.5, 0, 0.5, 1, 1.5}},
		{file: "f64_scalar.npy", dt: ir.Float64, shape: []int64{}, f: []float64{3.25}},
		{file: "f16_4.npy", dt: ir.Float16, shape: []int64{4}, f: []float64{1, -2.5, 65504, inf}},
		{file: "i8_5.npy", dt: ir.Int8, shape: []int64{5}, f: []float64{-128, -1, 0, 1, 127}},
		{file: "i16_3.npy", dt: ir.Int16, shape: []int64{3}, f: []float64{-32768, 7, 32767}},
		{file: "i32_2x2.npy", dt: ir.Int32, shape: []int64{2, 2}, f: []float64{-5, 6, 2147483647, -2147483648}},
		{file: "i64_3.npy", dt: ir.Int64, shape: []int64{3}, i: []int64{math.MinInt64, 0, math.MaxInt64}},
		{file: "u8_4.npy", dt: ir.Uint8, shape: []int64{4}, f: []float64{0, 1, 200, 255}},
		{file: "u16_2.npy", dt: ir.Uint16, shape: []int64{2}, f: []float64{0, 65535}},
		{file: "u32_2.npy", dt: ir.Uint32, shape: []int64{2}, f: []float64{1, 4294967295}},
		{file: "u64_2.npy", dt: ir.Uint64, shape: []int64{2}, u: []uint64{0, math.MaxUint64}},
		{file: "bool_3.npy", dt: ir.Bool, shape: []int64{3}, f: []float64{1, 0, 1}},
		{file: "f32_empty_0x3.npy", dt: ir.Float32, shape: []int64{0, 3}, f: []float64{}},
		{file: "f32_v2.npy", dt: ir.Float32, shape: []int64{4}, f: []float64{0, 1, 2, 3}},
		{file: "f32_v3.npy", dt: ir.Float32, shape: []int64{4}, f: []float64{0, 1, 2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, err := ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if got.DType != tc.dt || !reflect.DeepEqual(got.Shape, tc.shape) {
				t.Fatalf("got %v%v, want %v%v", got.DType, got.Shape, tc.dt, tc.shape)
			}
			if err := got.Check(); err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.f {
				if v := got.Float64(k); v != want {
					t.Errorf("element %d = %v, want %v", k, v, want)
				}
			}
			for k, want := range tc.u {
				if v := got.Uint64(k); v != want {
					t.Errorf("element %d = %v, want %v", k, v, want)
				}
			}
			for k, want := range tc.i {
				if v := got.Int64(k); v != want {
					t.Errorf("element %d = %v, want %v", k, v, want)
				}
			}
			if n := len(tc.f) + len(tc.u) + len(tc.i); n != got.Len() {
				t.Errorf("%d elements, want %d", got.Len(), n)
			}
		})
	}
}

// Write must produce exactly the bytes NumPy writes for version 1.0 files.
func TestWriteMatchesNumPy(t *testing.T) {
	for _, file := range []string{"f32_2x3.npy", "f64_scalar.npy", "f16_4.npy", "i8_5.npy", "i64_3.npy",
		"u64_2.npy", "bool_3.npy", "f32_empty_0x3.npy", "i32_2x2.npy", "u16_2.npy"} {
		want, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		tt, err := Read(bytes.NewReader(want))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, tt); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s: Write differs from NumPy:\n got %q\nwant %q", file, buf.Bytes(), want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	shapes := [][]int64{{}, {1}, {7}, {0}, {2, 3}, {3, 1, 5}, {2, 0, 4}}
	for dt := range descrs {
		for _, shape := range shapes {
			in := ir.NewTensor(dt, shape)
			for i := range in.Data {
				in.Data[i] = byte(i*37 + 11)
			}
			if dt == ir.Bool {
				for i := range in.Data {
					in.Data[i] &= 1
				}
			}
			var buf bytes.Buffer
			if err := Write(&buf, in); err != nil {
				t.Fatalf("%v%v: %v", dt, shape, err)
			}
			if buf.Len()%64 != len(in.Data)%64 {
				t.Errorf("%v%v: data does not start on a 64-byte boundary", dt, shape)
			}
			out, err := Read(&buf)
			if err != nil {
				t.Fatalf("%v%v: %v", dt, shape, err)
			}
			if out.DType != dt || !reflect.DeepEqual(out.Shape, in.Shape) || !bytes.Equal(out.Data, in.Data) {
				t.Errorf("%v%v: round trip gave %v%v", dt, shape, out.DType, out.Shape)
			}
			if buf.Len() != 0 {
				t.Errorf("%v%v: %d bytes left unread", dt, shape, buf.Len())
			}
		}
	}
}

func TestWriteBFloat16AsFloat32(t *testing.T) {
	in := ir.FromFloat64(ir.BFloat16, []int64{3}, []float64{1.5, -2, 0.0078125})
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	if StoredAs(ir.BFloat16) != ir.Float32 || StoredAs(ir.Int8) != ir.Int8 {
		t.Error("StoredAs is wrong")
	}
	out, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if out.DType != ir.Float32 || !reflect.DeepEqual(out.Shape, []int64{3}) {
		t.Fatalf("got %v", out)
	}
	for i, want := range []float64{1.5, -2, 0.0078125} {
		if out.Float64(i) != want {
			t.Errorf("element %d = %v, want %v", i, out.Float64(i), want)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	bad := []*ir.Tensor{
		nil,
		{DType: ir.Float32, Shape: []int64{2}, Data: make([]byte, 4)},
		{DType: ir.String, Shape: []int64{1}},
		{DType: ir.Float32, Shape: []int64{-1}},
	}
	for i, tt := range bad {
		if err := Write(&bytes.Buffer{}, tt); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}

// npyBytes builds an .npy stream with the given version, header text and data.
func npyBytes(major byte, hdr string, data []byte) []byte {
	b := []byte(magic)
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	}
	b = append(b, hdr...)
	return append(b, data...)
}

func TestReadErrors(t *testing.T) {
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	good := fixture("f32_2x3.npy")
	hdr := func(d string) string { return d + "\n" }
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "empty input"},
		{"short preamble", []byte("\x93NUM"), "truncated preamble"},
		{"bad magic", []byte("PK\x03\x04 zip file here"), "bad magic"},
		{"version 4", npyBytes(1, "", nil)[:6:6], "truncated preamble"},
		{"unknown version", append([]byte(magic), 4, 0, 0, 0), "unsupported format version 4.0"},
		{"truncated header length", append([]byte(magic), 2, 0, 1), "truncated header length"},
		{"truncated header", good[:40], "truncated header"},
		{"huge header length", append([]byte(magic), 2, 0, 0xff, 0xff, 0xff, 0x7f), "implausibly large"},
		{"not a dict", npyBytes(1, hdr("[1, 2]"), nil), "want '{'"},
		{"missing shape", npyBytes(1, hdr("{'descr': '<f4', 'fortran_order': False}"), nil), `missing key "shape"`},
		{"unknown key", npyBytes(1, hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}"), nil), `unexpected key "x"`},
		{"duplicate key", npyBytes(1, hdr("{'descr': '<f4', 'descr': '<f4'}"), nil), "duplicate key"},
		{"bad bool", npyBytes(1, hdr("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}"), nil), "want True or False"},
		{"bad shape", npyBytes(1, hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}"), nil), "non-negative integer"},
		{"shape overflow", npyBytes(1, hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}"), nil), "out of range"},
		{"shape too large", npyBytes(1, hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"), nil), "too large"},
		{"unterminated", npyBytes(1, hdr("{'descr: '<f4'"), nil), "bad header"},
		{"trailing text", npyBytes(1, hdr("{'descr': '<f4', 'fortran_order': False, 'shape': ()} x"), nil), "trailing text"},
		{"structured dtype", npyBytes(1, hdr("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}"), nil), "structured dtypes"},
		{"fortran order", fixture("f32_fortran.npy"), "fortran_order is True"},
		{"big endian", fixture("f32_bigendian.npy"), "big-endian"},
		{"string dtype", fixture("u4_str.npy"), `unsupported dtype "<U2"`},
		{"complex dtype", npyBytes(1, hdr("{'descr': '<c8', 'fortran_order': False, 'shape': ()}"), nil), "unsupported dtype"},
		{"short data", good[:len(good)-3], "short data: f32[2 3] needs 24 bytes, file has 21"},
		{"no data", npyBytes(1, hdr("{'descr': '<i8', 'fortran_order': False, 'shape': (2,)}"), nil), "needs 16 bytes, file has 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "npy: ") {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestReadFileErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.npy")
	if err := os.WriteFile(p, []byte("not numpy"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p, filepath.Join(dir, "missing.npy")} {
		_, err := ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadFile(%s): error %v does not name the file", path, err)
		}
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir.npy"), ir.NewTensor(ir.Float32, nil)); err == nil {
		t.Error("WriteFile into a missing directory: no error")
	}
}

func TestWriteFileReadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.npy")
	in := ir.FromFloat32([]int64{2, 2}, []float32{1, 2, 3, 4})
	if err := WriteFile(p, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Data, in.Data) || !reflect.DeepEqual(out.Shape, in.Shape) {
		t.Errorf("got %v", out)
	}
}

func TestReadNormalizesBool(t *testing.T) {
	in := npyBytes(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n", []byte{0, 2, 255})
	out, err := Read(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Data, []byte{0, 1, 1}) {
		t.Errorf("bool data %v, want [0 1 1]", out.Data)
	}
}

func TestHeaderVariants(t *testing.T) {
	for _, h := range []string{
		`{"descr": "<f4", "fortran_order": False, "shape": (1,)}`,
		"{ 'shape' : ( 1 , ) , 'fortran_order' : False , 'descr' : '<f4' , }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (1L,), }",
		"{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }",
		"{'descr': 'f', 'fortran_order': False, 'shape': (1), }",
	} {
		out, err := Read(bytes.NewReader(npyBytes(1, h+"\n", []byte{0, 0, 0x80, 0x3f})))
		if err != nil {
			t.Errorf("%s: %v", h, err)
			continue
		}
		if out.DType != ir.Float32 || out.Float64(0) != 1 {
			t.Errorf("%s: got %v = %v", h, out, out.Float64(0))
		}
	}
}

// A header too long for a uint16 length switches to format 2.0.
func TestWriteLongHeaderUsesVersion2(t *testing.T) {
	shape := make([]int64, 30000) // "1, " each: a 90 kB header
	for i := range shape {
		shape[i] = 1
	}
	in := ir.FromFloat32(shape, []float32{42})
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	if b := buf.Bytes(); b[6] != 2 || (12+int(binary.LittleEndian.Uint32(b[8:])))%64 != 0 {
		t.Fatalf("version %d, header length %d", b[6], binary.LittleEndian.Uint32(b[8:]))
	}
	out, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Shape) != len(shape) || out.Float64(0) != 42 {
		t.Errorf("got rank %d, value %v", len(out.Shape), out.Float64(0))
	}
}
