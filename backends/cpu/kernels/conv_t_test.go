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
				// Kept columns map to consecutive pixels from a random start;
				// or, half the time, the columns are rows of wq with the
				// first ow kept and tiles of two rows.
				dst := make([]int, c.ncols)
				var tiles []ConvTTile
				if ow := 1 + r.IntN(7); r.IntN(2) == 0 && c.ncols >= ow {
					wq := ow + r.IntN(3)
					rows := c.ncols / wq
					for v := range dst {
						dst[v] = -1
						if q := v % wq; q < ow && v/wq < rows {
							dst[v] = v/wq*ow + q
						}
					}
					for row := 0; row < rows; row += 2 {
						if row+1 < rows {
							tiles = append(tiles, ConvTTile{V0: row * wq, Second: wq, N: 2 * ow})
						} else {
							tiles = ConvTTiles(tiles, row*wq, row*wq+ow)
						}
					}
				} else {
					next := r.IntN(ldy - c.ncols + 1)
					for v := range dst {
						dst[v] = -1
						if r.IntN(5) != 0 {
							dst[v] = next
							next++
						}
					}
					tiles = ConvTTiles(nil, 0, c.ncols)
				}
				covered := make([]bool, c.ncols)
				for _, tl := range tiles {
					for i := 0; i < tl.N; i++ {
						covered[tl.col(i)] = true
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
							if dst[v] < 0 || !covered[v] {
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
					tmp := randFloats(r, ConvTTempLen(len(tiles)))
					for p := 0; p < cw.Panels(); p++ {
						ConvGemmT(cw, p, NewConvTLayout(off, dst, tiles), b, tmp, y, ldy, epi)
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

// TestDepthwiseRows checks DepthwiseRows against a float64 loop over
// random planes (widths around the vector width, 9 and 4 taps, relu on
// and off, NaN inputs), at every ISA level.
func TestDepthwiseRows(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		for it := 0; it < 200; it++ {
			rows, ow := 1+r.IntN(5), 1+r.IntN(70)
			wq := ow + r.IntN(3)
			taps := []int{9, 4}[r.IntN(2)]
			off := make([]int, taps)
			for i := range off {
				off[i] = r.IntN(2*wq + 3)
			}
			hi := 0
			for _, o := range off {
				hi = max(hi, o)
			}
			b := randFloats(r, hi+(rows-1)*wq+ow+r.IntN(3))
			if it%7 == 0 {
				b[r.IntN(len(b))] = float32(math.NaN())
			}
			w, bias, relu := randFloats(r, taps), r.Float32(), r.IntN(2) == 0
			y := randFloats(r, rows*ow+5)
			guard := append([]float32(nil), y[rows*ow:]...)
			DepthwiseRows(y, rows, ow, b, wq, off, w, bias, relu)
			for row := 0; row < rows; row++ {
				for q := 0; q < ow; q++ {
					s := float64(bias)
					for i, o := range off {
						s += float64(w[i]) * float64(b[o+row*wq+q])
					}
					if relu && s < 0 {
						s = 0
					}
					got := y[row*ow+q]
					if s != s {
						if got == got {
							t.Fatalf("it %d: y[%d,%d] = %v, want NaN", it, row, q, got)
						}
						continue
					}
					if math.Abs(float64(got)-s) > 1e-4*(1+math.Abs(s)) {
						t.Fatalf("it %d (ow %d taps %d): y[%d,%d] = %v, want %v", it, ow, taps, row, q, got, s)
					}
				}
			}
			for i, v := range guard {
				if y[rows*ow+i] != v {
					t.Fatalf("it %d: wrote past the output", it)
				}
			}
		}
	})
}
