package kvcache_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/ref"
	_ "github.com/weftrt/weft/backends/cpu/ref/fused" // Attention: the oracle of KVAttention
	_ "github.com/weftrt/weft/backends/cpu/ref/kvcache"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

func node(op string, attrs []ir.AttrOption, in ...*ir.Tensor) *ir.Node {
	b := ir.NewBuilder(op)
	vals := make([]*ir.Value, len(in))
	for i, t := range in {
		vals[i] = b.Input(string(rune('a'+i)), t.DType, ir.ShapeOf(t.Shape))
	}
	b.OpA(op, attrs, vals...)
	return b.G.Nodes[0]
}

func run(t *testing.T, op string, attrs []ir.AttrOption, in ...*ir.Tensor) ([]*ir.Tensor, error) {
	t.Helper()
	k, ok := ref.Lookup(op)
	require.True(t, ok, op)
	return k(&ref.Context{}, node(op, attrs, in...), in)
}

func randF32(r *rand.Rand, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := range t.Float32s() {
		t.Float32s()[i] = float32(r.NormFloat64())
	}
	return t
}

// store returns x in a cache dtype: f32 as is, f16 rounded, q8_0 quantized
// row by row of d elements (by ir/quant's codec).
func store(t *testing.T, dt ir.DType, x *ir.Tensor) *ir.Tensor {
	out := ir.NewTensor(dt, x.Shape)
	d := int(x.Shape[len(x.Shape)-1])
	src := x.Float32s()
	rb := int(dt.Bytes(int64(d)))
	for r := 0; r < len(src)/d; r++ {
		row := src[r*d : (r+1)*d]
		switch dt {
		case ir.Float32:
			copy(out.Float32s()[r*d:], row)
		case ir.Float16:
			for i, v := range row {
				h := ir.F32ToF16(v)
				out.Data[r*rb+2*i], out.Data[r*rb+2*i+1] = byte(h), byte(h>>8)
			}
		default:
			require.NoError(t, quant.QuantizeRow(dt, out.Data[r*rb:(r+1)*rb], row))
		}
	}
	return out
}

// widen returns a cache tensor's f32 values.
func widen(t *testing.T, c *ir.Tensor) *ir.Tensor {
	if c.DType == ir.Float32 {
		return c
	}
	if c.DType == ir.Float16 {
		out := ir.NewTensor(ir.Float32, c.Shape)
		for i := range out.Float32s() {
			out.Float32s()[i] = ir.F16ToF32(uint16(c.Data[2*i]) | uint16(c.Data[2*i+1])<<8)
		}
		return out
	}
	out, err := quant.Dequantize(c)
	require.NoError(t, err)
	return out
}

