//go:build !noasm

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestNEONMicroKernels calls each mr×16 NEON micro-kernel directly and
// compares it with genericKernel on the same packed panels: every row
// count, k around the unroll of 4, overwrite and accumulate, and a C
// stride wider than the tile whose gap must stay untouched.
func TestNEONMicroKernels(t *testing.T) {
	if BestISA() < NEON {
		t.Skip("no NEON")
	}
	r := rand.New(rand.NewPCG(21, 22))
	const ldc = neonNR + 5
	for mr := 1; mr <= neonMR; mr++ {
		for _, k := range []int{1, 2, 3, 4, 5, 8, 11, 64} {
			for _, acc := range []int{0, 1} {
				t.Run(fmt.Sprintf("%dx%d/k%d/acc%d", mr, neonNR, k, acc), func(t *testing.T) {
					a, b := randFloats(r, k*mr), randFloats(r, k*neonNR)
					c := randFloats(r, mr*ldc)
					want := append([]float32(nil), c...)
					genericKernel(mr, neonNR, k, neonNR, a, b, want, ldc, acc == 1)
					archKernel(NEON, neonNR, mr)(k, &a[0], &b[0], &c[0], ldc, 0, acc)
					for i := range c {
						if !close32(c[i], want[i]) {
							t.Fatalf("C[%d,%d] = %g, generic %g", i/ldc, i%ldc, c[i], want[i])
						}
					}
				})
			}
		}
	}
}
