package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// winoDirect is the oracle: a 3×3, stride-1, pad-1 convolution of x
// (C×H×W) with w (M×C×3×3) in float64, plus bias, z and ReLU.
func winoDirect(x, w, bias, z []float32, C, M, H, W int, relu bool) []float64 {
	y := make([]float64, M*H*W)
	for m := 0; m < M; m++ {
		for oh := 0; oh < H; oh++ {
			for ow := 0; ow < W; ow++ {
				s := float64(bias[m])
				for c := 0; c < C; c++ {
					for kh := 0; kh < 3; kh++ {
						for kw := 0; kw < 3; kw++ {
							ih, iw := oh+kh-1, ow+kw-1
							if ih >= 0 && ih < H && iw >= 0 && iw < W {
								s += float64(w[((m*C+c)*3+kh)*3+kw]) * float64(x[(c*H+ih)*W+iw])
							}
						}
					}
				}
				if z != nil {
					s += float64(z[(m*H+oh)*W+ow])
				}
				if relu && s < 0 {
					s = 0
				}
				y[(m*H+oh)*W+ow] = s
			}
		}
	}
	return y
}

// TestWino23Conv runs a whole F(2×2, 3×3) convolution through
// WinoWeights23, WinoIn23, a plain product per point and WinoOut23, and
// checks it against the direct convolution: odd and even sizes, every
// tile-count tail of the 16-lane kernels, with and without residual and
// ReLU, at every ISA level.
func TestWino23Conv(t *testing.T) {
	testWinoConv(t, rand.New(rand.NewPCG(5, 23)), wino23Conv,
		[][2]int{{1, 1}, {2, 3}, {3, 2}, {5, 7}, {8, 8}, {6, 31}, {4, 32}, {3, 33}, {7, 35}, {2, 66}, {14, 14}, {9, 64}})
}

