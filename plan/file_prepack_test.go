package plan_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// constNamed returns the constant of g called name.
func constNamed(t testing.TB, g *ir.Graph, name string) *ir.Value {
	for _, v := range g.Consts {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no constant %q", name)
	return nil
}

// samplePacked is samplePlan with three blobs for two devices, given out of
// order: two packings of w (odd sizes, to exercise the alignment) and one
// of q.
func samplePacked(t testing.TB) (*plan.Plan, []plan.Prepacked) {
	p := samplePlan(t)
	w, q := constNamed(t, p.Graph, "w"), constNamed(t, p.Graph, "q")
	blob := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i*13)
		}
		return b
	}
	return p, []plan.Prepacked{
		{Device: "cpu", Value: w, Desc: "sgemm isa=avx2 k=4 n=2", Data: blob(100, 1)},
		{Device: "vulkan:0", Value: q, Desc: "blocks v1", Data: blob(7, 2)},
		{Device: "cpu", Value: w, Desc: "sgemm isa=avx512 k=4 n=2", Data: blob(130, 3)},
	}
}

func encodePacked(t testing.TB, p *plan.Plan, packed []plan.Prepacked) []byte {
	var buf bytes.Buffer
	require.NoError(t, plan.WritePrepacked(&buf, p, sampleMeta, packed))
	return buf.Bytes()
}

// TestPrepackedRoundTrip: blobs written with a plan come back in
// (device, value, descriptor) order, with their bytes, 64-byte aligned
// slices of the file's bytes; the file does not depend on the order they
// were given in; VerifyWeights covers them.
func TestPrepackedRoundTrip(t *testing.T) {
	p, packed := samplePacked(t)
	data := encodePacked(t, p, packed)
	rev := []plan.Prepacked{packed[2], packed[1], packed[0]}
	require.Equal(t, data, encodePacked(t, p, rev), "the bytes depend on the order of the blobs")
	require.Equal(t, uint16(plan.FormatVersion), binary.LittleEndian.Uint16(data[6:]))

	f, err := plan.Decode(data, "p.wplan")
	require.NoError(t, err)
	require.NoError(t, f.VerifyWeights())
	require.Len(t, f.Prepacked, 3)
	want := []plan.Prepacked{packed[2-2], packed[2], packed[1]} // cpu avx2 < cpu avx512 < vulkan:0
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	for i, got := range f.Prepacked {
		require.Equal(t, want[i].Device, got.Device)
		require.Equal(t, want[i].Value.Name, got.Value.Name)
		require.NotNil(t, got.Value.Const)
		require.Equal(t, want[i].Desc, got.Desc)
		require.Equal(t, want[i].Data, got.Data)
		require.Equal(t, len(got.Data), cap(got.Data), "capacity must be capped so appends cannot write into the mapping")
		a := uintptr(unsafe.Pointer(unsafe.SliceData(got.Data)))
		require.True(t, a >= lo && a+uintptr(len(got.Data)) <= lo+uintptr(len(data)), "blob %d is not a slice of the file", i)
		require.Zero(t, (a-lo)%64, "blob %d is not 64-byte aligned", i)
	}
	require.Positive(t, f.PrepackedBytes)

	// A plan without blobs has no prepacked sections; a rewrite with the
	// decoded blobs gives the same bytes.
	f2, err := plan.Decode(encode(t, p), "plain")
	require.NoError(t, err)
	require.Empty(t, f2.Prepacked)
	var again bytes.Buffer
	require.NoError(t, plan.WritePrepacked(&again, f.Plan, f.Meta, f.Prepacked))
	require.Equal(t, data, again.Bytes())
}

// TestPrepackedOpen: through Open, the blobs are slices of the mapping.
func TestPrepackedOpen(t *testing.T) {
	p, packed := samplePacked(t)
	path := filepath.Join(t.TempDir(), "p.wplan")
	require.NoError(t, plan.WriteFilePrepacked(path, p, sampleMeta, packed))
	f, err := plan.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Prepacked, 3)
	require.Equal(t, packed[1].Data, f.Prepacked[2].Data)
	require.NoError(t, f.VerifyWeights())
}

