package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// TestKVGroupKernels compares the grouped-query kernels with their plain-Go
// meaning (the one-head Go kernels, query by query) on random group sizes,
// row counts with every remainder mod 4, and strides that are not
// multiples of the vector width; and checks that a row's score does not
// depend on whether it falls in a block of four rows or in the tail.
func TestKVGroupKernels(t *testing.T) {
	for _, d := range []int{64, 128} {
		t.Run(fmt.Sprint("d", d), func(t *testing.T) { testKVGroupKernels(t, d) })
	}
}

func testKVGroupKernels(t *testing.T, d int) {
	if !kvGroupKernels(d) {
		t.Skip("no grouped-query kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(21, uint64(d)))
	half := func(n int) []uint16 {
		h := make([]uint16, n)
		for i := range h {
			h[i] = ir.F32ToF16(r.Float32()*2 - 1)
		}
		return h
	}
	f32 := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = r.Float32()*2 - 1
		}
		return x
	}
	for it := 0; it < 200; it++ {
		ng := 1 + r.IntN(9)
		n := 1 + r.IntN(41)
		ldo := n + r.IntN(5)
		q, k := f32(ng*d), half(n*d)
		got, want := f32(ng*ldo), make([]float32, ng*ldo)
		copy(want, got)
		scoresKVHalfG(q, ng, k, d, n, got, ldo)
		scoresKVHalfGroupGo(q, ng, k, d, n, want, ldo)
		for i := range want {
			require.InDelta(t, want[i], got[i], 2e-5, "scores ng=%d n=%d at %d", ng, n, i)
		}
		// Row c alone (the one-row path) against c in the call above.
		c := r.IntN(n)
		one := make([]float32, ng*(c+1))
		scoresKVHalfG(q, ng, k, d, c+1, one, c+1)
		for i := 0; i < ng; i++ {
			require.Equal(t, got[i*ldo+c], one[i*(c+1)+c], "row %d of %d, query %d", c, n, i)
		}
		// Query i alone (the one-query path) against i in the call above
		// (where the kernel runs four queries at once).
		i := r.IntN(ng)
		alone := make([]float32, n)
		scoresKVHalfG(q[i*d:(i+1)*d], 1, k, d, n, alone, n)
		require.Equal(t, alone, got[i*ldo:i*ldo+n], "query %d of %d alone, %d rows", i, ng, n)

		ng = 1 + r.IntN(kvGroupMax(d))
		lda, ldw := d+r.IntN(9), n+r.IntN(5)
		acc, w, v := f32(ng*lda), f32(ng*ldw), half(n*d)
		want = append([]float32(nil), acc...)
		accumKVHalfG(acc, lda, ng, w, ldw, v, d, n)
		accumKVHalfGroupGo(want, lda, ng, w, ldw, v, d, n)
		for i := range want {
			require.InDelta(t, want[i], acc[i], 2e-5, "accum ng=%d n=%d at %d", ng, n, i)
		}
	}
}

