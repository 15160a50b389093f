package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestConvGemmT checks the transposed-orientation conv GEMM and its
// gathering epilogue against a plain loop: random channel counts (partial
// panels), depths, pixel counts, offsets, segment layouts, bias, residual
// and ReLU.
func TestConvGemmT(t *testing.T) {
	if !ConvTSupported() {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(5, 7))
	for trial := 0; trial < 60; trial++ {
		M, K, rows := 1+r.IntN(80), 1+r.IntN(300), 1+r.IntN(ConvTRows)
		t.Run(fmt.Sprint(M, K, rows), func(t *testing.T) {
			w := randFloats(r, M*K)
			cw := PackConvWeightsT(w, K, M, K)
			blen := 200 + rows
			b := randFloats(r, blen)
			off := make([]int, K)
			for k := range off {
				off[k] = r.IntN(blen - rows + 1)
			}
			// Lanes in runs; some dropped, each run shifted.
			ldy := 40
			var segs []int
			dest := make([]int, rows) // -1: dropped
			pos := r.IntN(3)
			for l := 0; l < rows; {
				n := 1 + r.IntN(rows-l)
				if r.IntN(4) == 0 {
					for i := l; i < l+n; i++ {
						dest[i] = -1
					}
				} else {
					mask := (1<<n - 1) << l
					segs = append(segs, mask, pos-l)
					for i := l; i < l+n; i++ {
						dest[i] = pos + i - l
					}
					pos += n + r.IntN(2)
				}
				l += n
			}
			if len(segs) == 0 {
				segs = []int{1, 0}
				dest[0] = 0
			}
			bias, z := randFloats(r, M), randFloats(r, M*ldy)
			for _, mode := range []int{0, 1, 2, 3, 4, 7} {
				bs, zs, relu := bias, z, mode&4 != 0
				if mode&1 == 0 {
					bs = nil
				}
				if mode&2 == 0 {
					zs = nil
				}
				y := randFloats(r, M*ldy)
				want := append([]float32(nil), y...)
				for m := 0; m < M; m++ {
					for l := 0; l < rows; l++ {
						if dest[l] < 0 {
							continue
						}
						var s float64
						for k := 0; k < K; k++ {
							s += float64(w[m*K+k]) * float64(b[off[k]+l])
						}
						if bs != nil {
							s += float64(bs[m])
						}
						if zs != nil {
							s += float64(zs[m*ldy+dest[l]])
						}
						if relu {
							s = max(s, 0)
						}
						want[m*ldy+dest[l]] = float32(s)
					}
				}
				tile := make([]float32, ConvTRows*ConvTCols)
				ConvGemmT(cw, 0, cw.Panels(), b, off, rows, y, ldy, segs, bs, zs, relu, tile)
				for i := range want {
					if math.Abs(float64(y[i]-want[i])) > 1e-4*float64(K) {
						t.Fatalf("mode %d: y[%d] = %v, want %v (segs %v)", mode, i, y[i], want[i], segs)
					}
				}
			}
		})
	}
}
