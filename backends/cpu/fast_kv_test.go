package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// kvStore returns x stored in a cache dtype (f16 rounded, q8_0 quantized
// by ir/quant's codec, row by row of the last dim).
func kvStore(t *testing.T, dt ir.DType, x *ir.Tensor) *ir.Tensor {
	if dt == ir.Float32 {
		return x.Clone()
	}
	out := ir.NewTensor(dt, x.Shape)
	d := int(x.Shape[len(x.Shape)-1])
	rb := int(dt.Bytes(int64(d)))
	src := x.Float32s()
	for r := 0; r < len(src)/d; r++ {
		if dt == ir.Float16 {
			for i, v := range src[r*d : (r+1)*d] {
				h := ir.F32ToF16(v)
				out.Data[r*rb+2*i], out.Data[r*rb+2*i+1] = byte(h), byte(h>>8)
			}
			continue
		}
		require.NoError(t, quant.QuantizeRow(dt, out.Data[r*rb:(r+1)*rb], src[r*d:(r+1)*d]))
	}
	return out
}

// TestKVCacheUpdateMatchesReference: the fast update writes the same bytes
// as the reference, in place (output bound to the input) and into a
// separate output.
func TestKVCacheUpdateMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, dt := range []ir.DType{ir.Float32, ir.Float16, ir.Q8_0} {
		for _, S := range []int64{1, 5} {
			c := kvStore(t, dt, randF32(r, 1, 3, 16, 64))
			nw := randF32(r, 1, 3, S, 64)
			ps := make([]int64, S)
			for i := range ps {
				ps[i] = int64(3 + 2*i)
			}
			pos := ir.FromInt64([]int64{1, S}, ps)
			want := c.Clone()
			refRun(t, node("KVCacheUpdate", nil, []*ir.Tensor{want, nw, pos}), []*ir.Tensor{want, nw, pos})
			for _, inPlace := range []bool{true, false} {
				cc := c.Clone()
				out := cc
				if !inPlace {
					out = ir.NewTensor(dt, c.Shape)
				}
				in := []*ir.Tensor{cc, nw, pos}
				k, err := buildIntoForTest(node("KVCacheUpdate", nil, in), in, []*ir.Tensor{out}, nil)
				require.NoError(t, err)
				require.NotNil(t, k)
				require.NoError(t, k(in, []*ir.Tensor{out}))
				require.Equal(t, want.Data, cc.Data, "%v S=%d in place %v: the input", dt, S, inPlace)
				require.Equal(t, want.Data, out.Data, "%v S=%d in place %v: the output", dt, S, inPlace)
			}
			bp := make([]int64, S)
			bp[0] = 16
			bad := ir.FromInt64([]int64{1, S}, bp)
			in := []*ir.Tensor{c.Clone(), nw, bad}
			k, err := buildIntoForTest(node("KVCacheUpdate", nil, in), in, []*ir.Tensor{in[0]}, nil)
			require.NoError(t, err)
			require.ErrorContains(t, k(in, []*ir.Tensor{in[0]}), "outside the cache of 16")
		}
	}
}

// TestKVAttentionMatchesReference compares the fast KVAttention with the
// reference over cache dtypes, grouped-query heads, decode (one query) and
// prefill (several, at increasing positions), small (single-threaded) and
// large (pool) work, and several tiles.
func TestKVAttentionMatchesReference(t *testing.T) {
	forEachISA(t, func(t *testing.T) { testKVAttentionMatchesReference(t) })
}

func testKVAttentionMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, dt := range []ir.DType{ir.Float32, ir.Float16, ir.Q8_0} {
		for _, tc := range []kvAttentionShape{
			{1, 4, 2, 1, 8, 32, 5},
			{1, 12, 12, 1, 256, 64, 200},
			{1, 8, 2, 1, 100, 32, 99},
			{1, 4, 4, 7, 96, 64, 60},
			{2, 4, 1, 3, 64, 32, 0},
			{1, 2, 1, 2, 40, 12, 30},    // a head size with a remainder past the SIMD width
			{1, 3, 3, 2, 50, 40, 30},    // 16-wide chunks and one of 8 in the four-row score kernel
			{1, 2, 2, 1, 20, 8, 17},     // one chunk of 8 only
			{1, 4, 2, 1, 300, 128, 290}, // many tiles, a wide head
			{1, 2, 2, 5, 80, 48, 60},    // rows past a multiple of 4 with several queries
			{1, 4, 2, 3, 90, 96, 70},    // AVX-512: 64 columns then 32, odd row counts
			{1, 7, 1, 1, 67, 32, 66},    // AVX-512: 32 columns only, rows past a multiple of 4
		} {
			if dt == ir.Q8_0 && tc.D%32 != 0 {
				continue
			}
			kvAttentionCase(t, r, dt, tc, 0)
		}
	}
}

