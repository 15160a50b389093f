package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// allValues is one metadata entry of every type, including nested arrays.
func allValues() []KV {
	return []KV{
		{"general.architecture", Value{TypeString, "llama"}},
		{"u8", Value{TypeUint8, uint8(200)}},
		{"i8", Value{TypeInt8, int8(-5)}},
		{"u16", Value{TypeUint16, uint16(60000)}},
		{"i16", Value{TypeInt16, int16(-30000)}},
		{"u32", Value{TypeUint32, uint32(4000000000)}},
		{"i32", Value{TypeInt32, int32(-2000000000)}},
		{"f32", Value{TypeFloat32, float32(1e-5)}},
		{"bool", Value{TypeBool, true}},
		{"u64", Value{TypeUint64, uint64(1) << 60}},
		{"i64", Value{TypeInt64, int64(-1) << 60}},
		{"f64", Value{TypeFloat64, math.Pi}},
		{"empty", Value{TypeString, ""}},
		{"tokens", Value{TypeArray, Array{TypeString, []string{"<s>", "</s>", "▁the", ""}}}},
		{"scores", Value{TypeArray, Array{TypeFloat32, []float32{0, -1.5, 2}}}},
		{"types", Value{TypeArray, Array{TypeInt32, []int32{1, 3, 6}}}},
		{"flags", Value{TypeArray, Array{TypeBool, []bool{true, false}}}},
		{"bytes", Value{TypeArray, Array{TypeUint8, []uint8{1, 2, 3}}}},
		{"i8s", Value{TypeArray, Array{TypeInt8, []int8{-1, 2}}}},
		{"u16s", Value{TypeArray, Array{TypeUint16, []uint16{7}}}},
		{"i16s", Value{TypeArray, Array{TypeInt16, []int16{-7}}}},
		{"u32s", Value{TypeArray, Array{TypeUint32, []uint32{9, 10}}}},
		{"u64s", Value{TypeArray, Array{TypeUint64, []uint64{1 << 40}}}},
		{"i64s", Value{TypeArray, Array{TypeInt64, []int64{-1 << 40}}}},
		{"f64s", Value{TypeArray, Array{TypeFloat64, []float64{0.25}}}},
		{"none", Value{TypeArray, Array{TypeUint32, []uint32{}}}},
		{"nested", Value{TypeArray, Array{TypeArray, []Array{
			{TypeString, []string{"a", "b"}},
			{TypeArray, []Array{{TypeInt64, []int64{42}}}},
		}}}},
	}
}

// testTensors gives one tensor of every writable dtype, filled from
// random values (quantized ones by the codecs).
func testTensors(t *testing.T) map[string]*ir.Tensor {
	rng := rand.New(rand.NewPCG(7, 8))
	randF := func(shape ...int64) *ir.Tensor {
		vals := make([]float32, ir.NumElements(shape))
		for i := range vals {
			vals[i] = float32(rng.NormFloat64())
		}
		return ir.FromFloat32(shape, vals)
	}
	out := map[string]*ir.Tensor{}
	out["f32"] = randF(3, 5)
	for _, dt := range []ir.DType{ir.Float16, ir.BFloat16, ir.Float64, ir.Int8, ir.Int16, ir.Int32, ir.Int64} {
		src := randF(2, 3, 7)
		tt := ir.NewTensor(dt, src.Shape)
		for i := 0; i < src.Len(); i++ {
			tt.SetFloat64(i, src.Float64(i)*10)
		}
		out[dt.String()] = tt
	}
	for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0, ir.Q4_1, ir.Q5_0, ir.Q5_1, ir.Q4_K} {
		q, err := quant.Quantize(randF(4, 512), dt)
		require.NoError(t, err)
		out[dt.String()] = q
	}
	for _, dt := range []ir.DType{ir.Q5_K, ir.Q6_K} { // no encoder: any bytes are valid blocks
		q := ir.NewTensor(dt, []int64{2, 256})
		for i := range q.Data {
			q.Data[i] = byte(rng.Uint32())
		}
		out[dt.String()] = q
	}
	out["scalar"] = ir.FromFloat32(nil, []float32{3})
	out["vector"] = randF(1, 1, 1, 9)
	return out
}

