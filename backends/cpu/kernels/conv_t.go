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

// ConvTTile is one tile of ConvGemmT: N columns (1..14), the first
// h = ceil(N/2) of them V0..V0+h-1 and the rest from V0+Second on
// (Second = h: one run of N columns; more: two runs, such as the same
// columns of two rows of a padded plane).
type ConvTTile struct{ V0, Second, N int }

// ConvTTiles appends to dst the plain tiling of columns [v0, v1): runs of
// at most 14, spread evenly.
func ConvTTiles(dst []ConvTTile, v0, v1 int) []ConvTTile {
	n := v1 - v0
	nt := (n + convTMR - 1) / convTMR
	for t := 0; t < nt; t++ {
		a, b := v0+t*n/nt, v0+(t+1)*n/nt
		dst = append(dst, ConvTTile{V0: a, Second: (b - a + 1) / 2, N: b - a})
	}
	return dst
}

// ConvTTempLen returns the floats of the tmp buffer ConvGemmT needs for
// the given number of tiles.
func ConvTTempLen(tiles int) int { return tiles * convTTileRows * convTPanel }

// col returns the column of pixel r of tile t.
func (t ConvTTile) col(r int) int {
	if h := (t.N + 1) / 2; r >= h {
		return t.V0 + t.Second + r - h
	}
	return t.V0 + r
}

// ConvTFast reports whether ConvGemmT has a SIMD kernel at the current
// ISA level (elsewhere it runs a plain-Go loop, correct but slow).
func ConvTFast() bool { return convTKernel(CurrentISA(), 1) != nil }

// ConvTLayout is the column side of ConvGemmT, checked once when it is
// made: the B row offsets, the tiles and the output pixel of each of
// their columns.
type ConvTLayout struct {
	off    []int
	dst    []int
	tiles  []ConvTTile
	d0     []int    // per tile: the first output pixel, or -1 (none)
	pmask  []uint32 // per tile: bit r set when its column r is an output pixel
	bLen   int      // floats of b the columns read
	dmax   int      // the largest output pixel, -1 if none
	ncols  int
	hasPix bool
}

// NewConvTLayout checks and returns the layout of ConvGemmT's columns:
// row k of B (k < len(off)) is b[off[k]:], and column v of a row is
// b[off[k]+v]; only the tiles' columns are computed, and column v is
// output pixel dst[v] (dropped when dst[v] < 0). Within a tile the kept
// columns, in order, must map to consecutive pixels. It panics on a
// layout that breaks these rules (a caller's bug, like a bad shape).
func NewConvTLayout(off, dst []int, tiles []ConvTTile) *ConvTLayout {
	l := &ConvTLayout{off: off, dst: dst, tiles: tiles, d0: make([]int, len(tiles)), pmask: make([]uint32, len(tiles)), dmax: -1}
	lo, hi := 0, 0
	for i, o := range off {
		if i == 0 || o < lo {
			lo = o
		}
		hi = max(hi, o)
	}
	if lo < 0 {
		panic(fmt.Sprintf("kernels: ConvTLayout B row offset %d", lo))
	}
	for i, t := range tiles {
		h := (t.N + 1) / 2
		end := max(t.V0+h, t.V0+t.Second+t.N-h)
		if t.N < 1 || t.N > convTMR || t.V0 < 0 || t.Second < h || end > len(dst) {
			panic(fmt.Sprintf("kernels: ConvTLayout tile %+v outside %d columns", t, len(dst)))
		}
		l.ncols = max(l.ncols, end)
		l.d0[i] = -1
		prev := -1
		for r := 0; r < t.N; r++ {
			d := dst[t.col(r)]
			if d < 0 {
				continue
			}
			if prev >= 0 && d != prev+1 {
				panic(fmt.Sprintf("kernels: ConvTLayout tile %+v: output pixels %d then %d are not consecutive", t, prev, d))
			}
			if prev < 0 {
				l.d0[i] = d
			}
			l.pmask[i] |= 1 << r
			prev, l.dmax = d, max(l.dmax, d)
		}
	}
	l.bLen = hi + l.ncols
	l.hasPix = l.dmax >= 0
	return l
}

// Tiles returns the number of tiles (ConvTTempLen's argument).
func (l *ConvTLayout) Tiles() int { return len(l.tiles) }

// ConvGemmT computes output channels [32·panel, min(M, 32·panel+32)) of
// Y = W·B over all of K (len(off) of the layout must be K) for the
// columns of the layout's tiles, reading B from b: the result for channel
// m and column v goes to y[m*ldy + dst[v]]. epi (optional; Bias indexed by
// channel, Z laid out like y) is applied on the way. tmp holds partial
// tiles between K blocks (len >= ConvTTempLen(l.Tiles())).
func ConvGemmT(cw *ConvWeightsT, panel int, l *ConvTLayout, b, tmp, y []float32, ldy int, epi *ConvEpi) {
	m0 := panel * convTPanel
	if panel < 0 || m0 >= cw.M || len(l.off) != cw.K || len(tmp) < ConvTTempLen(len(l.tiles)) || ldy < 0 || len(b) < l.bLen {
		panic(fmt.Sprintf("kernels: ConvGemmT panel %d of %d×%d, %d offsets, %d floats of B for %d", panel, cw.M, cw.K, len(l.off), len(b), l.bLen))
	}
	m1 := min(cw.M, m0+convTPanel)
	if cw.K == 0 || !l.hasPix {
		return
	}
	span := (m1-1-m0)*ldy + l.dmax + 1
	if l.dmax >= ldy && m1-m0 > 1 || m0*ldy+span > len(y) {
		panic(fmt.Sprintf("kernels: ConvGemmT output pixels up to %d outside %d floats (ldy %d)", l.dmax, len(y), ldy))
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
	isa := CurrentISA()
	if convTKernel(isa, 1) == nil {
		convTGeneric(cw, w, m1-m0, b, l.off, l.dst, l.tiles, tmp, y[m0*ldy:], ldy, epi, m0)
		return
	}
	yp := &y[m0*ldy]
	zp := z
	if zp == nil {
		zp = yp // never read without flags&2
	}
	off := l.off
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
		for i, t := range l.tiles {
			if f != 0 && l.pmask[i] == 0 {
				continue // the final store of a tile with no pixel
			}
			convTKernel(isa, t.N)(kcb, &w[k0*convTPanel], &b[t.V0], &off[k0], &tmp[i*convTTileRows*convTPanel], acc, yp, ldy, l.d0[i], l.pmask[i], m1-m0, bias, zp, f, t.Second)
		}
	}
}

// convTGeneric is the plain-Go ConvGemmT of one panel (rows channels; y,
// and epi.Z from channel m0 on, start at the panel's first channel).
func convTGeneric(cw *ConvWeightsT, w []float32, rows int, b []float32, off []int, dst []int, tiles []ConvTTile, tmp, y []float32, ldy int, epi *ConvEpi, m0 int) {
	for _, tl := range tiles {
		t := tmp[:tl.N*convTPanel]
		clear(t)
		for k := 0; k < cw.K; k++ {
			wk := w[k*convTPanel : k*convTPanel+rows]
			for r := 0; r < tl.N; r++ {
				bv := b[off[k]+tl.col(r)]
				tv := t[r*convTPanel : r*convTPanel+rows]
				for j, wv := range wk {
					tv[j] += bv * wv
				}
			}
		}
		for r := 0; r < tl.N; r++ {
			d := dst[tl.col(r)]
			if d < 0 {
				continue
			}
			for j := 0; j < rows; j++ {
				s := t[r*convTPanel+j]
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
}
