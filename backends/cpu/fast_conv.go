package cpu

import (
	"slices"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

func init() {
	registerIntoFirst(buildFastConv, "Conv")
	registerIntoFirst(buildFastFusedConv, "FusedConv")
}

// buildFastConv handles float32 1-D/2-D Conv as an implicit GEMM
// (fast_conv_implicit.go), or with group 1 as im2col + SGEMM.
func buildFastConv(s *nodeSpec) intoKernel {
	if len(s.in) < 2 || len(s.in) > 3 || len(s.out) != 1 {
		return nil
	}
	return fastConv(s, arg{}, nil, false)
}

// buildFastFusedConv handles float32 FusedConv: Conv as in buildFastConv,
// with the bias, residual and activation epilogue.
func buildFastFusedConv(s *nodeSpec) intoKernel {
	if len(s.in) < 2 || len(s.in) > 4 || len(s.out) != 1 {
		return nil
	}
	act, ok := fastAct(s.n)
	if !ok {
		return nil
	}
	relu := s.n.AttrString("activation", "") == "Relu"
	if relu {
		act = nil // fused into the epilogue's pass
	}
	return fastConv(s, s.input(3), act, relu)
}

// fastConv builds Y[n] = act(W·col(X[n]) + B + Z[n]) for each image n:
// a 3×3 stride-1 conv that gains from it as a Winograd convolution
// (fast_conv_wino.go); otherwise first as the implicit GEMM, which reads
// the patches in place; where that declines (a padded input over
// maxIm2col), with W the [M, C·kH·kW] weight matrix and col the im2col
// patch matrix [C·kH·kW, OH·OW] in scratch (X[n] itself for a pointwise
// conv). The im2col path declines grouped convolutions (the plain kernel
// has a direct loop for them).
//
// The implicit GEMM goes first where ConvGemm has an assembly micro-kernel
// at the current ISA level (amd64). Elsewhere (arm64, whose SGEMM has NEON
// kernels but ConvGemm only a Go loop) im2col + SGEMM goes first, and the
// implicit GEMM's Go loop is the fallback where im2col declines.
func fastConv(s *nodeSpec, z arg, act func([]float32), relu bool) intoKernel {
	if p := planWinoConv(s, z, act, relu); p != nil {
		return p.run
	}
	simd := kernels.ConvGemmSIMD()
	if simd {
		if k := buildImplicitConv(s, z, act, relu); k != nil {
			return k
		}
	}
	if k := im2colConv(s, z, act, relu); k != nil {
		return k
	}
	if !simd {
		return buildImplicitConv(s, z, act, relu)
	}
	return nil
}

// im2colConv is fastConv's im2col + SGEMM path, or nil where it declines.
func im2colConv(s *nodeSpec, z arg, act func([]float32), relu bool) intoKernel {
	x, w, b, y := s.input(0), s.input(1), s.input(2), s.out[0]
	if !x.ok || !w.ok || !allF32(x, w, b, z, y) {
		return nil
	}
	r := len(x.shape) - 2
	if r < 1 || r > 2 || len(w.shape) != r+2 || s.n.AttrInt("group", 1) != 1 {
		return nil
	}
	N, C, M := int(x.shape[0]), int(x.shape[1]), int(w.shape[0])
	if int(w.shape[1]) != C || b.ok && !slices.Equal(b.shape, []int64{int64(M)}) || z.ok && !slices.Equal(z.shape, y.shape) {
		return nil
	}
	kernel := w.shape[2:]
	if ks := s.n.AttrInts("kernel_shape", nil); ks != nil && !slices.Equal(ks, kernel) {
		return nil
	}
	g, ok := geomFor(s.n, x.shape, y.shape, int64(M), kernel, false)
	if !ok {
		return nil
	}
	gh, gw := g[0], g[1]
	H, W, OH, OW := gh.in, gw.in, gh.out, gw.out
	kH, kW := gh.k, gw.k
	ohw, kk := OH*OW, C*kH*kW
	if M*ohw*kk < minFastFlops || kk*ohw*4 > maxIm2col {
		return nil
	}
	hLo, hHi, wLo, wHi := make([]int, kH), make([]int, kH), make([]int, kW), make([]int, kW)
	for k := range kH {
		hLo[k], hHi[k] = gh.validRange(k)
	}
	for k := range kW {
		wLo[k], wHi[k] = gw.validRange(k)
	}
	pointwise := kH == 1 && kW == 1 && gh.stride == 1 && gw.stride == 1 && gh.padB == 0 && gw.padB == 0 && OH == H && OW == W
	var l layout
	colOff := -1
	if !pointwise {
		colOff = l.add(kk * ohw)
	}
	pool := s.pool
	if N*M*ohw*kk < serialMACs {
		pool = nil // a hand-off to the workers costs more than it saves
	}
	epi := func(in []*ir.Tensor, n int, yn []float32) {
		e := epilogue{y: yn, act: act, relu: relu, rows: M, cols: ohw}
		if b.ok {
			e.rowBias = in[2].Float32s()
		}
		if z.ok {
			e.z = in[3].Float32s()[n*M*ohw : (n+1)*M*ohw]
		}
		runEpilogue(pool, e)
	}
	if w.c != nil && ohw < M {
		// Few output pixels, many channels (the deep layers): Yᵀ = colᵀ·Wᵀ
		// with the weights packed once as the B side, so the GEMM's N is
		// the channel count; the patches and the result are transposed.
		pw := sharedPackB(w.c.Float32s(), kk, kk, M, true)
		atOff, ytOff, aOff := l.add(ohw*kk), l.add(ohw*M), l.add(ohw*kk)
		s.scratch = l.bytes()
		return func(in, out []*ir.Tensor, scratch []byte) error {
			xv, yv := in[0].Float32s(), out[0].Float32s()
			at, yt := region(scratch, atOff, ohw*kk), region(scratch, ytOff, ohw*M)
			for n := 0; n < N; n++ {
				col := xv[n*C*H*W : (n+1)*C*H*W]
				if !pointwise {
					col = region(scratch, colOff, kk*ohw)
					parIm2col(pool, col, xv[n*C*H*W:(n+1)*C*H*W], C, gh, gw, hLo, hHi, wLo, wHi)
				}
				parTranspose(pool, at, col, kk, ohw)
				kernels.SgemmPackedBuf(pool, ohw, at, kk, pw, yt, M, false, region(scratch, aOff, ohw*kk))
				yn := yv[n*M*ohw : (n+1)*M*ohw]
				parTranspose(pool, yn, yt, ohw, M)
				epi(in, n, yn)
			}
			return nil
		}
	}
	if workers := pool.Workers(); workers > 1 && convColumnSplit {
		// Several workers: split the output pixels into column chunks,
		// each packed, multiplied and finished by one task (see
		// convGemmJob), so that no phase but im2col runs alone.
		per, packLen := convChunks(workers, kk, ohw)
		rowsPer, colLen := 0, 0
		if !pointwise && OH >= 2*workers {
			// Chunks of whole output rows, each task building its own
			// patches: im2col joins the single batch.
			rowsPer = (OH + 2*workers - 1) / (2 * workers)
			colLen = kk * rowsPer * OW
			packLen = kk * roundUpInt(rowsPer*OW, convChunkAlign)
		}
		// In row mode the workers' patch buffers fit in col's region:
		// workers·⌈OH/2w⌉ <= OH when OH >= 2w.
		packOff := l.add(workers * packLen)
		s.scratch = l.bytes()
		return func(in, out []*ir.Tensor, scratch []byte) error {
			xv, wv, yv := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
			j := convGemmJob{M: M, N: ohw, K: kk, w: wv, act: act, relu: relu, per: per,
				scratch: scratch, packOff: packOff, packLen: packLen,
				C: C, rowsPer: rowsPer, gh: gh, gw: gw, hLo: hLo, hHi: hHi, wLo: wLo, wHi: wHi, colOff: colOff, colLen: colLen}
			if b.ok {
				j.bias = in[2].Float32s()
			}
			for n := 0; n < N; n++ {
				xn := xv[n*C*H*W : (n+1)*C*H*W]
				j.col = xn
				if rowsPer > 0 {
					j.x = xn
				} else if !pointwise {
					j.col = region(scratch, colOff, kk*ohw)
					parIm2col(pool, j.col, xn, C, gh, gw, hLo, hHi, wLo, wHi)
				}
				j.y = yv[n*M*ohw : (n+1)*M*ohw]
				if z.ok {
					j.z = in[3].Float32s()[n*M*ohw : (n+1)*M*ohw]
				}
				runConvGemm(pool, j)
			}
			return nil
		}
	}
	pbOff, aOff := gemmLayout(&l, M, ohw, kk)
	s.scratch = l.bytes()
	return func(in, out []*ir.Tensor, scratch []byte) error {
		xv, wv, yv := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
		var col []float32
		if !pointwise {
			col = region(scratch, colOff, kk*ohw)
		}
		for n := 0; n < N; n++ {
			xn := xv[n*C*H*W : (n+1)*C*H*W]
			if pointwise {
				col = xn
			} else {
				parIm2col(pool, col, xn, C, gh, gw, hLo, hHi, wLo, wHi)
			}
			yn := yv[n*M*ohw : (n+1)*M*ohw]
			sgemm(pool, M, ohw, kk, wv, col, yn, scratch, pbOff, aOff)
			epi(in, n, yn)
		}
		return nil
	}
}

// transpose writes the cols×rows transpose of the rows×cols row-major src
// into dst.
func transpose(dst, src []float32, rows, cols int) { transposeCols(dst, src, rows, cols, 0, cols) }

// transposeCols transposes source columns [c0, c1) (destination rows) in
// 16×16 tiles.
func transposeCols(dst, src []float32, rows, cols, c0, c1 int) {
	const t = 16
	for i0 := 0; i0 < rows; i0 += t {
		i1 := min(i0+t, rows)
		for j0 := c0; j0 < c1; j0 += t {
			j1 := min(j0+t, c1)
			for j := j0; j < j1; j++ {
				d := dst[j*rows+i0 : j*rows+i1]
				for k := range d {
					d[k] = src[(i0+k)*cols+j]
				}
			}
		}
	}
}

// im2colJob is im2col split by input channel over a pool.
type im2colJob struct {
	col, x             []float32
	C, per             int
	gh, gw             axis2
	hLo, hHi, wLo, wHi []int
}

var im2colJobs = sync.Pool{New: func() any { return new(im2colJob) }}

// parIm2col is im2col with the channels spread over pool.
func parIm2col(pool *kernels.Pool, col, x []float32, C int, gh, gw axis2, hLo, hHi, wLo, wHi []int) {
	w := pool.Workers()
	if w == 1 || C < 2 {
		im2col(col, x, C, gh, gw, hLo, hHi, wLo, wHi)
		return
	}
	j := im2colJobs.Get().(*im2colJob)
	*j = im2colJob{col: col, x: x, C: C, per: (C + 2*w - 1) / (2 * w), gh: gh, gw: gw, hLo: hLo, hHi: hHi, wLo: wLo, wHi: wHi}
	pool.RunTasks((C+j.per-1)/j.per, j)
	*j = im2colJob{}
	im2colJobs.Put(j)
}

// Task fills the rows of channels [t*per, (t+1)*per).
func (j *im2colJob) Task(_, t int) {
	c0 := t * j.per
	c1 := min(c0+j.per, j.C)
	rows := j.gh.k * j.gw.k * j.gh.out * j.gw.out
	hw := j.gh.in * j.gw.in
	im2col(j.col[c0*rows:c1*rows], j.x[c0*hw:c1*hw], c1-c0, j.gh, j.gw, j.hLo, j.hHi, j.wLo, j.wHi)
}

// transposeJob is transpose split into bands of destination rows.
type transposeJob struct {
	dst, src   []float32
	rows, cols int
	per        int
}

var transposeJobs = sync.Pool{New: func() any { return new(transposeJob) }}

// parTranspose is transpose spread over pool in bands of source columns.
func parTranspose(pool *kernels.Pool, dst, src []float32, rows, cols int) {
	w := pool.Workers()
	if w == 1 || rows*cols < 1<<14 {
		transpose(dst, src, rows, cols)
		return
	}
	j := transposeJobs.Get().(*transposeJob)
	*j = transposeJob{dst: dst, src: src, rows: rows, cols: cols, per: ((cols+2*w-1)/(2*w) + 15) &^ 15}
	pool.RunTasks((cols+j.per-1)/j.per, j)
	*j = transposeJob{}
	transposeJobs.Put(j)
}

// Task transposes source columns [t*per, (t+1)*per).
func (j *transposeJob) Task(_, t int) {
	c0 := t * j.per
	c1 := min(c0+j.per, j.cols)
	transposeCols(j.dst, j.src, j.rows, j.cols, c0, c1)
}