// kvAttentionShape is a KVAttention case: batch, query and KV heads,
// queries, cache positions, head size, and the first query's position
// (the next ones follow it, clamped to the cache).
type kvAttentionShape struct {
	B, H, Hkv, S, P, D int64
	first              int64
}

// kvAttentionCase compares KVAttention over random queries and caches of
// dtype dt with the reference, on a pool of the given workers (0: the
// default pool).
func kvAttentionCase(t *testing.T, r *rand.Rand, dt ir.DType, tc kvAttentionShape, workers int) {
	q := randF32(r, tc.B, tc.H, tc.S, tc.D)
	k := kvStore(t, dt, randF32(r, tc.B, tc.Hkv, tc.P, tc.D))
	v := kvStore(t, dt, randF32(r, tc.B, tc.Hkv, tc.P, tc.D))
	ps := make([]int64, tc.B*tc.S)
	for i := range ps {
		ps[i] = min(tc.P-1, tc.first+int64(i)%tc.S+int64(i)/tc.S)
	}
	in := []*ir.Tensor{q, k, v, ir.FromInt64([]int64{tc.B, tc.S}, ps)}
	runIntoCase(t, intoCase{op: "KVAttention", in: in, tol: 2e-5, pool: workers})
}

// TestKVAttentionGroupedHeads compares KVAttention with the reference
// where query heads share KV heads, on pools of one, three and five
// workers (the heads of a group split unevenly over them).
func TestKVAttentionGroupedHeads(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		for _, dt := range []ir.DType{ir.Float32, ir.Float16, ir.Q8_0} {
			for _, tc := range []kvAttentionShape{
				{1, 14, 2, 1, 300, 64, 250}, // Qwen2-0.5B's groups of 7, past one tile
				{1, 8, 2, 3, 200, 128, 150}, // wide heads, several queries
				{2, 6, 3, 2, 120, 32, 90},   // two batches
				{1, 7, 1, 1, 97, 64, 96},    // one KV head, a partial last tile
				{1, 16, 2, 1, 130, 64, 129}, // groups of 8: two accumulation passes
				{2, 8, 1, 20, 60, 64, 30},   // more queries than a grouped task holds at once
			} {
				for _, workers := range []int{1, 3, 5} {
					kvAttentionCase(t, r, dt, tc, workers)
				}
			}
		}
	})
}

// TestFastLLMOpsMatchReference compares the RMSNormalization and
// RotaryEmbedding into kernels with the reference kernels.
func TestFastLLMOpsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var cases []intoCase
	for _, sh := range [][2][]int64{{{1, 1, 768}, {768}}, {{1, 5, 64}, {1, 64}}, {{3, 7}, {7}}} {
		cases = append(cases, intoCase{name: fmt.Sprint("rms", sh), op: "RMSNormalization", in: []*ir.Tensor{randF32(r, sh[0]...), randF32(r, sh[1]...)},
			attrs: []ir.AttrOption{ir.Float("epsilon", 1e-6)}})
	}
	for _, tc := range []struct {
		B, H, S, D, R, P int64
		inter            int64
	}{{1, 4, 1, 16, 0, 10, 1}, {1, 2, 3, 16, 8, 10, 0}, {2, 3, 2, 8, 8, 6, 1}, {1, 2, 2, 12, 0, 5, 0},
		// A prompt's worth: the tokens run in parallel (on three workers).
		{1, 12, 128, 64, 0, 200, 0}, {2, 6, 70, 64, 48, 100, 1}} {
		R := tc.R
		if R == 0 {
			R = tc.D
		}
		ps := make([]int64, tc.B*tc.S)
		for i := range ps {
			ps[i] = int64(r.IntN(int(tc.P)))
		}
		cases = append(cases, intoCase{name: fmt.Sprintf("rope%+v", tc), op: "RotaryEmbedding",
			in:    []*ir.Tensor{randF32(r, tc.B, tc.H, tc.S, tc.D), randF32(r, tc.P, R/2), randF32(r, tc.P, R/2), ir.FromInt64([]int64{tc.B, tc.S}, ps)},
			attrs: []ir.AttrOption{ir.Int("interleaved", tc.inter), ir.Int("rotary_embedding_dim", tc.R)}, pool: 3})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runIntoCase(t, tc) })
	}
	// A position outside the caches is an error.
	in := []*ir.Tensor{randF32(r, 1, 1, 1, 4), randF32(r, 3, 2), randF32(r, 3, 2), ir.FromInt64([]int64{1, 1}, []int64{3})}
	out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{1, 1, 1, 4})}
	k, err := buildIntoForTest(node("RotaryEmbedding", nil, in), in, out, nil)
	require.NoError(t, err)
	require.ErrorContains(t, k(in, out), "outside")
}

