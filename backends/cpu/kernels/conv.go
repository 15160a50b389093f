package kernels

import (
	"fmt"
	"sync"
)

//go:generate go run gen_conv.go

// Implicit-GEMM convolution. A convolution is Y = W·B with W the M×K
// weight matrix (K = input channels × taps) and B the K×N patch matrix;
// instead of building B (im2col) and packing it, the caller lays the input
// out so that every row of B is a contiguous run of floats at a known
// offset (see backends/cpu: a padded, stride-phase-split copy of the
// input, or the input itself for a pointwise conv), and the micro-kernels
// read each row where it lies. W is packed once into the kernels' A-panel
// layout (ConvWeights).

// convKcTarget is the preferred K block depth: the B rows a block touches
// (kc × 128 bytes for the AVX-512 kernel) and one A panel stay in L1.
var convKcTarget = 192

// ConvWeights is an M×K matrix packed for ConvGemm at one ISA level: K is
// cut into blocks of about convKcTarget rows and, within a block starting
// at k0 with depth kcb, rows are stored in panels of mr rows, k-major:
// element (r, kk) of the panel at row ir is data[k0*M + ir*kcb + kk*rows + r].
type ConvWeights struct {
	M, K   int
	kc     int
	mr, nr int
	isa    ISA
	data   []float32
}

// ConvWeightsLen returns the floats PackConvWeightsInto needs for M×K.
func ConvWeightsLen(M, K int) int { return M * K }

// PackConvWeights packs the M×K row-major matrix w (leading dimension ld)
// at the current ISA level.
func PackConvWeights(w []float32, ld, M, K int) *ConvWeights {
	cw := new(ConvWeights)
	cw.Pack(make([]float32, ConvWeightsLen(M, K)), w, ld, M, K)
	return cw
}

// Pack packs w into dst (len >= ConvWeightsLen(M, K)), which cw then
// uses: with a reused cw and dst, packing does not allocate.
func (cw *ConvWeights) Pack(dst, w []float32, ld, M, K int) {
	if M < 0 || K < 0 {
		panic(fmt.Sprintf("kernels: PackConvWeights with M=%d K=%d", M, K))
	}
	checkMatrix("W", w, M, K, ld)
	if len(dst) < M*K {
		panic(fmt.Sprintf("kernels: PackConvWeights dst has %d floats, want %d", len(dst), M*K))
	}
	isa := CurrentISA()
	mr, nr := archShape(isa)
	kc := K
	if nb := (K + convKcTarget - 1) / convKcTarget; nb > 1 {
		kc = (K + nb - 1) / nb
	}
	*cw = ConvWeights{M: M, K: K, kc: max(kc, 1), mr: mr, nr: nr, isa: isa, data: dst[:M*K]}
	for k0 := 0; k0 < K; k0 += cw.kc {
		packA(cw.data[k0*M:], w, ld, 0, M, k0, min(cw.kc, K-k0), mr)
	}
}

// ConvTile returns the micro-tile (rows, columns) of ConvGemm at the
// current ISA level: the MR and NR of weights packed now.
func ConvTile() (mr, nr int) { return archShape(CurrentISA()) }

// Blocks returns the number of K blocks.
func (cw *ConvWeights) Blocks() int { return (cw.K + cw.kc - 1) / cw.kc }

// Block returns the first row and the depth of K block kb.
func (cw *ConvWeights) Block(kb int) (k0, kcb int) {
	k0 = kb * cw.kc
	return k0, min(cw.kc, cw.K-k0)
}

// MR returns the micro-tile height: ConvGemm's row ranges start at
// multiples of it.
func (cw *ConvWeights) MR() int { return cw.mr }

// NR returns the micro-tile width (columns per panel).
func (cw *ConvWeights) NR() int { return cw.nr }

// ConvEpi is the tail ConvGemm can apply to the final values of its tiles
// (pass it with the last K block): C = C + Bias[i] + Z, then max(·, 0)
// when Relu is set (NaN kept), each part optional.
type ConvEpi struct {
	Bias []float32 // per row, indexed by the global row i; nil: none
	Z    []float32 // laid out like c (row i at Z[(i-i0)*ldc:]); nil: none
	Relu bool
}

