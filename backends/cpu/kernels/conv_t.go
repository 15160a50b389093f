package kernels

import "fmt"

// Transposed implicit-GEMM convolution: output channels in the vector
// lanes. ConvGemm puts output pixels in the lanes, which wastes lanes when
// a plane has few pixels (7×7 = 49 fills 64); here a tile is up to
// convTMR pixels (broadcast from the B rows where they lie) times a panel
// of 32 output channels (the weights, packed K×32 per panel), so every
// lane does useful work when the channel count is a multiple of 32. The
// final K block scatters the tile into the channel-major output, with
// bias, residual and ReLU applied on the way.

// convTMR is the most pixels of a ConvGemmT tile; convTPanel the channels
// of a panel (two 16-lane vectors).
const (
	convTMR    = 14
	convTPanel = 32
)

// convTKcTarget is the K block depth of ConvGemmT: one panel's block of
// weights (kc × 128 bytes) and the tiles of a column range stay in L1.
var convTKcTarget = 128

// ConvWeightsT is an M×K matrix packed for ConvGemmT: panels of 32 rows
// (output channels), each stored k-major (element (m, k) of panel p at
// data[p*32*K + k*32 + m-32p]), the last one padded with zero rows.
type ConvWeightsT struct {
	M, K int
	kc   int
	data []float32
}

// ConvWeightsTLen returns the floats ConvWeightsT.Pack needs for M×K.
func ConvWeightsTLen(M, K int) int { return (M + convTPanel - 1) / convTPanel * convTPanel * K }

// PackConvWeightsT packs the M×K row-major matrix w (leading dimension
// ld) for ConvGemmT.
func PackConvWeightsT(w []float32, ld, M, K int) *ConvWeightsT {
	cw := new(ConvWeightsT)
	cw.Pack(make([]float32, ConvWeightsTLen(M, K)), w, ld, M, K)
	return cw
}

// Pack packs w into dst (len >= ConvWeightsTLen(M, K)), which cw then uses.
func (cw *ConvWeightsT) Pack(dst, w []float32, ld, M, K int) {
	if M < 0 || K < 0 {
		panic(fmt.Sprintf("kernels: PackConvWeightsT with M=%d K=%d", M, K))
	}
	checkMatrix("W", w, M, K, ld)
	n := ConvWeightsTLen(M, K)
	if len(dst) < n {
		panic(fmt.Sprintf("kernels: PackConvWeightsT dst has %d floats, want %d", len(dst), n))
	}
	kc := K
	if nb := (K + convTKcTarget - 1) / convTKcTarget; nb > 1 {
		kc = (K + nb - 1) / nb
	}
	*cw = ConvWeightsT{M: M, K: K, kc: max(kc, 1), data: dst[:n]}
	for p := 0; p*convTPanel < M; p++ {
		panel := cw.data[p*convTPanel*K : (p+1)*convTPanel*K]
		for j := 0; j < convTPanel; j++ {
			m := p*convTPanel + j
			if m >= M {
				for k := 0; k < K; k++ {
					panel[k*convTPanel+j] = 0
				}
				continue
			}
			row := w[m*ld : m*ld+K]
			for k, v := range row {
				panel[k*convTPanel+j] = v
			}
		}
	}
}

// Panels returns the number of 32-channel panels.
func (cw *ConvWeightsT) Panels() int { return (cw.M + convTPanel - 1) / convTPanel }

// convTTileRows is the rows of one tile's partial sums in tmp: 16, for
// the 16×16 transposes of the final store.
const convTTileRows = 16

// ConvTTempLen returns the floats of the tmp buffer ConvGemmT needs for
// ncols columns.
func ConvTTempLen(ncols int) int {
	return (ncols + convTMR - 1) / convTMR * convTTileRows * convTPanel
}

// ConvTFast reports whether ConvGemmT has a SIMD kernel at the current
// ISA level (elsewhere it runs a plain-Go loop, correct but slow).
func ConvTFast() bool { return convTKernel(CurrentISA(), 1) != nil }

