package gguf

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// FuzzParse feeds arbitrary bytes to Parse: it must return an error or a
// file whose every tensor loads with exactly the bytes its dtype and shape
// call for, inside the input, and whose metadata writes back and parses to
// the same values. Seeds: small valid files and their truncations.
func FuzzParse(f *testing.F) {
	w := NewWriter()
	for _, kv := range allValues() {
		if err := w.Set(kv.Key, kv.Value); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.AddTensor("w", ir.FromFloat32([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})); err != nil {
		f.Fatal(err)
	}
	q := ir.NewTensor(ir.Q4_K, []int64{1, 256})
	q.Data[0] = 0x3c // a nonzero scale
	if err := w.AddTensor("q", q); err != nil {
		f.Fatal(err)
	}
	full, err := w.Bytes()
	if err != nil {
		f.Fatal(err)
	}
	small := header(3, 1, 1).str(KeyAlignment).u32(uint32(TypeUint32)).u32(8).
		tinfo("t", 8, 0, 32).pad(8).append(make([]byte, 34)...)
	for _, seed := range [][]byte{full, small, header(3, 0, 0), header(2, 0, 0)} {
		f.Add(seed)
		for _, n := range []int{len(seed) / 3, len(seed) / 2, len(seed) - 1} {
			f.Add(seed[:n])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		for _, ti := range file.Tensors {
			end := file.DataOffset + ti.Offset + ti.Size
			require.LessOrEqual(t, end, int64(len(data)))
			tt, err := file.Tensor(ti.Name)
			if ti.Type == ir.Invalid {
				require.ErrorIs(t, err, ir.ErrUnsupported)
				continue
			}
			require.NoError(t, err)
			require.NoError(t, tt.Check())
			require.True(t, bytes.Equal(tt.Data, data[file.DataOffset+ti.Offset:end]))
			if quant.Decodable(tt.DType) && tt.Len() <= 1<<16 {
				_, err := quant.Dequantize(tt)
				require.NoError(t, err)
			}
		}
		w := NewWriter()
		for _, kv := range file.Metadata {
			require.NoError(t, w.Set(kv.Key, kv.Value))
		}
		b, err := w.Bytes()
		require.NoError(t, err)
		again, err := Parse(b)
		require.NoError(t, err)
		require.Equal(t, len(file.Metadata), len(again.Metadata))
		for i, kv := range file.Metadata {
			require.Equal(t, kv.Key, again.Metadata[i].Key)
			require.Equal(t, kv.Value.Summary(1<<30), again.Metadata[i].Value.Summary(1<<30)) // NaN-safe comparison
		}
	})
}
