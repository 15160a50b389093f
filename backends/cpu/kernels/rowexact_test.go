package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// TestActPiecewise checks that an activation's result for an element
// depends on its value only, not on where it sits in the slice: the slice
// cut into pieces at random points gives bit for bit what the whole does.
// The SwiGLU of QMatMulGroup runs kernels.SiLU on each task's rows, and
// tasks depend on the number of activation rows; before the tail went
// through the vector kernel, the elements past a piece's last whole
// vector took the scalar formula and differed in the last bit, so a
// speculative verification pass disagreed with one-token decoding.
func TestActPiecewise(t *testing.T) {
	acts := []struct {
		name string
		f    func([]float32)
	}{{"GeluErf", GeluErf}, {"GeluTanh", GeluTanh}, {"SiLU", SiLU}, {"Sigmoid", Sigmoid}}
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, a := range acts {
			for it := 0; it < 40; it++ {
				n := 1 + r.IntN(200)
				x := randFloats(r, n)
				for i := range x {
					x[i] *= 12
				}
				whole := append([]float32(nil), x...)
				a.f(whole)
				pieces := append([]float32(nil), x...)
				for i := 0; i < n; {
					e := min(n, i+1+r.IntN(40))
					a.f(pieces[i:e])
					i = e
				}
				for i := range whole {
					if math.Float32bits(whole[i]) != math.Float32bits(pieces[i]) {
						t.Fatalf("%s n=%d: element %d (x=%v): whole %v != in pieces %v", a.name, n, i, x[i], whole[i], pieces[i])
					}
				}
			}
		}
	})
}

// TestHalfMatMulRowsRowIdentity checks HalfMatMulRows at any number of
// activation rows, 32 and more included (where HalfMatMul packs): each
// row of y is bit for bit HalfMatMul of that row alone, also when the
// weight rows are split into runs of whole groups of four (as the
// QMatMulGroup kernel's tasks split them), at every ISA level.
func TestHalfMatMulRowsRowIdentity(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, dt := range []ir.DType{ir.Float16, ir.BFloat16} {
			for _, M := range []int{2, 5, 31, 32, 33, 40, 70} {
				N, K := 1+r.IntN(90), 1+r.IntN(400)
				name := fmt.Sprintf("%v/%dx%dx%d", dt, M, N, K)
				w := make([]byte, 2*N*K)
				for i := 0; i < len(w); i += 2 {
					w[i] = byte(r.Uint32())
					w[i+1] = byte(r.IntN(0x3c)) | byte(r.IntN(2))<<7 // finite, |v| < 2
				}
				x := randFloats(r, M*K)
				all := make([]float32, M*N)
				if err := HalfMatMulRows(pool, dt, w, N, K, x, K, M, all, N); err != nil {
					t.Fatal(err)
				}
				split := make([]float32, M*N)
				for n0 := 0; n0 < N; {
					n1 := min(N, n0+4*(1+r.IntN(5)))
					if err := HalfMatMulRows(nil, dt, w[2*n0*K:2*n1*K], n1-n0, K, x, K, M, split[n0:], N); err != nil {
						t.Fatal(err)
					}
					n0 = n1
				}
				one := make([]float32, N)
				for m := 0; m < M; m++ {
					if err := HalfMatMul(nil, dt, w, N, K, x[m*K:(m+1)*K], K, 1, one, N); err != nil {
						t.Fatal(err)
					}
					for n := 0; n < N; n++ {
						a, s, b := all[m*N+n], split[m*N+n], one[n]
						if math.Float32bits(a) != math.Float32bits(b) || math.Float32bits(s) != math.Float32bits(b) {
							t.Fatalf("%s: row %d col %d: batched %v, split %v, alone %v", name, m, n, a, s, b)
						}
					}
				}
			}
		}
	})
}