var tensorOrder = []string{"f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k", "scalar", "vector"}

func buildFile(t *testing.T, align uint32) ([]byte, []KV, map[string]*ir.Tensor) {
	w := NewWriter()
	kvs := allValues()
	if align != 0 {
		kvs = append(kvs, KV{KeyAlignment, Value{TypeUint32, align}})
	}
	for _, kv := range kvs {
		require.NoError(t, w.Set(kv.Key, kv.Value))
	}
	ts := testTensors(t)
	for _, name := range tensorOrder {
		require.NoError(t, w.AddTensor(name, ts[name]))
	}
	b, err := w.Bytes()
	require.NoError(t, err)
	return b, kvs, ts
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []uint32{0, 64, 1} {
		b, kvs, ts := buildFile(t, align)
		f, err := Parse(b)
		require.NoError(t, err)
		require.Equal(t, uint32(3), f.Version)
		require.Equal(t, kvs, f.Metadata)
		wantAlign := int64(align)
		if align == 0 {
			wantAlign = DefaultAlignment
		}
		require.Equal(t, wantAlign, f.Alignment)
		require.Zero(t, f.DataOffset%wantAlign)
		require.Len(t, f.Tensors, len(tensorOrder))
		for i, name := range tensorOrder {
			ti := f.Tensors[i]
			require.Equal(t, name, ti.Name)
			want := ts[name]
			got, err := f.Tensor(name)
			require.NoError(t, err)
			if name == "scalar" {
				require.Equal(t, []int64{1}, got.Shape)
			} else {
				require.Equal(t, want.Shape, got.Shape, name)
			}
			require.Equal(t, want.DType, got.DType, name)
			require.Equal(t, want.Data, got.Data, name)
			require.Zero(t, ti.Offset%wantAlign, name)
			require.Equal(t, int64(len(want.Data)), ti.Size)
		}
		// Writing the parsed file again gives the same bytes.
		w := NewWriter()
		for _, kv := range f.Metadata {
			require.NoError(t, w.Set(kv.Key, kv.Value))
		}
		for _, ti := range f.Tensors {
			tt, err := f.Tensor(ti.Name)
			require.NoError(t, err)
			require.NoError(t, w.AddTensor(ti.Name, tt))
		}
		b2, err := w.Bytes()
		require.NoError(t, err)
		if align != 0 { // the scalar comes back as [1], same bytes either way
			require.Equal(t, b, b2)
		}
	}
}

// TestLayout checks the bytes of a small file against the format by hand.
func TestLayout(t *testing.T) {
	w := NewWriter()
	require.NoError(t, w.Set("k", uint32(7)))
	// A [2, 3] f32 tensor: GGUF dims are innermost first, so [3, 2].
	require.NoError(t, w.AddTensor("w", ir.FromFloat32([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})))
	b, err := w.Bytes()
	require.NoError(t, err)
	le := binary.LittleEndian
	require.Equal(t, "GGUF", string(b[:4]))
	require.Equal(t, uint32(3), le.Uint32(b[4:]))
	require.Equal(t, uint64(1), le.Uint64(b[8:]))  // tensors
	require.Equal(t, uint64(1), le.Uint64(b[16:])) // kvs
	require.Equal(t, uint64(1), le.Uint64(b[24:])) // key length
	require.Equal(t, byte('k'), b[32])
	require.Equal(t, uint32(TypeUint32), le.Uint32(b[33:]))
	require.Equal(t, uint32(7), le.Uint32(b[37:]))
	p := 41
	require.Equal(t, uint64(1), le.Uint64(b[p:])) // name length
	require.Equal(t, byte('w'), b[p+8])
	p += 9
	require.Equal(t, uint32(2), le.Uint32(b[p:]))   // n_dims
	require.Equal(t, uint64(3), le.Uint64(b[p+4:])) // ne[0]: the row length
	require.Equal(t, uint64(2), le.Uint64(b[p+12:]))
	require.Equal(t, uint32(0), le.Uint32(b[p+20:])) // GGML_TYPE_F32
	require.Equal(t, uint64(0), le.Uint64(b[p+24:])) // offset
	p += 32                                          // 82: data starts at 96
	require.Len(t, b, 96+32)
	require.Equal(t, make([]byte, 96-p), b[p:96])
	require.Equal(t, float32(4), math.Float32frombits(le.Uint32(b[96+12:])))
	f, err := Parse(b)
	require.NoError(t, err)
	require.Equal(t, int64(96), f.DataOffset)
	require.Equal(t, []int64{2, 3}, f.Tensors[0].Shape)
}