// TestQGatherMatchesReference: the QGather into kernel decodes the same
// rows as the reference, for kept table formats; a bad index is an error.
func TestQGatherMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0, ir.Float16, ir.BFloat16} {
		var tab *ir.Tensor
		if dt == ir.BFloat16 {
			tab = ir.NewTensor(dt, []int64{10, 64})
			for i := range tab.Data {
				tab.Data[i] = byte(r.Uint32())
			}
			for i := 1; i < len(tab.Data); i += 2 {
				tab.Data[i] &= 0x3f // finite values
			}
		} else {
			tab = kvStore(t, dt, randF32(r, 10, 64))
		}
		idx := ir.FromInt64([]int64{1, 3}, []int64{9, 0, 4})
		runIntoCase(t, intoCase{op: "QGather", in: []*ir.Tensor{tab, idx}, consts: []bool{true}})
		in := []*ir.Tensor{tab, ir.FromInt64([]int64{1}, []int64{10})}
		out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{1, 64})}
		k, err := buildIntoForTest(node("QGather", nil, in), in, out, []bool{true})
		require.NoError(t, err)
		require.ErrorContains(t, k(in, out), "outside")
	}
}

// TestExpKV: the softmax's float32 exponential is within 3e-7 relative of
// math.Exp on [-87, 0], and 0 below.
func TestExpKV(t *testing.T) {
	worst := 0.0
	for i := 0; i <= 870000; i++ {
		x := -float32(i) / 10000
		want := math.Exp(float64(x))
		got := float64(expKV(x))
		worst = math.Max(worst, math.Abs(got-want)/want)
	}
	require.Less(t, worst, 3e-7)
	require.Equal(t, float32(0), expKV(-90))
	require.Equal(t, float32(0), expKV(float32(math.Inf(-1))))
	require.Equal(t, float32(1), expKV(0))
}

// TestKVHandOff: the f16 kernels split where they hand the prefetch on to
// the next stream give every score the bits of one call over all rows, and
// sums within float32 rounding of it, for stream lengths around the
// hand-off and head sizes of one, two and four 32-wide chunks.
func TestKVHandOff(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(21, 22))
		for _, d := range []int{32, 64, 128} {
			for n := 1; n <= 2*kvPFRows+9; n++ {
				q := randF32(r, int64(d)).Float32s()
				// The stream, the next one, and a next head's rows.
				rows := kvStore(t, ir.Float16, randF32(r, int64(2*n+kvPFRows), int64(d)))
				k := u16View(rows.Data)[:n*d]
				next := u16View(rows.Data)[n*d : (n+kvPFRows)*d]
				want, got := make([]float32, n), make([]float32, n)
				scoresKVHalfPF(q, k, d, n, want, kvPFRows, 0)
				scoresKVHalfNext(q, k, d, n, got, next, (n+kvPFRows)*d)
				require.Equal(t, want, got, "scores d=%d n=%d", d, n)

				w := randF32(r, int64(n)).Float32s()
				acc0 := randF32(r, int64(d)).Float32s()
				accWant, accGot := append([]float32(nil), acc0...), append([]float32(nil), acc0...)
				accumKVHalfPF(accWant, w, k, d, n, kvPFRows, 0)
				accumKVHalfNext(accGot, w, k, d, n, nil, (n+kvPFRows)*d)
				for i := range accWant {
					require.InDelta(t, accWant[i], accGot[i], 1e-5*(1+math.Abs(float64(accWant[i]))), "sums d=%d n=%d col %d", d, n, i)
				}
			}
		}
	})
}

// TestRopeKernels: the rotation kernels give the plain-Go loops' bits for
// every length around the SIMD width (the tails included), into another
// slice and in place.
func TestRopeKernels(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(23, 24))
		for n := 0; n <= 41; n++ {
			c, s := randF32(r, int64(n)).Float32s(), randF32(r, int64(n)).Float32s()
			x := randF32(r, int64(2*n)).Float32s()
			want, got := make([]float32, 2*n), make([]float32, 2*n)
			ropePairsGo(x, c, s, want)
			ropePairs(x, c, s, got)
			require.Equal(t, want, got, "pairs n=%d", n)
			ropeHalfGo(x[:n], x[n:], c, s, want[:n], want[n:])
			ropeHalf(x[:n], x[n:], c, s, got[:n], got[n:])
			require.Equal(t, want, got, "halves n=%d", n)
			in := make([]float32, 2*n)
			copy(in, x)
			ropeHalf(in[:n], in[n:], c, s, in[:n], in[n:])
			require.Equal(t, want, in, "halves in place n=%d", n)
			copy(in, x)
			ropePairsGo(x, c, s, want)
			ropePairs(in, c, s, in)
			require.Equal(t, want, in, "pairs in place n=%d", n)
		}
	})
}