// testWinoConv checks conv against the direct convolution on each size,
// without and with a residual and ReLU, at every ISA level.
func testWinoConv(t *testing.T, r *rand.Rand, conv func(x, w, bias, z []float32, C, M, H, W int, relu bool) []float32, sizes [][2]int) {
	forEachISA(t, func(t *testing.T) {
		for _, sz := range sizes {
			for _, opt := range []int{0, 1, 2, 3} {
				H, W := sz[0], sz[1]
				C, M := 1+r.IntN(5), 1+r.IntN(4)
				t.Run(fmt.Sprint(H, "x", W, "/", opt), func(t *testing.T) {
					x, w, bias := randFloats(r, C*H*W), randFloats(r, M*C*9), randFloats(r, M)
					var z []float32
					if opt&1 != 0 {
						z = randFloats(r, M*H*W)
					}
					relu := opt&2 != 0
					want := winoDirect(x, w, bias, z, C, M, H, W, relu)
					got := conv(x, w, bias, z, C, M, H, W, relu)
					for i := range want {
						if math.Abs(float64(got[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
							t.Fatalf("y[%d] = %v, want %v", i, got[i], want[i])
						}
					}
				})
			}
		}
	})
}

// wino23Conv is the F(2×2, 3×3) convolution the test checks, with the
// phase planes built by PadCopyRows and slack after every buffer poisoned
// with NaN (a read past the tiles would show).
func wino23Conv(x, w, bias, z []float32, C, M, H, W int, relu bool) []float32 {
	nan := float32(math.NaN())
	Ty, Tx := (H+1)/2, (W+1)/2
	Hq, Wq := Ty+1, Tx+1
	nT := Ty * Tx
	u := make([]float32, 16*M*C)
	WinoWeights23(u, w, M, C)
	v := make([]float32, 16*C*nT)
	planes := make([]float32, 4*Hq*Wq+1)
	for c := 0; c < C; c++ {
		for i := range planes {
			planes[i] = nan
		}
		for s := range 4 {
			ph, pw := s/2, s%2
			d := planes[s*Hq*Wq : (s+1)*Hq*Wq]
			// padded (2r+ph, 2q+pw) = x(2r+ph-1, 2q+pw-1)
			for rr := 0; rr < Hq; rr++ {
				ih := 2*rr + ph - 1
				row := d[rr*Wq : (rr+1)*Wq]
				for q := range row {
					iw := 2*q + pw - 1
					row[q] = 0
					if ih >= 0 && ih < H && iw >= 0 && iw < W {
						row[q] = x[(c*H+ih)*W+iw]
					}
				}
			}
		}
		for ty := 0; ty < Ty; ty++ {
			o := ty * Wq
			WinoIn23(v[c*nT+ty*Tx:], C*nT, planes[o:], planes[Hq*Wq+o:], planes[2*Hq*Wq+o:], planes[3*Hq*Wq+o:], Wq, Tx)
		}
	}
	mm := winoProducts(u, v, 16, M, C, nT)
	y := nanFloats(M*H*W + 5)
	for m := 0; m < M; m++ {
		for ty := 0; ty < Ty; ty++ {
			y0 := y[(m*H+2*ty)*W:]
			var y1, z0, z1 []float32
			if 2*ty+1 < H {
				y1 = y[(m*H+2*ty+1)*W:]
			}
			if z != nil {
				z0 = z[(m*H+2*ty)*W:]
				if y1 != nil {
					z1 = z[(m*H+2*ty+1)*W:]
				}
			}
			WinoOut23(y0, y1, z0, z1, mm[m*nT+ty*Tx:], M*nT, Tx, W, bias[m], relu)
		}
	}
	for i := M * H * W; i < len(y); i++ {
		if y[i] == y[i] {
			panic("WinoOut23 wrote past the output")
		}
	}
	return y[:M*H*W]
}

// TestWino43Conv is TestWino23Conv for F(4×4, 3×3): WinoWeights43,
// WinoIn43 over column-phase planes, a plain product per point and
// WinoOut43, against the direct convolution (tolerance for its larger
// rounding error).
func TestWino43Conv(t *testing.T) {
	testWinoConv(t, rand.New(rand.NewPCG(6, 43)), wino43Conv,
		[][2]int{{1, 1}, {2, 3}, {3, 5}, {4, 4}, {5, 7}, {8, 8}, {6, 31}, {4, 64}, {7, 65}, {9, 66}, {14, 14}, {13, 130}})
}

// wino43Conv is the F(4×4, 3×3) convolution TestWino43Conv checks, with
// NaN-poisoned slack after the buffers.
func wino43Conv(x, w, bias, z []float32, C, M, H, W int, relu bool) []float32 {
	nan := float32(math.NaN())
	Ty, Tx := (H+3)/4, (W+3)/4
	Hp, Wq := 4*Ty+2, Tx+1
	nT := Ty * Tx
	u := make([]float32, 36*M*C)
	WinoWeights43(u, w, M, C)
	v := make([]float32, 36*C*nT)
	planes := make([]float32, 4*Hp*Wq+1)
	for c := 0; c < C; c++ {
		for i := range planes {
			planes[i] = nan
		}
		for pw := range 4 {
			d := planes[pw*Hp*Wq : (pw+1)*Hp*Wq]
			for rr := 0; rr < Hp; rr++ {
				for q := 0; q < Wq; q++ {
					ih, iw := rr-1, 4*q+pw-1
					d[rr*Wq+q] = 0
					if ih >= 0 && ih < H && iw >= 0 && iw < W {
						d[rr*Wq+q] = x[(c*H+ih)*W+iw]
					}
				}
			}
		}
		for ty := 0; ty < Ty; ty++ {
			o := 4 * ty * Wq
			var p [4][]float32
			for pw := range 4 {
				p[pw] = planes[pw*Hp*Wq+o : (pw+1)*Hp*Wq]
			}
			WinoIn43(v[c*nT+ty*Tx:], C*nT, &p, Wq, Tx)
		}
	}
	mm := winoProducts(u, v, 36, M, C, nT)
	y := nanFloats(M*H*W + 5)
	for m := 0; m < M; m++ {
		for ty := 0; ty < Ty; ty++ {
			var ys, zs [4][]float32
			for rr := range 4 {
				if oh := 4*ty + rr; oh < H {
					ys[rr] = y[(m*H+oh)*W:]
					if z != nil {
						zs[rr] = z[(m*H+oh)*W:]
					}
				}
			}
			WinoOut43(&ys, &zs, mm[m*nT+ty*Tx:], M*nT, Tx, W, bias[m], relu)
		}
	}
	for i := M * H * W; i < len(y); i++ {
		if y[i] == y[i] {
			panic("WinoOut43 wrote past the output")
		}
	}
	return y[:M*H*W]
}

// winoProducts is the plain product per Winograd point of the tests:
// mm[(xi·M+m)·nT+t] = Σ_c u[xi·M·C+m·C+c]·v[(xi·C+c)·nT+t], with NaN-
// poisoned slack after it.
func winoProducts(u, v []float32, pts, M, C, nT int) []float32 {
	mm := nanFloats(pts*M*nT + 3)
	for xi := 0; xi < pts; xi++ {
		for m := 0; m < M; m++ {
			for t := 0; t < nT; t++ {
				var s float32
				for c := 0; c < C; c++ {
					s += u[xi*M*C+m*C+c] * v[(xi*C+c)*nT+t]
				}
				mm[(xi*M+m)*nT+t] = s
			}
		}
	}
	return mm
}

// nanFloats returns n NaNs (a read of a slot nothing wrote shows).
func nanFloats(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.NaN())
	}
	return x
}