func TestOpenZeroCopy(t *testing.T) {
	b, _, ts := buildFile(t, 0)
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, path, f.Path)
	first, err := f.Tensor("f32")
	require.NoError(t, err)
	require.Equal(t, ts["f32"].Data, first.Data)
	// The tensor's data is the file's bytes in place, not a copy.
	want := unsafe.Pointer(&f.data[f.DataOffset+f.Tensors[0].Offset])
	require.Equal(t, want, unsafe.Pointer(unsafe.SliceData(first.Data)))
	require.Equal(t, len(first.Data), cap(first.Data), "capacity is limited to the tensor")
	// Mapped data is aligned for direct float access.
	require.Zero(t, uintptr(unsafe.Pointer(unsafe.SliceData(first.Data)))%uintptr(DefaultAlignment))
	require.NoError(t, f.Close())
	_, err = f.Tensor("f32")
	require.ErrorContains(t, err, "closed")
}

func TestGetters(t *testing.T) {
	b, _, _ := buildFile(t, 0)
	f, err := Parse(b)
	require.NoError(t, err)
	s, err := f.String("general.architecture")
	require.NoError(t, err)
	require.Equal(t, "llama", s)
	require.Equal(t, "llama", f.Architecture())
	u, err := f.Uint32("u32")
	require.NoError(t, err)
	require.Equal(t, uint32(4000000000), u)
	x, err := f.Float32("f32")
	require.NoError(t, err)
	require.Equal(t, float32(1e-5), x)
	toks, err := f.Strings("tokens")
	require.NoError(t, err)
	require.Equal(t, []string{"<s>", "</s>", "▁the", ""}, toks)
	sc, err := f.Float32s("scores")
	require.NoError(t, err)
	require.Equal(t, []float32{0, -1.5, 2}, sc)
	n, err := f.Int("i16")
	require.NoError(t, err)
	require.Equal(t, int64(-30000), n)
	_, err = f.String("u32")
	require.EqualError(t, err, `gguf: <memory>: metadata "u32" is uint32, want string`)
	_, err = f.Strings("scores")
	require.EqualError(t, err, `gguf: <memory>: metadata "scores" is an array of float32, want string`)
	_, err = f.Uint32("missing")
	require.ErrorIs(t, err, ErrNoKey)
	_, err = f.Int("f64")
	require.ErrorContains(t, err, "want an integer")
	_, err = f.Tensor("nope")
	require.ErrorContains(t, err, `no tensor "nope"`)
}

func TestValueSummary(t *testing.T) {
	v, err := ValueOf([]int32{1, 2, 3, 4, 5})
	require.NoError(t, err)
	require.Equal(t, "[1, 2, 3, ... (5 total)]", v.Summary(3))
	v, err = ValueOf([]string{"a", "b"})
	require.NoError(t, err)
	require.Equal(t, `["a", "b"]`, v.String())
	_, err = ValueOf(3) // int has no GGUF type
	require.Error(t, err)
	_, err = ValueOf(Value{TypeUint32, "x"})
	require.Error(t, err)
	_, err = ValueOf(Array{TypeUint32, []int32{1}})
	require.Error(t, err)
}