// TestVersion1Opens: a version 1 file (no prepacked sections) still opens,
// and may not carry the sections version 2 added.
func TestVersion1Opens(t *testing.T) {
	p := samplePlan(t)
	v1 := encode(t, p)
	binary.LittleEndian.PutUint16(v1[6:], 1)
	plan.Restamp(v1)
	f, err := plan.Decode(v1, "old.wplan")
	require.NoError(t, err)
	require.Empty(t, f.Prepacked)
	require.Equal(t, ir.Text(p.Graph), ir.Text(f.Plan.Graph))

	pp, packed := samplePacked(t)
	bad := encodePacked(t, pp, packed)
	binary.LittleEndian.PutUint16(bad[6:], 1)
	plan.Restamp(bad)
	_, err = plan.Decode(bad, "old.wplan")
	require.ErrorContains(t, err, "plan: old.wplan: unknown section kind 6 (format version 1 defines kinds 1..5)")
}

func TestPrepackedWriteErrors(t *testing.T) {
	p, packed := samplePacked(t)
	other := ir.NewGraph("other").AddConst("z", ir.FromFloat32([]int64{1}, []float32{1}))
	x := p.Graph.Inputs[1]
	tests := []struct {
		name string
		pk   plan.Prepacked
		want string
	}{
		{"foreign value", plan.Prepacked{Device: "cpu", Value: other, Desc: "d", Data: []byte{1}}, "which no graph of the plan defines"},
		{"not a constant", plan.Prepacked{Device: "cpu", Value: x, Desc: "d", Data: []byte{1}}, "is not a constant"},
		{"no device", plan.Prepacked{Value: packed[0].Value, Desc: "d", Data: []byte{1}}, "no device"},
		{"no data", plan.Prepacked{Device: "cpu", Value: packed[0].Value, Desc: "d"}, "no data"},
		{"twice", packed[0], "given twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := plan.WritePrepacked(&buf, p, nil, append([]plan.Prepacked{tc.pk}, packed...))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestPrepackedCorrupt: a damaged index is refused at open with an error
// naming the file and the section; damaged data fails VerifyWeights.
func TestPrepackedCorrupt(t *testing.T) {
	p, packed := samplePacked(t)
	good := encodePacked(t, p, packed)
	ioff, ilen := plan.SectionRange(good, plan.SectionPrepackIndex)
	doff, dlen := plan.SectionRange(good, plan.SectionPrepacked)
	require.Positive(t, ilen)
	require.Positive(t, dlen)
	mod := func(f func(b []byte), restamp bool) []byte {
		b := bytes.Clone(good)
		f(b)
		if restamp {
			plan.Restamp(b)
		}
		return b
	}
	// The index: count, then per blob device, value, descriptor, offset,
	// length, crc. The first blob's device is "cpu".
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"checksum", mod(func(b []byte) { b[ioff+2] ^= 1 }, false), "plan: bad.wplan: prepacked index section: checksum mismatch"},
		{"garbage", mod(func(b []byte) {
			for i := 0; i < ilen; i++ {
				b[ioff+i] = 0xff
			}
		}, true), "plan: bad.wplan: prepacked index section: corrupt"},
		{"truncated index", mod(func(b []byte) { binary.LittleEndian.PutUint64(b[32+5*32+16:], uint64(ilen-3)) }, true),
			"prepacked index section: corrupt"},
		{"data out of range", mod(func(b []byte) { binary.LittleEndian.PutUint64(b[32+6*32+16:], 64) }, true),
			"out of range of the prepacked data section"},
		{"empty device", mod(func(b []byte) { b[ioff+1] = 0; copy(b[ioff+2:], "cpu") }, true), "prepacked index section: corrupt"},
		{"index without data", mod(func(b []byte) { binary.LittleEndian.PutUint32(b[12:], 6) }, true), "prepacked data section: missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := plan.Decode(tc.data, "bad.wplan")
			require.Error(t, err)
			require.ErrorContains(t, err, tc.want)
			var fe *plan.FormatError
			require.True(t, errors.As(err, &fe))
		})
	}
	// Every single-byte change of the index is noticed.
	for i := ioff; i < ioff+ilen; i++ {
		b := bytes.Clone(good)
		b[i] ^= 0x5a
		_, err := plan.Decode(b, "p")
		require.Error(t, err, "corrupting index byte %d went unnoticed", i-ioff)
	}
	// Damaged blob bytes open (they are not read) but fail VerifyWeights.
	b := bytes.Clone(good)
	b[doff+3] ^= 1
	f, err := plan.Decode(b, "p.wplan")
	require.NoError(t, err)
	require.ErrorContains(t, f.VerifyWeights(), "plan: p.wplan: prepacked data section: checksum mismatch")
}
