package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// TestQRowsMatchesQMatMul: QRows.Run gives every row bit for bit what
// QMatMul gives at one activation row, for any split of the rows; it
// declines what has no row kernel (several rows, the K-quants, K not a
// whole number of groups) and rejects short buffers.
func TestQRowsMatchesQMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, dt := range []ir.DType{ir.Q4_0, ir.Q8_0} {
		for _, K := range []int{64, 128, 256, 768, 800, 2048} {
			N := 1 + r.IntN(40)
			w, _ := randQWeights(r, dt, N, K)
			var x QuantizedActs
			require.NoError(t, QuantizeActs(&x, randFloats(r, K), K, 1, K))
			want := make([]float32, N)
			require.NoError(t, QMatMul(nil, dt, w, N, &x, want, N))
			var q QRows
			if !q.Init(dt, &x) {
				t.Logf("%v K=%d: no row kernel here", dt, K)
				continue
			}
			rb := len(w) / N
			got := make([]float32, N)
			for n0 := 0; n0 < N; {
				n := min(N-n0, 1+r.IntN(7))
				require.NoError(t, q.Run(w[n0*rb:(n0+n)*rb], n, got[n0:n0+n]))
				n0 += n
			}
			for i := range want {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "%v K=%d row %d", dt, K, i)
			}
			require.Error(t, q.Run(w[:rb], 2, got), "short weights")
			require.Error(t, q.Run(w, N, got[:N-1]), "short output")
		}
	}
	var x QuantizedActs
	require.NoError(t, QuantizeActs(&x, randFloats(r, 2*256), 256, 2, 256))
	var q QRows
	require.False(t, q.Init(ir.Q4_0, &x), "two activation rows")
	require.Error(t, q.Run(nil, 0, nil), "not initialized")
	require.NoError(t, QuantizeActs(&x, randFloats(r, 256), 256, 1, 256))
	require.False(t, q.Init(ir.Q4_K, &x), "K-quants go through QMatMul")
}

// TestQDotRows: the plain family's many-rows kernels (qDotRowsFunc, and
// qDotRows4Func for four activation rows) give every row bit for bit what
// the row dot product (qDotFunc) gives, at every ISA level that has them,
// for odd block counts (their tail block), rows with padding between them
// and any split of the rows.
func TestQDotRows(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		isa := CurrentISA()
		r := rand.New(rand.NewPCG(7, 8))
		ran := false
		for _, dt := range []ir.DType{ir.Q4_0, ir.Q8_0} {
			rows := qDotRowsFunc(dt, isa)
			if rows == nil {
				continue
			}
			ran = true
			dot := qDotFunc(dt, isa)
			for _, K := range []int{32, 64, 96, 160, 768, 800, 2048} {
				for _, pad := range []int{0, 6} {
					nb := K / qBlock
					N := 1 + r.IntN(40)
					w, _ := randQWeights(r, dt, N, K)
					rb0 := len(w) / N
					rb := rb0 + pad
					wp := make([]byte, N*rb)
					for n := range N {
						copy(wp[n*rb:], w[n*rb0:(n+1)*rb0])
					}
					var x QuantizedActs
					require.NoError(t, QuantizeActs(&x, randFloats(r, K), K, 1, K))
					got := make([]float32, N+1)
					got[N] = 42
					for n0 := 0; n0 < N; {
						n := min(N-n0, 1+r.IntN(9))
						rows(n, nb, wp[n0*rb:], rb, x.qs, x.d, got[n0:n0+n])
						n0 += n
					}
					for n := range N {
						want := dot(nb, wp[n*rb:n*rb+rb0], x.qs, x.d, x.nsum)
						require.Equal(t, math.Float32bits(want), math.Float32bits(got[n]), "%v K=%d pad %d row %d", dt, K, pad, n)
					}
					require.Equal(t, float32(42), got[N], "wrote past the rows")
					rows4 := qDotRows4Func(dt, isa)
					if rows4 == nil {
						continue
					}
					// Four activation rows at once: each row's sums are the
					// one-row kernel's, written with the leading dimension.
					var x4 QuantizedActs
					require.NoError(t, QuantizeActs(&x4, randFloats(r, 4*K), K, 4, K))
					ldy := N + 3
					y4 := make([]float32, 4*ldy)
					for i := range y4 {
						y4[i] = float32(math.NaN())
					}
					for n0 := 0; n0 < N; {
						n := min(N-n0, 1+r.IntN(9))
						rows4(n, nb, wp[n0*rb:], rb, x4.qs, x4.d, y4[n0:], ldy)
						n0 += n
					}
					for m := range 4 {
						for n := range N {
							want := dot(nb, wp[n*rb:n*rb+rb0], x4.qs[m*K:], x4.d[m*nb:], x4.nsum[m*nb:])
							require.Equal(t, math.Float32bits(want), math.Float32bits(y4[m*ldy+n]), "%v K=%d pad %d x4 row %d col %d", dt, K, pad, m, n)
						}
						for c := N; c < ldy && m*ldy+c < len(y4); c++ {
							require.True(t, math.IsNaN(float64(y4[m*ldy+c])), "x4 wrote past row %d", m)
						}
					}
				}
			}
		}
		if !ran {
			t.Skipf("no many-rows plain kernel at %v", isa)
		}
	})
}