// ConvGemmT computes output channels [32·panel, min(M, 32·panel+32)) of
// Y = W·B over all of K, for ncols columns of B: row k of B is
// b[off[k] : off[k]+ncols] (len(off) >= K). Column v is output pixel
// dst[v] (dropped when dst[v] < 0), and the kept columns must map to
// consecutive pixels in order (each one's pixel is the previous one's
// plus one): the result for channel m goes to y[m*ldy + dst[v]]. epi (optional; Bias indexed by channel, Z laid out
// like y) is applied on the way. tmp holds partial tiles between K blocks
// (len >= ConvTTempLen(ncols)).
func ConvGemmT(cw *ConvWeightsT, panel int, b []float32, off []int, ncols int, dst []int, tmp, y []float32, ldy int, epi *ConvEpi) {
	m0 := panel * convTPanel
	if panel < 0 || m0 >= cw.M || len(off) < cw.K || ncols < 0 || len(dst) < ncols || len(tmp) < ConvTTempLen(ncols) || ldy < 0 {
		panic(fmt.Sprintf("kernels: ConvGemmT panel %d of %d×%d, %d offsets, %d columns", panel, cw.M, cw.K, len(off), ncols))
	}
	m1 := min(cw.M, m0+convTPanel)
	if ncols == 0 || cw.K == 0 {
		return
	}
	off = off[:cw.K]
	lo, hi := off[0], off[0]
	for _, o := range off {
		lo, hi = min(lo, o), max(hi, o)
	}
	if lo < 0 || hi+ncols > len(b) {
		panic(fmt.Sprintf("kernels: ConvGemmT B rows at offsets [%d,%d] + %d columns outside %d floats", lo, hi, ncols, len(b)))
	}
	dmin, dmax, prev := -1, -1, -1
	for _, d := range dst[:ncols] {
		if d < 0 {
			continue
		}
		if prev >= 0 && d != prev+1 {
			panic(fmt.Sprintf("kernels: ConvGemmT output pixels %d then %d are not consecutive", prev, d))
		}
		if dmin < 0 {
			dmin = d
		}
		prev, dmax = d, d
	}
	if dmin < 0 {
		return // no column is an output pixel
	}
	span := (m1-1-m0)*ldy + dmax + 1
	if dmax >= ldy && m1-m0 > 1 || m0*ldy+span > len(y) {
		panic(fmt.Sprintf("kernels: ConvGemmT output pixels up to %d outside %d floats (ldy %d)", dmax, len(y), ldy))
	}
	flags := 8
	var bias, z *float32
	if epi != nil {
		if epi.Bias != nil {
			if len(epi.Bias) < m1 {
				panic(fmt.Sprintf("kernels: ConvGemmT bias has %d rows, want %d", len(epi.Bias), m1))
			}
			flags |= 1
			bias = &epi.Bias[m0]
		}
		if epi.Z != nil {
			if m0*ldy+span > len(epi.Z) {
				panic(fmt.Sprintf("kernels: ConvGemmT residual has %d floats, want %d", len(epi.Z), m0*ldy+span))
			}
			flags |= 2
			z = &epi.Z[m0*ldy]
		}
		if epi.Relu {
			flags |= 4
		}
	}
	w := cw.data[panel*convTPanel*cw.K:]
	nt := (ncols + convTMR - 1) / convTMR
	if convTKernel(CurrentISA(), 1) == nil {
		convTGeneric(cw, w, m1-m0, b, off, ncols, dst, tmp, y[m0*ldy:], ldy, epi, m0)
		return
	}
	yp := &y[m0*ldy]
	var zp0 *float32
	if z != nil {
		zp0 = z
	}
	for k0 := 0; k0 < cw.K; k0 += cw.kc {
		kcb := min(cw.kc, cw.K-k0)
		f := 0
		if k0+kcb >= cw.K {
			f = flags
		}
		acc := 0
		if k0 > 0 {
			acc = 1
		}
		for t := 0; t < nt; t++ {
			v0, v1 := t*ncols/nt, (t+1)*ncols/nt
			d0, pmask := 0, uint32(0)
			if f != 0 {
				d0 = -1
				for r, d := range dst[v0:v1] {
					if d >= 0 {
						pmask |= 1 << r
						if d0 < 0 {
							d0 = d
						}
					}
				}
				if pmask == 0 {
					continue // the final store of a tile with no pixel
				}
			}
			fn := convTKernel(CurrentISA(), v1-v0)
			zt := zp0
			if zt == nil {
				zt = yp // never read without flags&2
			}
			fn(kcb, &w[k0*convTPanel], &b[v0], &off[k0], &tmp[t*convTTileRows*convTPanel], acc, yp, ldy, d0, pmask, m1-m0, bias, zt, f)
		}
	}
}

// convTGeneric is the plain-Go ConvGemmT of one panel (rows channels; y,
// and epi.Z from channel m0 on, start at the panel's first channel).
func convTGeneric(cw *ConvWeightsT, w []float32, rows int, b []float32, off []int, ncols int, dst []int, tmp, y []float32, ldy int, epi *ConvEpi, m0 int) {
	t := tmp[:ncols*convTPanel]
	clear(t)
	for k := 0; k < cw.K; k++ {
		wk := w[k*convTPanel : k*convTPanel+rows]
		brow := b[off[k] : off[k]+ncols]
		for v, bv := range brow {
			tv := t[v*convTPanel : v*convTPanel+rows]
			for j, wv := range wk {
				tv[j] += bv * wv
			}
		}
	}
	for v := 0; v < ncols; v++ {
		d := dst[v]
		if d < 0 {
			continue
		}
		for j := 0; j < rows; j++ {
			s := t[v*convTPanel+j]
			if epi != nil {
				if epi.Bias != nil {
					s += epi.Bias[m0+j]
				}
				if epi.Z != nil {
					s += epi.Z[(m0+j)*ldy+d]
				}
				if epi.Relu && s < 0 {
					s = 0
				}
			}
			y[j*ldy+d] = s
		}
	}
}
