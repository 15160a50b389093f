package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestConvGemm checks ConvGemm against a plain triple loop over random
// shapes, row ranges, offsets and column counts (including B rows that end
// exactly at the end of b, so that full panels would read past it).
func TestConvGemm(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, c := range []struct{ M, K, ncols int }{
			{1, 1, 1}, {14, 7, 32}, {15, 9, 33}, {64, 147, 70}, {29, 400, 17}, {50, 193, 100}, {6, 5, 16}, {7, 3, 5},
			// last panels of at most 16 columns (the half-width kernels)
			// under every row count
			{64, 147, 112}, {27, 9, 48}, {13, 6, 16}, {100, 30, 80}, {41, 5, 15}, {12, 3, 41},
		} {
			t.Run(fmt.Sprint(c.M, c.K, c.ncols), func(t *testing.T) {
				w := randFloats(r, c.M*c.K)
				cw := PackConvWeights(w, c.K, c.M, c.K)
				blen := 3*c.ncols + 40
				b := randFloats(r, blen)
				off := make([]int, c.K)
				for k := range off {
					off[k] = r.IntN(blen - c.ncols + 1)
				}
				off[c.K-1] = blen - c.ncols // the last row ends at len(b)
				for _, mode := range []int{0, 1, 2, 3} {
					acc, withEpi := mode&1 != 0, mode&2 != 0
					mr := cw.MR()
					i0 := mr * r.IntN((c.M+mr-1)/mr)
					i1 := min(c.M, i0+mr*(1+r.IntN((c.M-i0+mr-1)/mr)))
					ldc := c.ncols + r.IntN(5)
					got := randFloats(r, (i1-i0)*ldc)
					want := append([]float32(nil), got...)
					var epi *ConvEpi
					if withEpi {
						epi = &ConvEpi{Bias: randFloats(r, c.M), Z: randFloats(r, len(got)), Relu: r.IntN(2) == 0}
						if r.IntN(3) == 0 {
							epi.Bias = nil
						}
						if r.IntN(3) == 0 {
							epi.Z = nil
						}
					}
					for i := i0; i < i1; i++ {
						for j := 0; j < c.ncols; j++ {
							var s float64
							for k := 0; k < c.K; k++ {
								s += float64(w[i*c.K+k]) * float64(b[off[k]+j])
							}
							if acc {
								s += float64(want[(i-i0)*ldc+j])
							}
							if epi != nil {
								if epi.Bias != nil {
									s += float64(epi.Bias[i])
								}
								if epi.Z != nil {
									s += float64(epi.Z[(i-i0)*ldc+j])
								}
								if epi.Relu {
									s = max(s, 0)
								}
							}
							want[(i-i0)*ldc+j] = float32(s)
						}
					}
					for kb := 0; kb < cw.Blocks(); kb++ {
						k0, _ := cw.Block(kb)
						var e *ConvEpi
						if kb == cw.Blocks()-1 {
							e = epi
						}
						ConvGemm(cw, kb, i0, i1, b, off[k0:], c.ncols, got, ldc, acc || kb > 0, e)
					}
					for i := range got {
						if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*float64(c.K) {
							t.Fatalf("acc=%v epi=%v rows [%d,%d): C[%d] = %v, want %v", acc, withEpi, i0, i1, i, got[i], want[i])
						}
					}
				}
			})
		}
	})
}

// TestConvGemmBounds checks that ConvGemm refuses offsets outside b.
func TestConvGemmBounds(t *testing.T) {
	cw := PackConvWeights(make([]float32, 4*3), 3, 4, 3)
	defer func() {
		if recover() == nil {
			t.Fatal("ConvGemm read past the end of b without panicking")
		}
	}()
	ConvGemm(cw, 0, 0, 4, make([]float32, 10), []int{0, 1, 5}, 6, make([]float32, 4*6), 6, false, nil)
}

// TestConvEpilogue checks the bias/residual/ReLU tail, tails of every
// length and NaN propagation, against a scalar loop.
func TestConvEpilogue(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for n := 0; n <= 40; n++ {
			for _, withZ := range []bool{false, true} {
				for _, relu := range []bool{false, true} {
					src, z := randFloats(r, n+1), randFloats(r, n+1)
					if n > 3 {
						src[3] = float32(math.NaN())
					}
					bias := float32(r.Float64() - 0.5)
					zz := z
					if !withZ {
						zz = nil
					}
					dst := make([]float32, n)
					ConvEpilogue(dst, src, zz, bias, relu)
					for i := 0; i < n; i++ {
						v := src[i] + bias
						if withZ {
							v += z[i]
						}
						if relu && v < 0 {
							v = 0
						}
						if dst[i] != v && !(math.IsNaN(float64(v)) && math.IsNaN(float64(dst[i]))) {
							t.Fatalf("n=%d z=%v relu=%v: dst[%d] = %v, want %v", n, withZ, relu, i, dst[i], v)
						}
					}
				}
			}
		}
	})
}

// TestConvCompactRow checks the segment-wise tail against ConvEpilogue per
// segment, with segments of every tail length.
func TestConvCompactRow(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(8, 8))
		for trial := 0; trial < 50; trial++ {
			var segs []int
			s, d := 0, 0
			for range 1 + r.IntN(5) {
				n := r.IntN(40)
				s += r.IntN(3)
				segs = append(segs, s, d, n)
				s, d = s+n, d+n+r.IntN(2)
			}
			src, z := randFloats(r, s+1), randFloats(r, d+1)
			src[r.IntN(len(src))] = float32(math.NaN())
			bias := float32(r.Float64())
			for _, withZ := range []bool{false, true} {
				for _, relu := range []bool{false, true} {
					zz := z
					if !withZ {
						zz = nil
					}
					got, want := randFloats(r, d+1), make([]float32, d+1)
					copy(want, got)
					ConvCompactRow(got, src, zz, segs, bias, relu)
					for i := 0; i < len(segs); i += 3 {
						s, d, n := segs[i], segs[i+1], segs[i+2]
						for k := 0; k < n; k++ {
							v := src[s+k] + bias
							if withZ {
								v += z[d+k]
							}
							if relu && v < 0 {
								v = 0
							}
							want[d+k] = v
						}
					}
					for i := range want {
						if want[i] != got[i] && !(want[i] != want[i] && got[i] != got[i]) {
							t.Fatalf("segs %v z=%v relu=%v: dst[%d] = %v, want %v", segs, withZ, relu, i, got[i], want[i])
						}
					}
				}
			}
		}
	})
}