func TestWriterErrors(t *testing.T) {
	w := NewWriter()
	require.ErrorContains(t, w.Set(KeyAlignment, uint32(3)), "power-of-two")
	require.ErrorContains(t, w.Set(KeyAlignment, int32(32)), "power-of-two")
	require.ErrorIs(t, w.AddTensor("b", ir.NewTensor(ir.Bool, []int64{2})), ir.ErrUnsupported)
	require.ErrorContains(t, w.AddTensor("r5", ir.NewTensor(ir.Float32, []int64{1, 1, 1, 1, 2})), "at most 4")
	require.NoError(t, w.AddTensor("a", ir.NewTensor(ir.Float32, []int64{2})))
	require.ErrorContains(t, w.AddTensor("a", ir.NewTensor(ir.Float32, []int64{2})), "twice")
	require.ErrorContains(t, w.AddTensor("", ir.NewTensor(ir.Float32, []int64{2})), "name")
	require.ErrorContains(t, w.AddTensor("bad", &ir.Tensor{DType: ir.Float32, Shape: []int64{2}, Data: make([]byte, 3)}), "bytes")
	// Set replaces in place.
	require.NoError(t, w.Set("x", uint8(1)))
	require.NoError(t, w.Set("y", uint8(2)))
	require.NoError(t, w.Set("x", "now a string"))
	b, err := w.Bytes()
	require.NoError(t, err)
	f, err := Parse(b)
	require.NoError(t, err)
	require.Equal(t, []KV{{"x", Value{TypeString, "now a string"}}, {"y", Value{TypeUint8, uint8(2)}}}, f.Metadata)
}

func TestDeterministic(t *testing.T) {
	a, _, _ := buildFile(t, 0)
	b, _, _ := buildFile(t, 0)
	require.True(t, bytes.Equal(a, b))
}

// TestUnsupportedGGMLType: a Q2_K tensor parses (so inspect can list it)
// but cannot be loaded; an unknown type id fails Parse naming the tensor.
func TestUnsupportedGGMLType(t *testing.T) {
	w := NewWriter()
	require.NoError(t, w.AddTensor("t", ir.NewTensor(ir.Q4_K, []int64{1, 256})))
	b, err := w.Bytes()
	require.NoError(t, err)
	typeAt := bytes.Index(b, []byte{'t'}) + 1 + 4 + 16
	require.Equal(t, uint32(12), binary.LittleEndian.Uint32(b[typeAt:]))
	// Q2_K blocks are 84 bytes: the 144-byte region still holds them.
	binary.LittleEndian.PutUint32(b[typeAt:], 10)
	f, err := Parse(b)
	require.NoError(t, err)
	require.Equal(t, ir.Invalid, f.Tensors[0].Type)
	require.Equal(t, "q2_k", f.Tensors[0].GGMLType.String())
	require.Equal(t, int64(84), f.Tensors[0].Size)
	_, err = f.Tensor("t")
	require.ErrorIs(t, err, ir.ErrUnsupported)
	require.ErrorContains(t, err, `tensor "t"`)
	require.ErrorContains(t, err, "q2_k (10)")
	binary.LittleEndian.PutUint32(b[typeAt:], 99)
	_, err = Parse(b)
	require.ErrorIs(t, err, ir.ErrUnsupported)
	require.ErrorContains(t, err, `tensor 0 "t": unsupported: unknown ggml type id 99`)
}

// TestDropMetadata: after DropMetadata no key is found, and the tensors
// still read as before.
func TestDropMetadata(t *testing.T) {
	b, _, _ := buildFile(t, 0)
	f, err := Parse(b)
	require.NoError(t, err)
	require.NotEmpty(t, f.Tensors)
	name := f.Tensors[0].Name
	before, err := f.Tensor(name)
	require.NoError(t, err)
	f.DropMetadata()
	require.Empty(t, f.Metadata)
	_, ok := f.Get("general.architecture")
	require.False(t, ok)
	require.Equal(t, "", f.Architecture())
	_, err = f.Strings("tokens")
	require.ErrorIs(t, err, ErrNoKey)
	after, err := f.Tensor(name)
	require.NoError(t, err)
	require.Equal(t, before.Data, after.Data)
	require.Equal(t, before.Shape, after.Shape)
}
