package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestConvGemmT checks ConvGemmT against a plain loop in float64 over
// random shapes (channel edges, several K blocks, tiles of every width),
// offsets, dropped columns and epilogues, at every ISA level.
func TestConvGemmT(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, c := range []struct{ M, K, ncols int }{
			{1, 1, 1}, {32, 7, 14}, {33, 9, 15}, {64, 300, 56}, {29, 129, 17}, {96, 257, 49}, {5, 5, 3}, {40, 1, 210},
		} {
			t.Run(fmt.Sprint(c.M, c.K, c.ncols), func(t *testing.T) {
				w := randFloats(r, c.M*c.K)
				cw := PackConvWeightsT(w, c.K, c.M, c.K)
				blen := 3*c.ncols + 40
				b := randFloats(r, blen)
				off := make([]int, c.K)
				for k := range off {
					off[k] = r.IntN(blen - c.ncols + 1)
				}
				off[c.K-1] = blen - c.ncols
				ldy := c.ncols + r.IntN(4)
				// Kept columns map to consecutive pixels from a random start.
				dst := make([]int, c.ncols)
				next := r.IntN(ldy - c.ncols + 1)
				for v := range dst {
					dst[v] = -1
					if r.IntN(5) != 0 {
						dst[v] = next
						next++
					}
				}
				for mode := 0; mode < 4; mode++ {
					y := randFloats(r, c.M*ldy)
					want := append([]float32(nil), y...)
					var epi *ConvEpi
					if mode > 0 {
						epi = &ConvEpi{Bias: randFloats(r, c.M), Z: randFloats(r, len(y)), Relu: mode != 1}
						if mode == 2 {
							epi.Bias = nil
						}
						if mode == 3 {
							epi.Z = nil
						}
					}
					for m := 0; m < c.M; m++ {
						for v := 0; v < c.ncols; v++ {
							if dst[v] < 0 {
								continue
							}
							var s float64
							for k := 0; k < c.K; k++ {
								s += float64(w[m*c.K+k]) * float64(b[off[k]+v])
							}
							if epi != nil {
								if epi.Bias != nil {
									s += float64(epi.Bias[m])
								}
								if epi.Z != nil {
									s += float64(epi.Z[m*ldy+dst[v]])
								}
								if epi.Relu {
									s = math.Max(s, 0)
								}
							}
							want[m*ldy+dst[v]] = float32(s)
						}
					}
					tmp := randFloats(r, ConvTTempLen(c.ncols))
					for p := 0; p < cw.Panels(); p++ {
						ConvGemmT(cw, p, b, off, c.ncols, dst, tmp, y, ldy, epi)
					}
					for i := range want {
						if d := math.Abs(float64(y[i] - want[i])); d > 1e-3*(1+math.Abs(float64(want[i]))) {
							t.Fatalf("mode %d: y[%d] = %v, want %v", mode, i, y[i], want[i])
						}
					}
				}
			})
		}
	})
}

// TestPadCopyRows checks PadCopyRows against the definition on random
// geometries (pads and widths around the vector width), and that it
// writes nothing past the last row.
func TestPadCopyRows(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 9))
		for i := 0; i < 600; i++ {
			cs := 1 + r.IntN(3)
			n, lpad, w := 1+r.IntN(6), r.IntN(20), r.IntN(40)
			ldd := lpad + w + r.IntN(20)
			if ldd == 0 {
				ldd = 1
			}
			lds := w*cs + r.IntN(5)
			src := randFloats(r, (n-1)*lds+max(0, (w-1)*cs+1)+r.IntN(3))
			dst := randFloats(r, n*ldd+7)
			guard := append([]float32(nil), dst[n*ldd:]...)
			PadCopyRows(dst, ldd, src, lds, n, lpad, w, cs)
			for row := 0; row < n; row++ {
				for q := 0; q < ldd; q++ {
					want := float32(0)
					if q >= lpad && q < lpad+w {
						want = src[row*lds+(q-lpad)*cs]
					}
					if got := dst[row*ldd+q]; got != want {
						t.Fatalf("cs=%d n=%d ldd=%d lpad=%d w=%d lds=%d: row %d col %d = %v, want %v", cs, n, ldd, lpad, w, lds, row, q, got, want)
					}
				}
			}
			for j, v := range guard {
				if dst[n*ldd+j] != v {
					t.Fatalf("n=%d ldd=%d lpad=%d w=%d: wrote past the last row", n, ldd, lpad, w)
				}
			}
		}
	})
}
