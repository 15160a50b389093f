package kernels

import "fmt"

// The transposed orientation of the implicit-GEMM convolution, for small
// images (few output pixels, many channels): output pixels are the rows of
// the micro-tile (14 at a time, each step broadcasting one input float per
// pixel read in place) and output channels its 32 columns (a packed weight
// panel), so that a 7×7 or 14×14 image wastes few lanes. The tile is then
// transposed into the NCHW output by a gathering epilogue that also adds
// bias and residual and applies ReLU. AVX-512 only (ConvTSupported).

// ConvTRows is the most pixels (tile rows) ConvGemmT takes per call.
const ConvTRows = 14

// ConvTCols is the channels per weight panel.
const ConvTCols = 32

// ConvTSupported reports whether ConvGemmT runs at the current ISA level.
func ConvTSupported() bool { return convTArch() }

// ConvWeightsT is an M×K weight matrix packed as panels of ConvTCols
// output channels: panel p is K rows of 32 floats, row kk holding
// W[p*32+j][kk] (zero past M).
type ConvWeightsT struct {
	M, K int
	data []float32
}

// PackConvWeightsT packs the M×K row-major matrix w (leading dimension ld).
func PackConvWeightsT(w []float32, ld, M, K int) *ConvWeightsT {
	checkMatrix("W", w, M, K, ld)
	panels := (M + ConvTCols - 1) / ConvTCols
	cw := &ConvWeightsT{M: M, K: K, data: make([]float32, panels*K*ConvTCols)}
	for m := 0; m < M; m++ {
		p, j := m/ConvTCols, m%ConvTCols
		d := cw.data[p*K*ConvTCols:]
		for kk, v := range w[m*ld : m*ld+K] {
			d[kk*ConvTCols+j] = v
		}
	}
	return cw
}

// Panels returns the number of 32-channel panels.
func (cw *ConvWeightsT) Panels() int { return (cw.M + ConvTCols - 1) / ConvTCols }

// ConvGemmT computes output channel panels [p0, p1) for up to ConvTRows
// pixels: pixel r's value of K row kk is b[off[kk]+r] (r < rows), and the
// result for channel m, pixel lane l goes, through segs, to y: segs holds
// pairs (mask, shift), and the lanes l set in mask are stored at
// y[m*ldy+shift+l], plus bias[m] (nil: none) and z at the same place (nil:
// none), then max(·, 0) with relu. tile is caller scratch of at least
// ConvTRows*ConvTCols floats.
func ConvGemmT(cw *ConvWeightsT, p0, p1 int, b []float32, off []int, rows int, y []float32, ldy int, segs []int, bias, z []float32, relu bool, tile []float32) {
	if !convTArch() {
		panic("kernels: ConvGemmT needs AVX-512")
	}
	if rows < 1 || rows > ConvTRows || p0 < 0 || p1 > cw.Panels() || len(off) < cw.K || cw.K == 0 || len(tile) < ConvTRows*ConvTCols || len(segs)%2 != 0 || len(segs) == 0 {
		panic(fmt.Sprintf("kernels: ConvGemmT %d rows, panels [%d,%d) of %d, %d offsets for K=%d, %d segment values", rows, p0, p1, cw.Panels(), len(off), cw.K, len(segs)))
	}
	off = off[:cw.K]
	lo, hi := off[0], off[0]
	for _, o := range off {
		lo, hi = min(lo, o), max(hi, o)
	}
	if lo < 0 || hi+rows > len(b) {
		panic(fmt.Sprintf("kernels: ConvGemmT pixels at offsets [%d,%d] + %d outside %d floats", lo, hi, rows, len(b)))
	}
	// Every stored lane must land inside its channel's row of y.
	smin, smax := ldy, -1
	for i := 0; i < len(segs); i += 2 {
		mask, shift := segs[i], segs[i+1]
		if mask <= 0 || mask >= 1<<rows {
			panic(fmt.Sprintf("kernels: ConvGemmT segment mask %#x for %d rows", mask, rows))
		}
		for l := 0; l < rows; l++ {
			if mask&(1<<l) != 0 {
				smin, smax = min(smin, shift+l), max(smax, shift+l)
			}
		}
	}
	if smin < 0 || smax >= ldy {
		panic(fmt.Sprintf("kernels: ConvGemmT stores at [%d,%d] outside rows of %d", smin, smax, ldy))
	}
	for p := p0; p < p1; p++ {
		m0 := p * ConvTCols
		nch := min(ConvTCols, cw.M-m0)
		if len(y) < (m0+nch-1)*ldy+smax+1 || z != nil && len(z) < (m0+nch-1)*ldy+smax+1 || bias != nil && len(bias) < m0+nch {
			panic(fmt.Sprintf("kernels: ConvGemmT output of %d floats (ldy %d) too short for channels [%d,%d)", len(y), ldy, m0, m0+nch))
		}
		convTTile(cw.K, rows, b, off, cw.data[p*cw.K*ConvTCols:(p+1)*cw.K*ConvTCols], tile)
		var bs, zs []float32
		if bias != nil {
			bs = bias[m0:]
		}
		if z != nil {
			zs = z[m0*ldy:]
		}
		convTStore(y[m0*ldy:], ldy, tile, rows, nch, segs, bs, zs, relu)
	}
}