func TestUpdateHandValues(t *testing.T) {
	// Cache [1, 2, 4, 2] of zeros; two new tokens at positions 3 and 1.
	c := ir.NewTensor(ir.Float32, []int64{1, 2, 4, 2})
	nw := ir.FromFloat32([]int64{1, 2, 2, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	pos := ir.FromInt64([]int64{1, 2}, []int64{3, 1})
	out, err := run(t, "KVCacheUpdate", nil, c, nw, pos)
	require.NoError(t, err)
	require.Same(t, c, out[0], "in place")
	require.Equal(t, []float32{
		0, 0, 3, 4, 0, 0, 1, 2, // head 0: slot 1 = token 1, slot 3 = token 0
		0, 0, 7, 8, 0, 0, 5, 6,
	}, c.Float32s())
}

func TestUpdateStorageTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dt := range []ir.DType{ir.Float32, ir.Float16, ir.Q8_0} {
		c := store(t, dt, randF32(r, 2, 3, 8, 32))
		before := append([]byte(nil), c.Data...)
		nw := randF32(r, 2, 3, 2, 32)
		_, err := run(t, "KVCacheUpdate", nil, c, nw, ir.FromInt64([]int64{2, 2}, []int64{5, 0, 7, 6}))
		require.NoError(t, err, dt)
		want := store(t, dt, nw)
		rb := int(dt.Bytes(32))
		for b := 0; b < 2; b++ {
			for h := 0; h < 3; h++ {
				for p := 0; p < 8; p++ {
					got := c.Data[((b*3+h)*8+p)*rb : ((b*3+h)*8+p+1)*rb]
					s := map[[2]int]int{{0, 5}: 0, {0, 0}: 1, {1, 7}: 0, {1, 6}: 1}
					if si, ok := s[[2]int{b, p}]; ok {
						require.Equal(t, want.Data[((b*3+h)*2+si)*rb:((b*3+h)*2+si+1)*rb], got, "%v b%d h%d p%d", dt, b, h, p)
					} else {
						require.Equal(t, before[((b*3+h)*8+p)*rb:((b*3+h)*8+p+1)*rb], got, "%v untouched b%d h%d p%d", dt, b, h, p)
					}
				}
			}
		}
	}
}

func TestUpdateErrors(t *testing.T) {
	c := ir.NewTensor(ir.Float32, []int64{1, 1, 4, 2})
	nw := ir.NewTensor(ir.Float32, []int64{1, 1, 1, 2})
	_, err := run(t, "KVCacheUpdate", nil, c, nw, ir.FromInt64([]int64{1, 1}, []int64{4}))
	require.ErrorContains(t, err, "outside the cache of 4")
	_, err = run(t, "KVCacheUpdate", nil, c, nw, ir.FromInt64([]int64{1, 1}, []int64{-1}))
	require.ErrorContains(t, err, "outside the cache")
	_, err = run(t, "KVCacheUpdate", nil, ir.NewTensor(ir.Q8_0, []int64{1, 1, 4, 32}), ir.NewTensor(ir.Float32, []int64{1, 1, 1, 16}), ir.FromInt64([]int64{1, 1}, []int64{0}))
	require.Error(t, err)
	_, err = run(t, "KVCacheUpdate", nil, ir.NewTensor(ir.Int32, []int64{1, 1, 4, 2}), nw, ir.FromInt64([]int64{1, 1}, []int64{0}))
	require.ErrorIs(t, err, ir.ErrUnsupported)
}

// TestAttentionMatchesMaskedAttention: KVAttention equals Attention over the
// widened caches with the mask Positions defines, for every cache dtype,
// grouped-query heads, one and several queries.
func TestAttentionMatchesMaskedAttention(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, dt := range []ir.DType{ir.Float32, ir.Float16, ir.Q8_0} {
		for _, tc := range []struct {
			B, H, Hkv, S, P, D int64
			pos                []int64
		}{
			{1, 4, 2, 1, 8, 32, []int64{5}},
			{1, 2, 2, 3, 8, 32, []int64{0, 1, 2}},
			{2, 6, 3, 2, 16, 64, []int64{15, 3, 7, 9}},
		} {
			q := randF32(r, tc.B, tc.H, tc.S, tc.D)
			k := store(t, dt, randF32(r, tc.B, tc.Hkv, tc.P, tc.D))
			v := store(t, dt, randF32(r, tc.B, tc.Hkv, tc.P, tc.D))
			pos := ir.FromInt64([]int64{tc.B, tc.S}, tc.pos)
			got, err := run(t, "KVAttention", nil, q, k, v, pos)
			require.NoError(t, err)
			mask := ir.NewTensor(ir.Float32, []int64{tc.B, 1, tc.S, tc.P})
			for b := int64(0); b < tc.B; b++ {
				for s := int64(0); s < tc.S; s++ {
					for j := int64(0); j < tc.P; j++ {
						if j > tc.pos[b*tc.S+s] {
							mask.Float32s()[(b*tc.S+s)*tc.P+j] = float32(math.Inf(-1))
						}
					}
				}
			}
			want, err := run(t, "Attention", nil, q, widen(t, k), widen(t, v), mask)
			require.NoError(t, err)
			require.Equal(t, want[0].Shape, got[0].Shape)
			for i, w := range want[0].Float32s() {
				require.InDelta(t, w, got[0].Float32s()[i], 1e-5, "%v %+v element %d", dt, tc, i)
			}
		}
	}
}

func TestAttentionErrors(t *testing.T) {
	q := ir.NewTensor(ir.Float32, []int64{1, 2, 1, 4})
	k := ir.NewTensor(ir.Float32, []int64{1, 1, 4, 4})
	_, err := run(t, "KVAttention", nil, q, k, k, ir.FromInt64([]int64{1, 1}, []int64{4}))
	require.ErrorContains(t, err, "outside the cache")
	_, err = run(t, "KVAttention", nil, q, k, ir.NewTensor(ir.Float16, []int64{1, 1, 4, 4}), ir.FromInt64([]int64{1, 1}, []int64{0}))
	require.ErrorContains(t, err, "do not fit")
	_, err = run(t, "KVAttention", nil, ir.NewTensor(ir.Float32, []int64{1, 3, 1, 4}), ir.NewTensor(ir.Float32, []int64{1, 2, 4, 4}), ir.NewTensor(ir.Float32, []int64{1, 2, 4, 4}), ir.FromInt64([]int64{1, 1}, []int64{0}))
	require.ErrorContains(t, err, "not a multiple")
}

func TestQGather(t *testing.T) {
	// An f16 table of exactly representable values, and a q8_0 one against
	// ir/quant's decoding of the whole table.
	vals := []float32{1, 2, -3, 0.5, 7, -8}
	tab := store(t, ir.Float16, ir.FromFloat32([]int64{3, 2}, vals))
	out, err := run(t, "QGather", nil, tab, ir.FromInt64([]int64{2, 2}, []int64{2, 0, 1, 2}))
	require.NoError(t, err)
	require.Equal(t, []int64{2, 2, 2}, out[0].Shape)
	require.Equal(t, []float32{7, -8, 1, 2, -3, 0.5, 7, -8}, out[0].Float32s())

	r := rand.New(rand.NewPCG(1, 2))
	q := store(t, ir.Q8_0, randF32(r, 4, 64))
	all := widen(t, q).Float32s()
	out, err = run(t, "QGather", nil, q, ir.FromInt64([]int64{1}, []int64{3}))
	require.NoError(t, err)
	require.Equal(t, all[3*64:4*64], out[0].Float32s())

	_, err = run(t, "QGather", nil, q, ir.FromInt64([]int64{1}, []int64{4}))
	require.ErrorContains(t, err, "outside the table's 4 rows")
	_, err = run(t, "QGather", nil, q, ir.FromInt64([]int64{1}, []int64{-1}))
	require.ErrorContains(t, err, "outside")
	_, err = run(t, "QGather", nil, ir.NewTensor(ir.Float32, []int64{2, 2}), ir.FromInt64([]int64{1}, []int64{0}))
	require.ErrorIs(t, err, ir.ErrUnsupported)
}
