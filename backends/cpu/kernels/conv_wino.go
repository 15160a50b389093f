package kernels

import "fmt"

// Winograd F(2×2, 3×3) transforms (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2015). A 3×3 stride-1 convolution is
// computed in 2×2 output tiles, each from a 4×4 input tile d:
//
//	Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A
//
// with, in the Winograd domain (16 points ξ = 4a+b), one M×C by C×tiles
// matrix product per point instead of the nine taps' products: 16/36 of
// the multiplications. The caller packs U_ξ = (G g Gᵀ)[a][b] per point
// (WinoWeights23) as ConvWeights and runs ConvGemm per point over the
// transformed input; these functions are the two transforms around it.
//
//	Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//	G  = [1 0 0; ½ ½ ½; ½ -½ ½; 0 0 1]
//	Aᵀ = [1 1 1 0; 0 1 -1 -1]
//
// The input side reads a zero-padded input split by stride-2 phase (as
// PadCopyRows builds it for a stride-2 conv): plane (ph, pw) holds padded
// element (2r+ph, 2q+pw) at r·lds+q, so element (i, j) of the tile at tile
// column t of a tile row is plane (i%2, j%2) at (i/2)·lds + j/2 + t, and a
// run of tiles along a row is a run of contiguous floats in every plane.

// WinoWeights23 writes the 16 Winograd-domain weight matrices of a 3×3
// convolution: w holds M×C 3×3 kernels (w[((m·C+c)·3+kh)·3+kw]) and
// u[ξ·M·C + m·C + c] gets (G g Gᵀ)[ξ/4][ξ%4] of kernel (m, c). len(u) must
// be at least 16·M·C. The arithmetic is done in float64.
func WinoWeights23(u, w []float32, M, C int) {
	g := [][3]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}
	winoWeights("WinoWeights23", u, w, M, C, g)
}

// winoWeights writes (G g Gᵀ)[a][b] of each 3×3 kernel g of w (M×C) to
// u[(a·n+b)·M·C + m·C + c], for the n×3 matrix G, in float64.
func winoWeights(name string, u, w []float32, M, C int, g [][3]float64) {
	n := len(g)
	if M < 0 || C < 0 || len(w) < M*C*9 || len(u) < n*n*M*C {
		panic(fmt.Sprintf("kernels: %s M=%d C=%d with %d weights into %d", name, M, C, len(w), len(u)))
	}
	var t [8][3]float64 // G·k (n ≤ 8)
	for m := 0; m < M; m++ {
		for c := 0; c < C; c++ {
			k := w[(m*C+c)*9 : (m*C+c)*9+9]
			for a := range n {
				for j := range 3 {
					t[a][j] = 0
					for i := range 3 {
						t[a][j] += g[a][i] * float64(k[i*3+j])
					}
				}
			}
			for a := range n {
				for b := range n {
					var s float64 // (G·k·Gᵀ)[a][b]
					for j := range 3 {
						s += t[a][j] * g[b][j]
					}
					u[(a*n+b)*M*C+m*C+c] = float32(s)
				}
			}
		}
	}
}

// WinoIn23 transforms n input tiles along one tile row: p00, p01, p10 and
// p11 are the stride-phase planes (row stride lds) at the tile row's first
// tile, and point ξ of tile t is written to dst[ξ·ldd + t].
func WinoIn23(dst []float32, ldd int, p00, p01, p10, p11 []float32, lds, n int) {
	if n <= 0 {
		return
	}
	need := lds + n + 1 // the planes' furthest read: (1, 1) from the base
	if ldd < n || len(dst) < 15*ldd+n || len(p00) < need || len(p01) < need || len(p10) < need || len(p11) < need {
		panic(fmt.Sprintf("kernels: WinoIn23 %d tiles (dst %d floats at %d, planes %d/%d/%d/%d at %d)", n, len(dst), ldd, len(p00), len(p01), len(p10), len(p11), lds))
	}
	if winoIn23Arch(dst, ldd, p00, p01, p10, p11, lds, n) {
		return
	}
	planes := [2][2][]float32{{p00, p01}, {p10, p11}}
	for t := 0; t < n; t++ {
		var tt [4][4]float32 // Bᵀ applied along the rows' columns
		for i := range 4 {
			r := planes[i%2]
			o := i/2*lds + t
			d0, d1, d2, d3 := r[0][o], r[1][o], r[0][o+1], r[1][o+1]
			tt[i] = [4]float32{d0 - d2, d1 + d2, d2 - d1, d1 - d3}
		}
		for b := range 4 {
			dst[0*ldd+b*ldd+t] = tt[0][b] - tt[2][b]
			dst[4*ldd+b*ldd+t] = tt[1][b] + tt[2][b]
			dst[8*ldd+b*ldd+t] = tt[2][b] - tt[1][b]
			dst[12*ldd+b*ldd+t] = tt[1][b] - tt[3][b]
		}
	}
}

// WinoOut23 transforms n tiles of one tile row back into two output rows:
// point ξ of tile t is src[ξ·lds + t]; output columns 2t and 2t+1 (those
// below cols) of y0 and, when y1 is not nil, of y1 get the tile's values
// plus bias (plus z0/z1, laid out like y0/y1, when not nil), then
// max(·, 0) with relu (NaN kept).
func WinoOut23(y0, y1, z0, z1, src []float32, lds, n, cols int, bias float32, relu bool) {
	if n <= 0 || cols <= 0 {
		return
	}
	if cols > 2*n || lds < n || len(src) < 15*lds+n || len(y0) < cols || y1 != nil && len(y1) < cols ||
		z0 != nil && len(z0) < cols || z1 != nil && len(z1) < cols || z1 != nil && (z0 == nil || y1 == nil) || z0 != nil && y1 != nil && z1 == nil {
		panic(fmt.Sprintf("kernels: WinoOut23 %d tiles, %d columns (src %d floats at %d; y %d/%d)", n, cols, len(src), lds, len(y0), len(y1)))
	}
	if winoOut23Arch(y0, y1, z0, z1, src, lds, n, cols, bias, relu) {
		return
	}
	for t := 0; t < n; t++ {
		var s [4][2]float32 // Aᵀ applied along the columns
		for a := range 4 {
			m0, m1, m2, m3 := src[(4*a)*lds+t], src[(4*a+1)*lds+t], src[(4*a+2)*lds+t], src[(4*a+3)*lds+t]
			s[a] = [2]float32{m0 + m1 + m2, m1 - m2 - m3}
		}
		for q := range 2 {
			x := 2*t + q
			if x >= cols {
				break
			}
			epiStore(y0, z0, x, s[0][q]+s[1][q]+s[2][q], bias, relu)
			if y1 != nil {
				epiStore(y1, z1, x, s[1][q]-s[2][q]-s[3][q], bias, relu)
			}
		}
	}
}

// WinoFast reports whether the current ISA level has the transforms in
// assembly (AVX-512): elsewhere they run scalar Go, too slow to gain.
func WinoFast() bool { return winoFastArch() }
