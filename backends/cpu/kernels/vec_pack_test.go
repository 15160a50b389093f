package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestPackPanel checks the packed panel against the definition
// d[kk*rows+r] = a[r*lda+kk] for every row count and column tails.
func TestPackPanel(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, rows := range []int{1, 2, 6, 13, 14, 16} {
			for _, kcb := range []int{0, 1, 15, 16, 17, 33, 256, 257} {
				lda := kcb + 3
				a := randFloats(r, rows*lda+5)
				d := make([]float32, kcb*rows+1)
				d[len(d)-1] = 42 // must stay untouched
				packPanel(d, a, lda, rows, kcb)
				for kk := 0; kk < kcb; kk++ {
					for i := 0; i < rows; i++ {
						if got, want := d[kk*rows+i], a[i*lda+kk]; got != want {
							t.Fatalf("rows %d kcb %d: d[%d*rows+%d] = %g, want %g", rows, kcb, kk, i, got, want)
						}
					}
				}
				if d[len(d)-1] != 42 {
					t.Fatalf("rows %d kcb %d: wrote past the panel", rows, kcb)
				}
			}
		}
	})
}
