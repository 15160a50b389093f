package cpu

import (
	"slices"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// Implicit-GEMM convolution (group 1, float32). Per image, the input is
// copied once into a zero-padded buffer split by stride phase: channel c,
// phase (ph, pw) (the padded row index mod the row stride, the column
// index mod the column stride) is a plane of Hq×Wq floats holding padded
// element (r·sh+ph, q·sw+pw) at (r, q). Output pixel (oh, ow) becomes the
// virtual column v = oh·Wq + ow, and tap (c, kh, kw) reads the padded
// element (oh·sh + kh·dh, ow·sw + kw·dw), which sits in plane
// (c, kh·dh mod sh, kw·dw mod sw) at (oh + kh·dh/sh, ow + kw·dw/sw): at
// the tap's fixed offset plus v. So row k of the patch matrix is the
// contiguous run buf[off[k]:], and kernels.ConvGemm reads it in place: no
// im2col matrix, no B packing. Columns with ow >= OW are computed and
// dropped (the price: Wq/OW more columns). A pointwise conv with stride 1
// and no padding reads the input itself.
//
// The work is split into tasks of (rows of the output channels, chunk of
// virtual columns); each task runs every K block into a per-worker tile,
// then applies bias, residual, ReLU and activation while the tile is in
// cache, writing the output rows. Two other kernels read the same buffer:
// the transposed GEMM (output channels in the lanes, fast_conv_trans.go)
// for small planes and deep spatial convs, and a direct depthwise kernel
// (fast_conv_dw.go).

// implicitConvEnabled selects the implicit-GEMM path (a variable so that
// benchmarks can compare it with the im2col path).
var implicitConvEnabled = true

// implicitConv is the compile-time plan of one implicit-GEMM convolution.
type implicitConv struct {
	N, C, M    int
	G, Cg, Mg  int // groups, input and output channels per group
	H, W       int
	OH, OW     int
	gh, gw     axis2
	direct     bool     // B rows read from the input itself
	slots      [][2]int // the stride phases (ph, pw) in use, in buffer order
	Hq, Wq     int
	chanLen    int // floats per channel in the buffer (len(slots)·Hq·Wq)
	bufLen     int
	nv         int   // virtual columns: OH·Wq
	off        []int // per K row: offset of its B row in the buffer
	K          int
	cws        []*kernels.ConvWeights // per group: constant weights, packed once; nil: per run
	mc, nc     int                    // most rows and virtual columns of a task
	mr, nr     int                    // the micro-tile
	mBlocks    int                    // row blocks: whole tiles, spread evenly
	nChunks    int                    // column chunks: whole panels, spread evenly
	temp       bool                   // tiles go to a per-worker buffer (Wq != OW)
	rowsPer    int                    // row mode (fast_conv_rows.go): output rows per chunk; 0: off
	segs       [][]int                // per chunk, for temp: see chunkSegments
	bufOff     int                    // scratch offsets (floats)
	tempOff    int
	wOff       int
	bias       bool
	z          bool
	relu       bool
	act        func([]float32)
	pool       *kernels.Pool
	transPer   int // channels per transform task
	transTasks int
	tr         *transConv // the transposed GEMM (fast_conv_trans.go); nil: ConvGemm
	dw         *dwConv    // the depthwise kernel (fast_conv_dw.go); nil: a GEMM
}

// buildImplicitConv returns the implicit-GEMM kernel for the conv in s, or
// nil to decline (shapes it does not cover; grouped convs with runtime
// weights). A grouped conv (depthwise included) runs one GEMM per group
// over that group's channels of the same buffer.
func buildImplicitConv(s *nodeSpec, z arg, act func([]float32), relu bool) intoKernel {
	if p := planImplicitConv(s, z, act, relu); p != nil {
		return p.run
	}
	return nil
}

// planImplicitConv plans the conv in s (setting s.scratch), or returns nil.
func planImplicitConv(s *nodeSpec, z arg, act func([]float32), relu bool) *implicitConv {
	if !implicitConvEnabled {
		return nil
	}
	x, w, b, y := s.input(0), s.input(1), s.input(2), s.out[0]
	if !x.ok || !w.ok || !allF32(x, w, b, z, y) {
		return nil
	}
	r := len(x.shape) - 2
	G := int(s.n.AttrInt("group", 1))
	if r < 1 || r > 2 || len(w.shape) != r+2 || G < 1 || G > 1 && w.c == nil {
		return nil // grouped convs need constant weights (packed per group)
	}
	N, C, M := int(x.shape[0]), int(x.shape[1]), int(w.shape[0])
	if C%G != 0 || M%G != 0 || int(w.shape[1]) != C/G || b.ok && !slices.Equal(b.shape, []int64{int64(M)}) || z.ok && !slices.Equal(z.shape, y.shape) {
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
	p := &implicitConv{N: N, C: C, M: M, G: G, Cg: C / G, Mg: M / G, H: gh.in, W: gw.in, OH: gh.out, OW: gw.out, gh: gh, gw: gw,
		K: C / G * gh.k * gw.k, bias: b.ok, z: z.ok, relu: relu, act: act, pool: s.pool}
	if M*p.OH*p.OW*p.K < minFastFlops || M == 0 || p.OH*p.OW == 0 {
		return nil
	}
	if !p.layout() || p.bufLen*4 > maxIm2col {
		return nil
	}
	var l layout
	if p.planDepthwise(w, &l, s.pool.Workers()) {
		s.scratch = l.bytes()
		return p
	}
	if !p.direct {
		p.bufOff = l.add(p.bufLen)
	}
	mr, nr := kernels.ConvTile()
	p.split(s.pool.Workers(), mr, nr)
	if p.wantTrans() {
		p.planTrans(w, &l, s.pool.Workers())
		s.scratch = l.bytes()
		return p
	}
	p.planRows(s.pool.Workers())
	if w.c != nil {
		wv := w.c.Float32s()
		for g := 0; g < G; g++ {
			p.cws = append(p.cws, sharedConvWeights(wv[g*p.Mg*p.K:(g+1)*p.Mg*p.K], p.Mg, p.K))
		}
	} else {
		p.wOff = l.add(kernels.ConvWeightsLen(M, p.K))
	}
	if p.temp {
		p.tempOff = l.add(s.pool.Workers() * p.mc * p.nc)
		p.segs = p.chunkSegments()
	}
	s.scratch = l.bytes()
	return p
}

// layout computes the buffer geometry and the B row offsets.
func (p *implicitConv) layout() bool {
	gh, gw := p.gh, p.gw
	if gh.k == 1 && gw.k == 1 && gh.stride == 1 && gw.stride == 1 && gh.padB == 0 && gw.padB == 0 && p.OH == p.H && p.OW == p.W {
		p.direct = true
		p.Hq, p.Wq, p.chanLen = p.H, p.W, p.H*p.W
		p.nv = p.H * p.W
		p.off = make([]int, p.K)
		for c := range p.off {
			p.off[c] = c * p.chanLen
		}
		p.bufLen = p.C * p.chanLen // group g reads from channel g·Cg on
		return true
	}
	sh, sw := gh.stride, gw.stride
	hp, wp := gh.padB+gh.in+gh.padE, gw.padB+gw.in+gw.padE
	p.Hq, p.Wq = (hp+sh-1)/sh, (wp+sw-1)/sw
	if sw == 1 {
		// Rows share their padding: the zeros after row r's columns are
		// also the left pad of row r+1 (a tap reading past the end of a
		// row lands in the next row's leading zeros), so a plane row
		// needs only W + max(padB, padE) floats.
		p.Wq = max(gw.in+max(gw.padB, gw.padE), gw.out)
	}
	slot := map[[2]int]int{}
	for kh := 0; kh < gh.k; kh++ {
		for kw := 0; kw < gw.k; kw++ {
			ph := [2]int{kh * gh.dil % sh, kw * gw.dil % sw}
			if _, ok := slot[ph]; !ok {
				slot[ph] = len(p.slots)
				p.slots = append(p.slots, ph)
			}
		}
	}
	plane := p.Hq * p.Wq
	p.chanLen = len(p.slots) * plane
	p.nv = p.OH * p.Wq
	p.off = make([]int, 0, p.K)
	hi := 0
	for c := 0; c < p.Cg; c++ { // offsets within a group's channels
		for kh := 0; kh < gh.k; kh++ {
			for kw := 0; kw < gw.k; kw++ {
				ph := [2]int{kh * gh.dil % sh, kw * gw.dil % sw}
				o := c*p.chanLen + slot[ph]*plane + kh*gh.dil/sh*p.Wq + kw*gw.dil/sw
				p.off = append(p.off, o)
				hi = max(hi, o)
			}
		}
	}
	// Full panels of the last chunk may read up to 32 columns past nv.
	p.bufLen = max(p.C*p.chanLen, (p.G-1)*p.Cg*p.chanLen+hi+roundUpInt(p.nv, 32)+32)
	return true
}

// split chooses the task grid: row blocks of whole micro-tiles times
// chunks of whole panels of virtual columns, each spread evenly, about
// 256 rows by 128 columns, and at least 4 tasks per worker where the
// shape allows (dynamic hand-out then balances the rest).
func (p *implicitConv) split(workers, mr, nr int) {
	p.mr, p.nr = mr, nr
	tiles, panels := (p.Mg+mr-1)/mr, (p.nv+nr-1)/nr
	// Chunks of about 128 columns, wider when a group has few rows (a
	// depthwise conv): about 32K outputs per task.
	perChunk := max(1, min(4096, max(128, 32768/(tiles*mr)))/nr)
	p.nChunks = (panels + perChunk - 1) / perChunk
	p.mBlocks = (tiles + max(1, 256/mr) - 1) / max(1, 256/mr)
	if want := 4 * workers; workers > 1 && p.G*p.nChunks*p.mBlocks < want {
		p.mBlocks = min(tiles, (want+p.G*p.nChunks-1)/(p.G*p.nChunks))
		if p.G*p.nChunks*p.mBlocks < want {
			p.nChunks = min(panels, (want+p.G*p.mBlocks-1)/(p.G*p.mBlocks))
		}
	}
	p.mc = (tiles + p.mBlocks - 1) / p.mBlocks * mr
	p.nc = (panels + p.nChunks - 1) / p.nChunks * nr
	p.temp = p.Wq != p.OW
	if workers > 1 {
		p.transPer = max(1, (p.C+2*workers-1)/(2*workers))
	} else {
		p.transPer = p.C
	}
	p.transTasks = (p.C + p.transPer - 1) / p.transPer
}

// rows returns row block mb of a group: [i0, i1).
func (p *implicitConv) rows(mb int) (i0, i1 int) { return blockSpan(mb, p.Mg, p.mBlocks, p.mr) }

// cols returns chunk ch of the virtual columns: [v0, v1).
func (p *implicitConv) cols(ch int) (v0, v1 int) { return blockSpan(ch, p.nv, p.nChunks, p.nr) }

// blockSpan returns block b of n items cut into blocks of whole units
// (the last unit may be partial): [lo, hi).
func blockSpan(b, n, blocks, unit int) (lo, hi int) {
	units := (n + unit - 1) / unit
	return b * units / blocks * unit, min(n, (b+1)*units/blocks*unit)
}

// implicitJob is one image's run of an implicitConv over the pool:
// the transform phase (task t copies channels [t·transPer, ...)), then the
// GEMM phase (task t is row block t/nChunks, chunk t%nChunks).
type implicitJob struct {
	p         *implicitConv
	transform bool
	x, buf, y []float32
	z, bias   []float32
	cws       []*kernels.ConvWeights // per group
	cwt       *kernels.ConvWeightsT  // the transposed path's weights
	one       [1]*kernels.ConvWeights
	temp      []float32
	epis      []kernels.ConvEpi // one per worker
}

var implicitJobs = sync.Pool{New: func() any { return new(implicitJob) }}

var convWeightsPool = sync.Pool{New: func() any { return new(kernels.ConvWeights) }}

func (p *implicitConv) run(in, out []*ir.Tensor, scratch []byte) error {
	j := implicitJobs.Get().(*implicitJob)
	epis := j.epis
	if len(epis) < p.pool.Workers() {
		epis = make([]kernels.ConvEpi, p.pool.Workers())
	}
	*j = implicitJob{p: p, cws: p.cws, epis: epis}
	var cw *kernels.ConvWeights
	var cwt *kernels.ConvWeightsT
	tasks := p.G * p.mBlocks * p.nChunks
	if p.dw != nil {
		tasks = p.dw.tasks
		j.temp = region(scratch, p.dw.planeOff, p.pool.Workers()*p.dw.planeLen)
	} else if p.tr != nil {
		tasks = p.tr.tasks
		if j.cwt = p.tr.cw; j.cwt == nil {
			cwt = convWeightsTPool.Get().(*kernels.ConvWeightsT)
			cwt.Pack(region(scratch, p.tr.wOff, kernels.ConvWeightsTLen(p.M, p.K)), in[1].Float32s(), p.K, p.M, p.K)
			j.cwt = cwt
		}
		j.temp = region(scratch, p.tr.tempOff, p.pool.Workers()*p.tr.tempLen)
	} else if j.cws == nil && p.dw == nil { // runtime weights (one group): packed per run
		cw = convWeightsPool.Get().(*kernels.ConvWeights)
		cw.Pack(region(scratch, p.wOff, kernels.ConvWeightsLen(p.M, p.K)), in[1].Float32s(), p.K, p.M, p.K)
		j.one[0] = cw
		j.cws = j.one[:]
	}
	if p.bias {
		j.bias = in[2].Float32s()
	}
	if p.temp {
		j.temp = region(scratch, p.tempOff, p.pool.Workers()*p.mc*p.nc)
	}
	xv, yv := in[0].Float32s(), out[0].Float32s()
	ihw, ohw := p.C*p.H*p.W, p.M*p.OH*p.OW
	for n := 0; n < p.N; n++ {
		j.x, j.y = xv[n*ihw:(n+1)*ihw], yv[n*ohw:(n+1)*ohw]
		if p.z {
			j.z = in[3].Float32s()[n*ohw : (n+1)*ohw]
		}
		if p.direct || p.dw != nil { // the depthwise tasks pad their own channels
			j.buf = j.x
		} else {
			j.buf = region(scratch, p.bufOff, p.bufLen)
			clear(j.buf[p.C*p.chanLen:])
			j.transform = true
			p.pool.RunTasks(p.transTasks, j)
			j.transform = false
		}
		p.pool.RunTasks(tasks, j)
	}
	if cw != nil {
		*cw = kernels.ConvWeights{}
		convWeightsPool.Put(cw)
	}
	if cwt != nil {
		*cwt = kernels.ConvWeightsT{}
		convWeightsTPool.Put(cwt)
	}
	clear(epis)
	*j = implicitJob{epis: epis}
	implicitJobs.Put(j)
	return nil
}

// Task runs one task of the current phase.
func (j *implicitJob) Task(wk, t int) {
	p := j.p
	if j.transform {
		c0 := t * p.transPer
		for c := c0; c < min(c0+p.transPer, p.C); c++ {
			p.transformChannel(j.buf[c*p.chanLen:(c+1)*p.chanLen], j.x[c*p.H*p.W:(c+1)*p.H*p.W])
		}
		return
	}
	if p.dw != nil {
		j.dwTask(wk, t)
		return
	}
	if p.tr != nil {
		j.transTask(wk, t)
		return
	}
	if p.rowsPer > 0 {
		j.rowTask(wk, t)
		return
	}
	per := p.mBlocks * p.nChunks
	g, t := t/per, t%per
	mb, ch := t/p.nChunks, t%p.nChunks
	i0, i1 := p.rows(mb)
	v0, v1 := p.cols(ch)
	ncols := v1 - v0
	ohw := p.OH * p.OW
	y, bias, z := j.groupOut(g)
	var c []float32
	ldc := ohw
	if p.temp {
		c, ldc = j.temp[wk*p.mc*p.nc:(wk+1)*p.mc*p.nc], p.nc
	} else {
		c = y[i0*ohw+v0:]
	}
	cw := j.cws[g]
	var epi *kernels.ConvEpi
	if !p.temp && (p.bias || p.z || p.relu) {
		// The tail is fused into the last K block's stores.
		epi = &j.epis[wk]
		*epi = kernels.ConvEpi{Bias: bias, Relu: p.relu}
		if z != nil {
			epi.Z = z[i0*ohw+v0:]
		}
	}
	buf := j.buf[g*p.Cg*p.chanLen+v0:]
	for kb, nb := 0, cw.Blocks(); kb < nb; kb++ {
		k0, _ := cw.Block(kb)
		var e *kernels.ConvEpi
		if kb == nb-1 {
			e = epi
		}
		kernels.ConvGemm(cw, kb, i0, i1, buf, p.off[k0:], ncols, c, ldc, kb > 0, e)
	}
	if !p.temp {
		if p.act != nil {
			for i := i0; i < i1; i++ {
				p.act(y[i*ohw+v0 : i*ohw+v0+ncols])
			}
		}
		return
	}
	segs := p.segs[ch]
	for i := i0; i < i1; i++ {
		var b float32
		if bias != nil {
			b = bias[i]
		}
		yr := y[i*ohw : (i+1)*ohw]
		var zr []float32
		if z != nil {
			zr = z[i*ohw : (i+1)*ohw]
		}
		kernels.ConvCompactRow(yr, c[(i-i0)*ldc:(i-i0)*ldc+ncols], zr, segs, b, p.relu)
		if p.act != nil {
			for s := 0; s < len(segs); s += 3 {
				p.act(yr[segs[s+1] : segs[s+1]+segs[s+2]])
			}
		}
	}
}

// groupOut returns group g's output rows, bias and residual (nil where
// absent), from row g·Mg on.
func (j *implicitJob) groupOut(g int) (y, bias, z []float32) {
	p := j.p
	ohw := p.OH * p.OW
	y = j.y[g*p.Mg*ohw : (g+1)*p.Mg*ohw]
	if j.bias != nil {
		bias = j.bias[g*p.Mg : (g+1)*p.Mg]
	}
	if j.z != nil {
		z = j.z[g*p.Mg*ohw : (g+1)*p.Mg*ohw]
	}
	return y, bias, z
}

// chunkSegments returns, per chunk of virtual columns, the runs that map
// to output pixels as triples (column in the chunk, output index, length):
// the columns past OW in each output row are dropped.
func (p *implicitConv) chunkSegments() [][]int {
	segs := make([][]int, p.nChunks)
	for ch := range segs {
		v0, v1 := p.cols(ch)
		for v := v0; v < v1; {
			oh, ow := v/p.Wq, v%p.Wq
			end := min(v1, v-ow+p.Wq)
			if ow < p.OW {
				n := min(p.OW, ow+end-v) - ow
				segs[ch] = append(segs[ch], v-v0, oh*p.OW+ow, n)
			}
			v = end
		}
	}
	return segs
}

// transformChannel writes one channel's phase planes: plane s holds padded
// element (r·sh+ph, q·sw+pw) at r·Wq+q, zero in the padding.
func (p *implicitConv) transformChannel(dst, x []float32) {
	gh, gw := p.gh, p.gw
	sh, sw := gh.stride, gw.stride
	plane := p.Hq * p.Wq
	for s, ph := range p.slots {
		d := dst[s*plane : (s+1)*plane]
		// Columns q whose padded index q·sw+pw-padB lands inside the row.
		qlo := max(0, (gw.padB-ph[1]+sw-1)/sw)
		qhi := min(p.Wq, (gw.padB+gw.in-ph[1]+sw-1)/sw)
		if qlo < qhi {
			// The rows inside the input, in one call; zero rows around.
			rlo := min(p.Hq, max(0, (gh.padB-ph[0]+sh-1)/sh))
			rhi := max(rlo, min(p.Hq, (gh.in+gh.padB-ph[0]+sh-1)/sh))
			clear(d[:rlo*p.Wq])
			clear(d[rhi*p.Wq:])
			if rhi > rlo {
				h0, w0 := rlo*sh+ph[0]-gh.padB, qlo*sw+ph[1]-gw.padB
				kernels.PadCopyRows(d[rlo*p.Wq:], p.Wq, x[h0*gw.in+w0:], sh*gw.in, rhi-rlo, qlo, qhi-qlo, sw)
			}
			continue
		}
		clear(d) // no column of the plane is inside the input
	}
}
