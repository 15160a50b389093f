package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// TestQMatMulRowIdentity checks that a batched QMatMul gives each activation row exactly (bitwise) the result of that row
// alone, at every ISA level and thread count: speculative decoding
// verifies k drafted tokens in one M = k+1 pass and must reproduce the
// one-token (M = 1) greedy output.
//
// HalfMatMul (f16/bf16 weights) is checked below hPackMinM rows; from
// there on it runs the packed f32 GEMM, whose sums go along k in a
// different order (see TestHalfMatMulRowIdentity).
func TestQMatMulRowIdentity(t *testing.T) {
	pools := []*Pool{nil, NewPool(2), NewPool(3)}
	defer func() {
		for _, p := range pools[1:] {
			p.Close()
		}
	}()
	for vi, variant := range qRowIdentityVariants {
		variant(func() {
			t.Run(fmt.Sprint("variant", vi), func(t *testing.T) { testQMatMulRowIdentity(t, pools) })
		})
	}
}

// qRowIdentityVariants run f under each kernel selection a machine can
// have (the first: as detected; amd64 adds one without AVX-512 VBMI).
var qRowIdentityVariants = []func(f func()){func(f func()) { f() }}

func testQMatMulRowIdentity(t *testing.T, pools []*Pool) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0, ir.Q4_K, ir.Q6_K, ir.Float16, ir.BFloat16} {
			for it := 0; it < 6; it++ {
				M := 2 + r.IntN(8)
				N := 1 + r.IntN(70)
				K := 32 * (1 + r.IntN(24))
				if dt == ir.Q4_K || dt == ir.Q6_K {
					K = 256 * (1 + r.IntN(4))
				}
				if dt == ir.Float16 || dt == ir.BFloat16 {
					K = 1 + r.IntN(300)
					M = min(M, hPackMinM-1)
				}
				if it == 0 {
					N, K = 96, 4096 // a decode-sized row (groups and tasks)
					if dt == ir.Float16 || dt == ir.BFloat16 {
						K = 1000
					}
				}
				name := fmt.Sprintf("%v/%dx%dx%d", dt, M, N, K)
				var w []byte
				switch dt {
				case ir.Q8_0, ir.Q4_0:
					w, _ = randQWeights(r, dt, N, K)
				case ir.Q4_K, ir.Q6_K:
					w, _ = randKWeights(t, r, dt, N, K)
				default:
					w = make([]byte, 2*N*K)
					for i := 0; i < len(w); i += 2 {
						w[i] = byte(r.Uint32())
						w[i+1] = byte(r.IntN(0x3c)) | byte(r.IntN(2))<<7 // finite, |v| < 2
					}
				}
				x := randFloats(r, M*K)
				batched := qRowIdentityRun(t, pools[0], dt, w, N, K, x, M)
			cases:
				for pi, pool := range pools {
					for m := 0; m < M; m++ {
						one := qRowIdentityRun(t, pool, dt, w, N, K, x[m*K:(m+1)*K], 1)
						for n := 0; n < N; n++ {
							if a, b := batched[m*N+n], one[n]; math.Float32bits(a) != math.Float32bits(b) {
								t.Errorf("%s pool %d: row %d col %d: batched %v (%08x) != alone %v (%08x)", name, pi, m, n, a, math.Float32bits(a), b, math.Float32bits(b))
								break cases
							}
						}
					}
					if pool != nil {
						again := qRowIdentityRun(t, pool, dt, w, N, K, x, M)
						for i := range again {
							if math.Float32bits(again[i]) != math.Float32bits(batched[i]) {
								t.Errorf("%s pool %d: batched result %d differs across thread counts: %v != %v", name, pi, i, again[i], batched[i])
								break cases
							}
						}
					}
				}
			}
		}
	})
}

func qRowIdentityRun(t *testing.T, pool *Pool, dt ir.DType, w []byte, N, K int, x []float32, M int) []float32 {
	t.Helper()
	y := make([]float32, M*N)
	if dt == ir.Float16 || dt == ir.BFloat16 {
		if err := HalfMatMul(pool, dt, w, N, K, x, K, M, y, N); err != nil {
			t.Fatal(err)
		}
		return y
	}
	var qa QuantizedActs
	if err := QuantizeActs(&qa, x, K, M, K); err != nil {
		t.Fatal(err)
	}
	if err := QMatMul(pool, dt, w, N, &qa, y, N); err != nil {
		t.Fatal(err)
	}
	return y
}
