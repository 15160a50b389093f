package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func sameFloat(a, b float32) bool { return a == b || a != a && b != b }

// TestMaxRows checks the NaN-propagating elementwise max over every tail
// length.
func TestMaxRows(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 9))
		for n := 0; n <= 40; n++ {
			a, b := randFloats(r, n), randFloats(r, n)
			if n > 5 {
				a[2], b[5] = float32(math.NaN()), float32(math.NaN())
				a[4] = float32(math.Inf(-1))
			}
			dst := make([]float32, n)
			MaxRows(dst, a, b)
			for i := range dst {
				want := max(a[i], b[i])
				if a[i] != a[i] || b[i] != b[i] {
					want = float32(math.NaN())
				}
				if !sameFloat(dst[i], want) {
					t.Fatalf("n=%d: dst[%d] = %v, want %v", n, i, dst[i], want)
				}
			}
		}
	})
}

// TestMaxPoolRow checks the horizontal window max for strides 1 and 2,
// several tap sets, every output count up to 40, with and without slack
// after the row, against a direct loop.
func TestMaxPoolRow(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(2, 9))
		for _, stride := range []int{1, 2, 3} {
			for _, offs := range [][]int{{0}, {0, 1, 2}, {0, 2, 4}, {1, 3}, {0, 1, 2, 3, 4, 5, 6}} {
				for n := 1; n <= 40; n++ {
					for _, slack := range []int{0, MaxPoolRowSlack} {
						t.Run(fmt.Sprint(stride, offs, n, slack), func(t *testing.T) {
							need := (n-1)*stride + offs[len(offs)-1] + 1
							v := randFloats(r, need+slack)
							if need > 7 {
								v[r.IntN(need)] = float32(math.NaN())
							}
							dst := make([]float32, n)
							MaxPoolRow(dst, v, offs, stride)
							for o := range dst {
								want := float32(math.Inf(-1))
								nan := false
								for _, k := range offs {
									x := v[o*stride+k]
									nan = nan || x != x
									want = max(want, x)
								}
								if nan {
									want = float32(math.NaN())
								}
								if !sameFloat(dst[o], want) {
									t.Fatalf("dst[%d] = %v, want %v", o, dst[o], want)
								}
							}
						})
					}
				}
			}
		}
	})
}

// TestCopyStrided checks the strided row copy for strides 1-3, every
// length up to 40, with and without slack after the source.
func TestCopyStrided(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 9))
		for stride := 1; stride <= 3; stride++ {
			for n := 1; n <= 40; n++ {
				for _, slack := range []int{0, 1, MaxPoolRowSlack} {
					src := randFloats(r, (n-1)*stride+1+slack)
					src[0] = float32(math.NaN())
					dst := make([]float32, n)
					CopyStrided(dst, src, stride)
					for i := range dst {
						if !sameFloat(dst[i], src[i*stride]) {
							t.Fatalf("stride %d n %d slack %d: dst[%d] = %v, want %v", stride, n, slack, i, dst[i], src[i*stride])
						}
					}
				}
			}
		}
	})
}