// TestKVAttentionGroupedConsistent: where the grouped path runs, a query's
// output is bit-identical whether it is computed alone (a decode step) or
// among S queries at consecutive positions (speculative decoding's
// verification), on one and on two workers, for head sizes 64 (groups of
// 7, as Qwen2-0.5B, and 8: two accumulation passes) and 128.
func TestKVAttentionGroupedConsistent(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, tc := range []struct{ H, Hkv, S, P, first, D int64 }{
		{14, 2, 5, 300, 250, 64},
		{8, 1, 19, 80, 40, 64},
		{16, 2, 4, 64, 3, 64},
		{8, 2, 5, 300, 250, 128}, // Llama 3's groups of 4, two accumulation passes
		{7, 1, 6, 50, 20, 128},
	} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("H%d/Hkv%d/S%d/D%d/w%d", tc.H, tc.Hkv, tc.S, tc.D, workers), func(t *testing.T) {
				D := tc.D
				q := randF32(r, 1, tc.H, tc.S, D)
				k := kvStore(t, ir.Float16, randF32(r, 1, tc.Hkv, tc.P, D))
				v := kvStore(t, ir.Float16, randF32(r, 1, tc.Hkv, tc.P, D))
				ps := make([]int64, tc.S)
				for i := range ps {
					ps[i] = tc.first + int64(i)
				}
				all := runKVAttention(t, q, k, v, ps, workers)
				for s := int64(0); s < tc.S; s++ {
					qs := ir.NewTensor(ir.Float32, []int64{1, tc.H, 1, D})
					for h := int64(0); h < tc.H; h++ {
						copy(qs.Float32s()[h*D:(h+1)*D], q.Float32s()[(h*tc.S+s)*D:(h*tc.S+s+1)*D])
					}
					one := runKVAttention(t, qs, k, v, ps[s:s+1], workers)
					for h := int64(0); h < tc.H; h++ {
						require.Equal(t, all[(h*tc.S+s)*D:(h*tc.S+s+1)*D], one[h*D:(h+1)*D], "head %d query %d", h, s)
					}
				}
			})
		}
	}
}

// TestKVAttentionGroupedQ8MatchesPerHead: over a Q8_0 cache the grouped
// path widens a tile once for its group and runs the per-head kernels on
// it, so its outputs are bit-identical to the per-head path's, here run on
// a cache with every KV head repeated for each of its query heads.
func TestKVAttentionGroupedQ8MatchesPerHead(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, tc := range []struct{ H, Hkv, S, P, first, D int64 }{
		{14, 2, 1, 300, 250, 64},
		{8, 2, 5, 100, 60, 128},
		{6, 3, 3, 70, 40, 32},
	} {
		for _, workers := range []int{1, 2} {
			G := tc.H / tc.Hkv
			q := randF32(r, 1, tc.H, tc.S, tc.D)
			kf, vf := randF32(r, 1, tc.Hkv, tc.P, tc.D), randF32(r, 1, tc.Hkv, tc.P, tc.D)
			// The same rows with each KV head repeated G times.
			rep := func(x *ir.Tensor) *ir.Tensor {
				out := ir.NewTensor(ir.Float32, []int64{1, tc.H, tc.P, tc.D})
				n := tc.P * tc.D
				for h := int64(0); h < tc.H; h++ {
					copy(out.Float32s()[h*n:(h+1)*n], x.Float32s()[(h/G)*n:(h/G+1)*n])
				}
				return out
			}
			ps := make([]int64, tc.S)
			for i := range ps {
				ps[i] = tc.first + int64(i)
			}
			grouped := runKVAttention(t, q, kvStore(t, ir.Q8_0, kf), kvStore(t, ir.Q8_0, vf), ps, workers)
			perHead := runKVAttention(t, q, kvStore(t, ir.Q8_0, rep(kf)), kvStore(t, ir.Q8_0, rep(vf)), ps, workers)
			require.Equal(t, perHead, grouped, "%+v, %d workers", tc, workers)
		}
	}
}

// runKVAttention runs the fast KVAttention kernel on a pool of the given
// workers for queries q [1, H, len(ps), D] at positions ps
// and returns its output.
func runKVAttention(t *testing.T, q, k, v *ir.Tensor, ps []int64, workers int) []float32 {
	t.Helper()
	in := []*ir.Tensor{q, k, v, ir.FromInt64([]int64{1, int64(len(ps))}, ps)}
	y := ir.NewTensor(ir.Float32, []int64{1, q.Shape[1], int64(len(ps)), v.Shape[3]})
	kern, err := buildIntoWorkers(node("KVAttention", nil, in), in, []*ir.Tensor{y}, nil, workers)
	require.NoError(t, err)
	require.NotNil(t, kern)
	require.NoError(t, kern(in, []*ir.Tensor{y}))
	return y.Float32s()
}