// ConvGemm computes rows [i0, i1) of C = W·B (C += W·B when acc is set)
// over K block kb, for ncols columns: row kk of the block's B is
// b[off[kk] : off[kk]+ncols] (len(off) >= the block's depth) and C's row i
// is c[(i-i0)*ldc:]. i0 must be a multiple of MR(), and i1 one too or M
// (the panels are packed MR() rows at a time). Columns are done in
// panels of NR(); where a full panel would read past the end of b the
// kernel reads only the valid columns. epi (optional) is applied to the
// result before it is stored.
func ConvGemm(cw *ConvWeights, kb, i0, i1 int, b []float32, off []int, ncols int, c []float32, ldc int, acc bool, epi *ConvEpi) {
	k0, kcb := cw.Block(kb)
	if kb < 0 || kcb <= 0 || i0 < 0 || i1 > cw.M || i0%cw.mr != 0 || i1%cw.mr != 0 && i1 != cw.M || len(off) < kcb || ncols < 0 {
		panic(fmt.Sprintf("kernels: ConvGemm block %d rows [%d,%d) of %d×%d, %d offsets", kb, i0, i1, cw.M, cw.K, len(off)))
	}
	if i1 <= i0 || ncols == 0 {
		return
	}
	off = off[:kcb]
	lo, hi := off[0], off[0]
	for _, o := range off {
		lo, hi = min(lo, o), max(hi, o)
	}
	if lo < 0 || hi+ncols > len(b) {
		panic(fmt.Sprintf("kernels: ConvGemm B rows at offsets [%d,%d] + %d columns outside %d floats", lo, hi, ncols, len(b)))
	}
	checkMatrix("C", c, i1-i0, ncols, ldc)
	flags := 0
	if epi != nil {
		if epi.Bias != nil {
			flags |= 1
			if len(epi.Bias) < i1 {
				panic(fmt.Sprintf("kernels: ConvGemm bias has %d rows, want %d", len(epi.Bias), i1))
			}
		}
		if epi.Z != nil {
			flags |= 2
			checkMatrix("Z", epi.Z, i1-i0, ncols, ldc)
		}
		if epi.Relu {
			flags |= 4
		}
	}
	isa := cw.isa
	mr, nr := cw.mr, cw.nr
	iacc := 0
	if acc {
		iacc = 1
	}
	a := cw.data[k0*cw.M:]
	if isa == AVX512 { // AVX512 is the top amd64 level; arm64 levels number above it
		// Masked loads and stores handle every column edge: one kernel
		// call per tile, with the epilogue fused.
		// A last panel of at most 16 columns runs the half-width kernels.
		full, last := convKernel(isa, nr, mr), convKernel(isa, nr, (i1-i0-1)%mr+1)
		hFull, hLast := convKernelHalf(isa, nr, mr), convKernelHalf(isa, nr, (i1-i0-1)%mr+1)
		if full != nil && last != nil {
			for p0 := 0; p0 < ncols; p0 += nr {
				mask := uint32(uint64(1)<<min(nr, ncols-p0) - 1)
				bp := &b[p0]
				f, l := full, last
				if ncols-p0 <= 16 && hFull != nil && hLast != nil {
					f, l = hFull, hLast
				}
				for ir := i0; ir < i1; ir += mr {
					fn := f
					if i1-ir < mr {
						fn = l
					}
					ct := (ir-i0)*ldc + p0
					var biasp, zp *float32
					if flags&1 != 0 {
						biasp = &epi.Bias[ir]
					}
					if flags&2 != 0 {
						zp = &epi.Z[ct]
					}
					fn(kcb, &a[ir*kcb], bp, &off[0], &c[ct], ldc, mask, iacc, biasp, zp, flags)
				}
			}
			return
		}
	}
	var tile *[14 * 32]float32 // for column edges without masks
	// Returned when the loops end; a defer in the loop would allocate its
	// record on every call.
	defer func() {
		if tile != nil {
			convTiles.Put(tile)
		}
	}()
	for p0 := 0; p0 < ncols; p0 += nr {
		pc := min(nr, ncols-p0)
		full := hi+p0+nr <= len(b) // a full panel of every row is readable
		for ir := i0; ir < i1; ir += mr {
			rows := min(mr, i1-ir)
			ap := a[ir*kcb : ir*kcb+rows*kcb]
			ct := (ir-i0)*ldc + p0
			cp := c[ct:]
			var bp, zp *float32
			if flags&1 != 0 {
				bp = &epi.Bias[ir]
			}
			if flags&2 != 0 {
				zp = &epi.Z[ct]
			}
			fn := convKernel(isa, nr, rows)
			switch {
			case fn != nil && isa == AVX512:
				fn(kcb, &ap[0], &b[p0], &off[0], &cp[0], ldc, uint32(uint64(1)<<pc-1), iacc, bp, zp, flags)
				continue
			case fn != nil && full && pc == nr:
				fn(kcb, &ap[0], &b[p0], &off[0], &cp[0], ldc, 0, iacc, bp, zp, flags)
				continue
			case fn != nil && full:
				// Column edge without masks: the full tile aside, then
				// the valid columns.
				if tile == nil {
					tile = convTiles.Get().(*[14 * 32]float32)
				}
				t := tile[:rows*nr]
				fn(kcb, &ap[0], &b[p0], &off[0], &t[0], nr, 0, 0, nil, nil, 0)
				addTile(cp, ldc, t, nr, rows, pc, acc)
			default:
				convGeneric(rows, pc, kcb, ap, b[p0:], off, cp, ldc, acc)
			}
			if flags != 0 {
				for r := 0; r < rows; r++ {
					row := cp[r*ldc : r*ldc+pc]
					var bias float32
					if bp != nil {
						bias = epi.Bias[ir+r]
					}
					var zr []float32
					if zp != nil {
						zr = epi.Z[ct+r*ldc : ct+r*ldc+pc]
					}
					ConvEpilogue(row, row, zr, bias, epi.Relu)
				}
			}
		}
	}
}

