package kernels

import "fmt"

// Winograd F(4×4, 3×3): 4×4 output tiles from 6×6 input tiles, 36 points
// (ξ = 6a+b), 36 products per tile instead of 144 (a quarter), with the
// interpolation points 0, ±1, ±2 and ∞:
//
//	Bᵀ = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
//	      0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
//	G  = [¼ 0 0; -⅙ -⅙ -⅙; -⅙ ⅙ -⅙; 1/24 1/12 ⅙; 1/24 -1/12 ⅙; 0 0 1]
//	Aᵀ = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
//
// The input side reads a zero-padded input split by column phase mod 4:
// plane pw holds padded element (r, 4q+pw) at r·lds+q, so element (i, j)
// of the tile at tile column t of a tile row is plane j%4 at
// i·lds + j/4 + t (from the tile row's first padded row).

// WinoWeights43 writes the 36 Winograd-domain weight matrices of a 3×3
// convolution: w holds M×C 3×3 kernels and u[ξ·M·C + m·C + c] gets
// (G g Gᵀ)[ξ/6][ξ%6] of kernel (m, c). len(u) must be at least 36·M·C.
func WinoWeights43(u, w []float32, M, C int) {
	g := [][3]float64{{1.0 / 4, 0, 0}, {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
		{1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}}
	winoWeights("WinoWeights43", u, w, M, C, g)
}

// winoB43 applies Bᵀ to the six values e.
func winoB43(e [6]float32) [6]float32 {
	return [6]float32{
		4*e[0] - 5*e[2] + e[4],
		e[3] + e[4] - 4*(e[1]+e[2]),
		e[4] - e[3] + 4*(e[1]-e[2]),
		e[4] - e[2] + 2*(e[3]-e[1]),
		e[4] - e[2] - 2*(e[3]-e[1]),
		e[5] + 4*e[1] - 5*e[3],
	}
}

// winoA43 applies Aᵀ to the six values m.
func winoA43(m [6]float32) [4]float32 {
	s12, d12, s34, d34 := m[1]+m[2], m[1]-m[2], m[3]+m[4], m[3]-m[4]
	return [4]float32{m[0] + s12 + s34, d12 + 2*d34, s12 + 4*s34, d12 + 8*d34 + m[5]}
}

// WinoIn43 transforms n input tiles along one tile row: planes are the
// four column-phase planes (row stride lds) at the tile row's first padded
// row and first tile, and point ξ of tile t is written to dst[ξ·ldd + t].
func WinoIn43(dst []float32, ldd int, planes *[4][]float32, lds, n int) {
	if n <= 0 {
		return
	}
	need := 5*lds + n + 1 // the furthest read: row 5, plane 1, offset 1
	for _, p := range planes {
		if len(p) < need-1 {
			panic(fmt.Sprintf("kernels: WinoIn43 %d tiles: a plane has %d floats, want %d", n, len(p), need))
		}
	}
	if ldd < n || len(dst) < 35*ldd+n || len(planes[0]) < need || len(planes[1]) < need {
		panic(fmt.Sprintf("kernels: WinoIn43 %d tiles (dst %d floats at %d, planes at %d)", n, len(dst), ldd, lds))
	}
	if winoIn43Arch(dst, ldd, planes, lds, n) {
		return
	}
	for t := 0; t < n; t++ {
		var r [6][6]float32 // Bᵀ along each row's columns
		for i := range 6 {
			o := i*lds + t
			r[i] = winoB43([6]float32{planes[0][o], planes[1][o], planes[2][o], planes[3][o], planes[0][o+1], planes[1][o+1]})
		}
		for b := range 6 {
			v := winoB43([6]float32{r[0][b], r[1][b], r[2][b], r[3][b], r[4][b], r[5][b]})
			for a := range 6 {
				dst[(6*a+b)*ldd+t] = v[a]
			}
		}
	}
}

// WinoOut43 transforms n tiles of one tile row back into four output
// rows: point ξ of tile t is src[ξ·lds + t]; output columns 4t to 4t+3
// (those below cols) of each y[r] that is not nil get the tile's values
// plus bias (plus z[r], laid out like y[r], when z[r] is not nil), then
// max(·, 0) with relu (NaN kept). Either every row present has its z or
// none does.
func WinoOut43(y, z *[4][]float32, src []float32, lds, n, cols int, bias float32, relu bool) {
	if n <= 0 || cols <= 0 {
		return
	}
	if cols > 4*n || lds < n || len(src) < 35*lds+n || y[0] == nil {
		panic(fmt.Sprintf("kernels: WinoOut43 %d tiles, %d columns (src %d floats at %d)", n, cols, len(src), lds))
	}
	for r := range 4 {
		if y[r] != nil && len(y[r]) < cols || z[r] != nil && (y[r] == nil || len(z[r]) < cols) || y[r] != nil && (z[r] == nil) != (z[0] == nil) ||
			r > 0 && y[r] != nil && y[r-1] == nil {
			panic(fmt.Sprintf("kernels: WinoOut43 row %d: %d floats, residual %d, want %d", r, len(y[r]), len(z[r]), cols))
		}
	}
	if winoOut43Arch(y, z, src, lds, n, cols, bias, relu) {
		return
	}
	for t := 0; t < n; t++ {
		var s [6][4]float32 // Aᵀ along the points' columns
		for a := range 6 {
			s[a] = winoA43([6]float32{src[(6*a)*lds+t], src[(6*a+1)*lds+t], src[(6*a+2)*lds+t], src[(6*a+3)*lds+t], src[(6*a+4)*lds+t], src[(6*a+5)*lds+t]})
		}
		for q := range 4 {
			x := 4*t + q
			if x >= cols {
				break
			}
			o := winoA43([6]float32{s[0][q], s[1][q], s[2][q], s[3][q], s[4][q], s[5][q]})
			for r := range 4 {
				if y[r] != nil {
					epiStore(y[r], z[r], x, o[r], bias, relu)
				}
			}
		}
	}
}