// ConvGemmSIMD reports whether ConvGemm has an assembly micro-kernel at
// the current ISA level; without one it runs a Go loop, and im2col +
// SgemmPacked (NEON kernels on arm64) is the faster conv.
func ConvGemmSIMD() bool {
	isa := CurrentISA()
	_, nr := archShape(isa)
	return convKernel(isa, nr, 1) != nil
}

// convTiles recycles the edge tiles of ConvGemm (a tile handed to an
// assembly kernel through a func value would escape to the heap).
var convTiles = sync.Pool{New: func() any { return new([14 * 32]float32) }}

// addTile stores (or adds, with acc) rows×cols of t (leading dimension
// ldt) into c.
func addTile(c []float32, ldc int, t []float32, ldt, rows, cols int, acc bool) {
	for r := 0; r < rows; r++ {
		src := t[r*ldt : r*ldt+cols]
		dst := c[r*ldc : r*ldc+cols]
		if acc {
			for i, v := range src {
				dst[i] += v
			}
		} else {
			copy(dst, src)
		}
	}
}

// convGeneric is the plain-Go implicit-GEMM tile: rows×cols of C (+)=
// Apanel · B with B's row kk at b[off[kk]:].
func convGeneric(rows, cols, kcb int, ap, b []float32, off []int, c []float32, ldc int, acc bool) {
	var t [14 * 32]float32
	tile := t[:rows*cols]
	for kk := 0; kk < kcb; kk++ {
		brow := b[off[kk] : off[kk]+cols]
		a := ap[kk*rows : kk*rows+rows]
		for r, av := range a {
			row := tile[r*cols : r*cols+cols]
			for j, bv := range brow {
				row[j] += av * bv
			}
		}
	}
	addTile(c, ldc, tile, cols, rows, cols, acc)
}

// ConvEpilogue writes dst[i] = src[i] + bias + z[i] (z optional: nil),
// then max(·, 0) when relu is set (NaN stays NaN). dst may be src. It is
// the bias/residual/ReLU tail of a fused convolution, run on a block of
// the output while it is still in cache.
func ConvEpilogue(dst, src, z []float32, bias float32, relu bool) {
	src = src[:len(dst)]
	if z != nil {
		z = z[:len(dst)]
	}
	if convEpiArch(CurrentISA(), dst, src, z, bias, relu) {
		return
	}
	for i, v := range src {
		epiStore(dst, z, i, v, bias, relu)
	}
}

// epiStore writes y[x] = v + bias (+ z[x]), then max(·, 0) with relu: one
// element of ConvEpilogue, also the Winograd output transforms' store.
func epiStore(y, z []float32, x int, v, bias float32, relu bool) {
	v += bias
	if z != nil {
		v += z[x]
	}
	if relu && v < 0 {
		v = 0
	}
	y[x] = v
}

// ConvCompactRow is ConvEpilogue over the segments of one row: segs holds
// triples (s, d, n), and for each dst[d:d+n] = src[s:s+n] + bias (+
// z[d:d+n], z laid out like dst; nil: none), then max(·, 0) with relu. It
// moves a row of an implicit-GEMM tile computed over virtual columns into
// the output row, dropping the columns between segments, in one call.
func ConvCompactRow(dst, src, z []float32, segs []int, bias float32, relu bool) {
	if len(segs)%3 != 0 {
		panic(fmt.Sprintf("kernels: ConvCompactRow with %d segment values", len(segs)))
	}
	for i := 0; i < len(segs); i += 3 {
		s, d, n := segs[i], segs[i+1], segs[i+2]
		if s < 0 || d < 0 || n < 0 || s+n > len(src) || d+n > len(dst) || z != nil && d+n > len(z) {
			panic(fmt.Sprintf("kernels: ConvCompactRow segment (%d, %d, %d) outside src %d / dst %d", s, d, n, len(src), len(dst)))
		}
	}
	if len(dst) == 0 || len(src) == 0 {
		return
	}
	if convCompactArch(dst, src, z, segs, bias, relu) {
		return
	}
	for i := 0; i < len(segs); i += 3 {
		s, d, n := segs[i], segs[i+1], segs[i+2]
		var zs []float32
		if z != nil {
			zs = z[d : d+n]
		}
		ConvEpilogue(dst[d:d+n], src[s:s+n], zs, bias, relu)
	}
}

// PadCopyRows writes n rows of a zero-padded plane: row i of dst
// (dst[i*ldd : (i+1)*ldd]) gets lpad zeros, then w floats of src row i
// taken every cs-th (src[i*lds + j*cs], j < w), then zeros to its end. It
// is the copy of an input into the padded (and, for a strided conv,
// stride-phase split) buffer an implicit-GEMM convolution reads, a plane
// in one call.
func PadCopyRows(dst []float32, ldd int, src []float32, lds, n, lpad, w, cs int) {
	if n <= 0 {
		return
	}
	if lpad < 0 || w < 0 || lds < 0 || cs < 1 || lpad+w > ldd || n*ldd > len(dst) || w > 0 && (n-1)*lds+(w-1)*cs >= len(src) {
		panic(fmt.Sprintf("kernels: PadCopyRows %d rows of %d+%d in %d at stride %d (dst %d floats, src %d at %d)", n, lpad, w, ldd, cs, len(dst), len(src), lds))
	}
	if w > 0 && padCopyRowsArch(dst, ldd, src, lds, n, lpad, w, cs) {
		return
	}
	for i := 0; i < n; i++ {
		d := dst[i*ldd : (i+1)*ldd]
		clear(d[:lpad])
		s := src[i*lds:]
		for j := range d[lpad : lpad+w] {
			d[lpad+j] = s[j*cs]
		}
		clear(d[lpad+w:])
	}
}

// ConvHalfPanels reports whether ConvGemm at the current ISA level runs a
// last panel of at most 16 columns at half width (AVX-512), so that such a
// panel costs about half a full one.
func ConvHalfPanels() bool { return convKernelHalf(CurrentISA(), 32, 1) != nil }
