package cpu

import (
	"slices"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// Winograd convolution for 3×3, stride-1, pad-1 convs with constant
// weights (group 1, float32) where the transforms have assembly
// (kernels.WinoFast): F(2×2, 3×3), 16 products per 2×2 output tile
// instead of 36 (2.25× fewer multiply-adds), or on larger planes
// F(4×4, 3×3), 36 per 4×4 tile instead of 144 (4× fewer; winoTile), for
// the price of the two transforms. Per image (shown for F(2×2, 3×3);
// F(4×4, 3×3) has 36 points and splits the input by column phase mod 4,
// inputChannel43):
//
//  1. input transform: each channel is copied into its four stride-2
//     phase planes (zero-padded, per worker, in L1) and kernels.WinoIn23
//     writes its 16 Winograd-domain rows V[ξ][c][tile]: in a phase of its
//     own (tasks over channels) or, where one block of rows covers all
//     the output channels, by each task of step 2 for its own tiles into
//     a per-worker V that stays in cache (fused);
//  2. tasks of (output-channel rows, tile rows): for each point ξ one
//     kernels.ConvGemm of the packed U_ξ (M×C, packed at compile time)
//     over V_ξ into a per-worker tile buffer, then kernels.WinoOut23
//     turns the 16 points back into 2×2 outputs with bias, residual and
//     ReLU while the buffer is in cache.
//
// The tiles are numbered t = ty·Tx + tx with Tx = ⌈OW/m⌉ (m the tile
// size), so every GEMM column is a real tile (sizes that are not multiples
// of m compute a few columns or rows more, which the output transform
// drops).

// convWinoMode selects the Winograd path: 0 automatic (where the shape
// gains), 1 never, 2 wherever the geometry allows (tests).
var convWinoMode = 0

// winoSplitDirectMax is the widest input row whose column-phase planes
// (F(4×4, 3×3)) are copied in one strided pass.
var winoSplitDirectMax = 16

// convWinoTile forces the output tile (2 or 4; 0: winoTile chooses).
var convWinoTile = 0

// Where the automatic mode takes the Winograd path: enough channels for the
// GEMMs to dominate the transforms, and planes of at least 10×10 (a 7×7
// plane computes 8×8 and streams 16/9 the weights: measured no faster).
const (
	winoMinChannels = 16
	winoMinPixels   = 100
)

// winoTempFloats bounds a worker's tile buffer (points × rows × columns,
// 1 MiB): taller row blocks read each column chunk of V fewer times, which
// measured faster up to this size on ResNet's layers.
const winoTempFloats = 1 << 18

// winoConv is the compile-time plan of one Winograd convolution.
type winoConv struct {
	N, C, M  int
	H, W     int
	m        int                    // the output tile: 2 (F(2×2, 3×3)) or 4 (F(4×4, 3×3))
	pts      int                    // Winograd points: (m+2)²
	Ty, Tx   int                    // tile rows and columns
	Hq, Wq   int                    // a phase plane: Ty+1 rows (m=4: 4·Ty+2) of Tx+1
	nT       int                    // tiles per image
	cws      []*kernels.ConvWeights // per point
	off      []int                  // per point and channel: the V row's offset, ξ·vStride + c·nT (fused: c·ldt)
	vStride  int                    // floats per point in V (fused: in a worker's chunk of V)
	fused    bool                   // one row block: each task transforms its own tiles' V (per worker)
	byPoint  bool                   // several workers, few tiles: GEMM tasks by point, then output tasks by rows
	outPer   int                    // byPoint: rows per output task
	outTasks int
	tempAll  int // the tile buffers' floats (per worker; byPoint: one for all points)
	tStride  int // floats per point in a tile buffer
	planeLen int // a worker's four phase planes
	vOff     int // scratch offsets (floats)
	planeOff int
	tempOff  int
	tempLen  int // a worker's tile buffer: pts points × mc rows × ldt
	inPer    int // channels per input-transform task
	inTasks  int
	mr       int
	mBlocks  int // row blocks of whole micro-tiles, spread evenly
	tyChunks int // chunks of tile rows, spread evenly
	mc, ldt  int // most rows of a block; most columns (tiles) of a chunk
	bias, z  bool
	relu     bool
	act      func([]float32)
	pool     *kernels.Pool
}

// planWinoConv plans the conv in s as a Winograd convolution (setting
// s.scratch), or returns nil where the path does not apply.
func planWinoConv(s *nodeSpec, z arg, act func([]float32), relu bool) *winoConv {
	if convWinoMode == 1 || !kernels.WinoFast() && convWinoMode != 2 {
		return nil
	}
	x, w, b, y := s.input(0), s.input(1), s.input(2), s.out[0]
	if !x.ok || !w.ok || w.c == nil || !allF32(x, w, b, z, y) || len(x.shape) != 4 || len(w.shape) != 4 {
		return nil
	}
	if s.n.AttrInt("group", 1) != 1 || w.shape[2] != 3 || w.shape[3] != 3 {
		return nil
	}
	N, C, M := int(x.shape[0]), int(x.shape[1]), int(w.shape[0])
	if int(w.shape[1]) != C || b.ok && !slices.Equal(b.shape, []int64{int64(M)}) || z.ok && !slices.Equal(z.shape, y.shape) {
		return nil
	}
	if ks := s.n.AttrInts("kernel_shape", nil); ks != nil && !slices.Equal(ks, w.shape[2:]) {
		return nil
	}
	g, ok := geomFor(s.n, x.shape, y.shape, int64(M), w.shape[2:], false)
	if !ok {
		return nil
	}
	for _, a := range g {
		if a.stride != 1 || a.dil != 1 || a.padB != 1 || a.padE != 1 || a.out != a.in {
			return nil
		}
	}
	H, W := g[0].in, g[1].in
	if N == 0 || H == 0 || W == 0 || M == 0 || C == 0 {
		return nil
	}
	if convWinoMode == 0 && (C < winoMinChannels || M < winoMinChannels || H*W < winoMinPixels || M*H*W*C*9 < minFastFlops) {
		return nil
	}
	p := &winoConv{N: N, C: C, M: M, H: H, W: W, m: winoTile(C, M, H, W), bias: b.ok, z: z.ok, relu: relu, act: act, pool: s.pool}
	p.pts = (p.m + 2) * (p.m + 2)
	p.Ty, p.Tx = (H+p.m-1)/p.m, (W+p.m-1)/p.m
	p.Hq, p.Wq = p.Ty+1, p.Tx+1
	p.planeLen = 4 * p.Hq * p.Wq
	if p.m == 4 {
		// Four column-phase planes of every padded row, and the two
		// stride-2 half rows they are split from.
		p.Hq = 4*p.Ty + 2
		p.planeLen = 4*p.Hq*p.Wq + 2*p.Hq*2*p.Wq
	}
	p.nT = p.Ty * p.Tx
	u := make([]float32, p.pts*M*C)
	if p.m == 4 {
		kernels.WinoWeights43(u, w.c.Float32s(), M, C)
	} else {
		kernels.WinoWeights23(u, w.c.Float32s(), M, C)
	}
	p.cws = make([]*kernels.ConvWeights, p.pts)
	for xi := range p.cws {
		p.cws[xi] = kernels.PackConvWeights(u[xi*M*C:(xi+1)*M*C], C, M, C)
	}
	workers := s.pool.Workers()
	p.split(workers)
	// With one row block, each chunk's task transforms its own tiles into
	// a per-worker V that stays in L2, instead of a phase of its own
	// writing all of V out to memory.
	p.fused = p.mBlocks == 1
	// Several row blocks on several workers (few tiles, many channels):
	// each block would read all of V, so the GEMMs go by point instead
	// (each reads only its own U_ξ and V_ξ) into one buffer of all the
	// points, and the output transform runs as tasks over rows after.
	p.byPoint = !p.fused && workers > 1 && p.nT < p.M
	p.tempAll = workers * p.tempLen
	if p.byPoint {
		p.tStride = winoStride(M * p.nT)
		p.tempAll = p.pts * p.tStride
		p.outPer = max(1, (M+4*workers-1)/(4*workers))
		p.outTasks = (M + p.outPer - 1) / p.outPer
	}
	rowLen, vLen := p.nT, p.pts
	if p.fused {
		rowLen, vLen = p.ldt, p.pts*workers
	}
	p.vStride = winoStride(C * rowLen)
	p.off = make([]int, p.pts*C)
	for i := range p.off {
		p.off[i] = i/C*p.vStride + i%C*rowLen
	}
	var l layout
	p.vOff = l.add(vLen * p.vStride)
	p.planeOff = l.add(workers * p.planeLen)
	p.tempOff = l.add(p.tempAll)
	s.scratch = l.bytes()
	return p
}

// split chooses the tasks: chunks of whole tile rows of about 128 tiles
// (fewer where a chunk's GEMM columns would leave much of their last
// 32-wide panel empty), row blocks that keep a worker's tile buffer under
// winoTempFloats, and on several workers about two tasks per worker.
func (p *winoConv) split(workers int) {
	mr, nr := kernels.ConvTile()
	p.mr = mr
	// The fewest chunks (each read of U_ξ is per chunk) of at most 256
	// columns whose panels waste the fewest lanes: a last panel of up to
	// nr/2 columns runs the half-width kernels.
	lanes := func(cols int) int {
		if r := cols % nr; r > 0 && r <= nr/2 {
			return cols - r + nr/2
		}
		return roundUpInt(cols, nr)
	}
	// Chunks narrow enough that one block of all the rows fits the tile
	// buffer, where that leaves them at least 32 columns: then a chunk's
	// task can transform its own V (fused, below).
	tiles := (p.M + mr - 1) / mr
	colCap := 256
	if c := winoTempFloats / (p.pts * tiles * mr); c >= 32 {
		colCap = min(colCap, c)
	}
	bestWaste := -1
	for nch := 1; nch <= p.Ty; nch++ {
		if (p.Ty+nch-1)/nch*p.Tx > colCap && nch < p.Ty {
			continue
		}
		waste := 0
		for ch := range nch {
			cols := ((ch+1)*p.Ty/nch - ch*p.Ty/nch) * p.Tx
			waste += lanes(cols) - cols
		}
		if bestWaste < 0 || waste*10 < bestWaste*9 { // a tenth fewer wasted lanes pays for more chunks
			p.tyChunks, bestWaste = nch, waste
		}
	}
	best := (p.Ty + p.tyChunks - 1) / p.tyChunks
	mcTiles := max(1, winoTempFloats/(p.pts*best*p.Tx)/mr)
	p.mBlocks = (tiles + mcTiles - 1) / mcTiles
	if workers > 1 {
		// Every row block reads all of V's chunk and every chunk all of
		// U's rows: split first the side whose re-read is smaller (rows
		// when V, pts·C·nT, is smaller than U, pts·M·C; planWinoConv
		// then runs the GEMMs by point instead), to about two tasks per
		// worker, a multiple of the workers.
		want := 2 * workers
		for p.mBlocks*p.tyChunks < want || p.mBlocks*p.tyChunks%workers != 0 {
			rowsFirst := p.nT < p.M
			switch {
			case rowsFirst && p.mBlocks < tiles || !rowsFirst && p.tyChunks >= p.Ty && p.mBlocks < tiles:
				p.mBlocks++
			case p.tyChunks < p.Ty:
				p.tyChunks++
			default:
				want = 0 // no more splits
			}
			if want == 0 || p.mBlocks*p.tyChunks >= 4*workers {
				break
			}
		}
	}
	p.mc = (tiles + p.mBlocks - 1) / p.mBlocks * mr
	p.ldt = (p.Ty + p.tyChunks - 1) / p.tyChunks * p.Tx
	p.tStride = winoStride(p.mc * p.ldt)
	p.tempLen = p.pts * p.tStride
	if workers > 1 {
		p.inPer = max(1, (p.C+4*workers-1)/(4*workers))
	} else {
		p.inPer = p.C
	}
	p.inTasks = (p.C + p.inPer - 1) / p.inPer
}

// rows returns row block mb: [i0, i1).
func (p *winoConv) rows(mb int) (i0, i1 int) { return blockSpan(mb, p.M, p.mBlocks, p.mr) }

// tileRows returns chunk ch of the tile rows: [ty0, ty1).
func (p *winoConv) tileRows(ch int) (ty0, ty1 int) {
	return ch * p.Ty / p.tyChunks, (ch + 1) * p.Ty / p.tyChunks
}

// winoStride is the distance between the 16 points' blocks of n floats:
// n rounded up to 4 KiB plus 5 cache lines, so that the 16 streams a
// transform reads or writes at once fall in different L1 sets (a multiple
// of 4 KiB would put them all in one).
func winoStride(n int) int { return roundUpInt(n, 1024) + 80 }

// winoJob is one image's run of a winoConv over the pool.
type winoJob struct {
	p         *winoConv
	phase     int // winoTransform, winoTiles, winoPoints or winoOutput
	x, y, z   []float32
	bias      []float32
	v, planes []float32
	temp      []float32
}

var winoJobs = sync.Pool{New: func() any { return new(winoJob) }}

// The phases of a winoJob.
const (
	winoTiles     = iota // tasks of (row block, tile rows): GEMMs and output transform
	winoTransform        // tasks over channels: the input transform into V
	winoPoints           // tasks over the points: one GEMM of all rows into the point's block
	winoOutput           // tasks over row groups: the output transform from the points' blocks
)

func (p *winoConv) run(in, out []*ir.Tensor, scratch []byte) error {
	j := winoJobs.Get().(*winoJob)
	workers := p.pool.Workers()
	vLen := p.pts * p.vStride
	if p.fused {
		vLen *= workers
	}
	*j = winoJob{p: p, v: region(scratch, p.vOff, vLen), planes: region(scratch, p.planeOff, workers*p.planeLen),
		temp: region(scratch, p.tempOff, p.tempAll)}
	if p.bias {
		j.bias = in[2].Float32s()
	}
	xv, yv := in[0].Float32s(), out[0].Float32s()
	ihw, ohw := p.C*p.H*p.W, p.M*p.H*p.W
	for n := 0; n < p.N; n++ {
		j.x, j.y = xv[n*ihw:(n+1)*ihw], yv[n*ohw:(n+1)*ohw]
		if p.z {
			j.z = in[3].Float32s()[n*ohw : (n+1)*ohw]
		}
		if !p.fused {
			j.phase = winoTransform
			p.pool.RunTasks(p.inTasks, j)
		}
		if p.byPoint {
			j.phase = winoPoints
			p.pool.RunTasks(p.pts, j)
			j.phase = winoOutput
			p.pool.RunTasks(p.outTasks, j)
			continue
		}
		j.phase = winoTiles
		p.pool.RunTasks(p.mBlocks*p.tyChunks, j)
	}
	*j = winoJob{}
	winoJobs.Put(j)
	return nil
}

// Task runs one task of the current phase.
func (j *winoJob) Task(wk, t int) {
	p := j.p
	switch j.phase {
	case winoTransform:
		planes := j.planes[wk*p.planeLen : (wk+1)*p.planeLen]
		for c := t * p.inPer; c < min((t+1)*p.inPer, p.C); c++ {
			p.inputChannel(j.v[c*p.nT:], planes, j.x[c*p.H*p.W:(c+1)*p.H*p.W], 0, p.Ty)
		}
		return
	case winoPoints:
		cw := p.cws[t]
		for kb, nb := 0, cw.Blocks(); kb < nb; kb++ {
			k0, _ := cw.Block(kb)
			kernels.ConvGemm(cw, kb, 0, p.M, j.v, p.off[t*p.C+k0:], p.nT, j.temp[t*p.tStride:], p.nT, kb > 0, nil)
		}
		return
	case winoOutput:
		i0 := t * p.outPer
		j.output(i0, min(i0+p.outPer, p.M), 0, p.Ty, j.temp[i0*p.nT:], p.nT, p.tStride)
		return
	}
	mb, ch := t/p.tyChunks, t%p.tyChunks
	i0, i1 := p.rows(mb)
	ty0, ty1 := p.tileRows(ch)
	if i0 >= i1 || ty0 >= ty1 {
		return
	}
	ncols := (ty1 - ty0) * p.Tx
	temp := j.temp[wk*p.tempLen : (wk+1)*p.tempLen]
	pt := p.tStride // one point's block of the tile buffer
	var b []float32
	if p.fused {
		b = j.v[wk*p.pts*p.vStride : (wk+1)*p.pts*p.vStride]
		planes := j.planes[wk*p.planeLen : (wk+1)*p.planeLen]
		for c := 0; c < p.C; c++ {
			p.inputChannel(b[c*p.ldt:], planes, j.x[c*p.H*p.W:(c+1)*p.H*p.W], ty0, ty1)
		}
	} else {
		b = j.v[ty0*p.Tx:]
	}
	for xi := range p.cws {
		cw := p.cws[xi]
		for kb, nb := 0, cw.Blocks(); kb < nb; kb++ {
			k0, _ := cw.Block(kb)
			kernels.ConvGemm(cw, kb, i0, i1, b, p.off[xi*p.C+k0:], ncols, temp[xi*pt:], p.ldt, kb > 0, nil)
		}
	}
	j.output(i0, i1, ty0, ty1, temp, p.ldt, pt)
}

// output runs the output transform of rows [i0, i1) and tile rows
// [ty0, ty1): point ξ of row i's tile ty at src[ξ·pt + (i-i0)·ld +
// (ty-ty0)·Tx].
func (j *winoJob) output(i0, i1, ty0, ty1 int, src []float32, ld, pt int) {
	p := j.p
	H, W := p.H, p.W
	for i := i0; i < i1; i++ {
		var bias float32
		if j.bias != nil {
			bias = j.bias[i]
		}
		yc := j.y[i*H*W : (i+1)*H*W]
		var zc []float32
		if j.z != nil {
			zc = j.z[i*H*W : (i+1)*H*W]
		}
		src := src[(i-i0)*ld:]
		if p.m == 4 {
			var ys, zs [4][]float32
			for ty := ty0; ty < ty1; ty++ {
				for r := range 4 {
					ys[r], zs[r] = nil, nil
					if oh := 4*ty + r; oh < H {
						ys[r] = yc[oh*W : (oh+1)*W]
						if zc != nil {
							zs[r] = zc[oh*W : (oh+1)*W]
						}
					}
				}
				kernels.WinoOut43(&ys, &zs, src[(ty-ty0)*p.Tx:], pt, p.Tx, W, bias, p.relu)
			}
		} else {
			for ty := ty0; ty < ty1; ty++ {
				r0 := 2 * ty
				y0 := yc[r0*W : (r0+1)*W]
				var y1, z0, z1 []float32
				if r0+1 < H {
					y1 = yc[(r0+1)*W : (r0+2)*W]
				}
				if zc != nil {
					z0 = zc[r0*W : (r0+1)*W]
					if y1 != nil {
						z1 = zc[(r0+1)*W : (r0+2)*W]
					}
				}
				kernels.WinoOut23(y0, y1, z0, z1, src[(ty-ty0)*p.Tx:], pt, p.Tx, W, bias, p.relu)
			}
		}
		if p.act != nil {
			p.act(yc[p.m*ty0*W : min(H, p.m*ty1)*W])
		}
	}
}

// inputChannel writes one channel's Winograd-domain rows for tile rows
// [ty0, ty1): point ξ of the i-th tile at v[ξ·vStride + i], through the
// channel's phase planes (rows ty0 to ty1 of each, in planes).
func (p *winoConv) inputChannel(v, planes, x []float32, ty0, ty1 int) {
	if p.m == 4 {
		p.inputChannel43(v, planes, x, ty0, ty1)
		return
	}
	H, W, Hq, Wq := p.H, p.W, p.Hq, p.Wq
	plane := Hq * Wq
	ra, rb := ty0, ty1+1 // the plane rows the tiles read
	for s := range 4 {
		ph, pw := s/2, s%2
		d := planes[s*plane : s*plane+(rb-ra)*Wq]
		// Plane (ph, pw) holds x(2r+ph-1, 2q+pw-1) at (r, q), zero outside.
		rlo, rhi := max(ra, 1-ph), min(rb, (H+2-ph)/2)
		qlo, qhi := 1-pw, min(Wq, (W+2-pw)/2)
		if rhi > rlo && qhi > qlo {
			clear(d[:(rlo-ra)*Wq])
			clear(d[(rhi-ra)*Wq:])
			h0, w0 := 2*rlo+ph-1, 2*qlo+pw-1
			kernels.PadCopyRows(d[(rlo-ra)*Wq:], Wq, x[h0*W+w0:], 2*W, rhi-rlo, qlo, qhi-qlo, 2)
		} else {
			clear(d)
		}
	}
	for ty := ty0; ty < ty1; ty++ {
		o := (ty - ty0) * Wq
		kernels.WinoIn23(v[(ty-ty0)*p.Tx:], p.vStride, planes[o:], planes[plane+o:], planes[2*plane+o:], planes[3*plane+o:], Wq, p.Tx)
	}
}

// inputChannel43 is inputChannel for F(4×4, 3×3): the padded rows the
// tiles read (4·ty0 to 4·ty1+1) are split into two stride-2 half rows,
// then each of those into two more, giving the four column-phase planes:
// plane pw holds padded element (r, 4q+pw) = x(r-1, 4q+pw-1) at
// (r-4·ty0)·Wq + q.
func (p *winoConv) inputChannel43(v, planes, x []float32, ty0, ty1 int) {
	H, W, Hq, Wq := p.H, p.W, p.Hq, p.Wq
	plane := Hq * Wq
	ra, rb := 4*ty0, 4*ty1+2 // padded rows
	n := rb - ra
	rlo, rhi := max(ra, 1), min(rb, H+1) // the rows inside the input
	if W <= winoSplitDirectMax {
		// Short rows: one strided copy per plane (scalar) costs less
		// than the calls of the two-step split.
		for pw := range 4 {
			d := planes[pw*plane : pw*plane+n*Wq]
			qlo, qhi := 1-min(pw, 1), min(Wq, (W-pw+4)/4)
			if rhi <= rlo || qhi <= qlo {
				clear(d)
				continue
			}
			clear(d[:(rlo-ra)*Wq])
			clear(d[(rhi-ra)*Wq:])
			kernels.PadCopyRows(d[(rlo-ra)*Wq:], Wq, x[(rlo-1)*W+4*qlo+pw-1:], W, rhi-rlo, qlo, qhi-qlo, 4)
		}
	} else {
		p.splitHalves(planes, x, ra, rb, rlo, rhi)
	}
	for ty := ty0; ty < ty1; ty++ {
		o := (ty - ty0) * 4 * Wq
		ps := [4][]float32{planes[o:], planes[plane+o:], planes[2*plane+o:], planes[3*plane+o:]}
		kernels.WinoIn43(v[(ty-ty0)*p.Tx:], p.vStride, &ps, Wq, p.Tx)
	}
}

// splitHalves builds the column-phase planes of inputChannel43 for padded
// rows [ra, rb) (input rows [rlo, rhi)) in two stride-2 steps, each an
// assembly copy.
func (p *winoConv) splitHalves(planes, x []float32, ra, rb, rlo, rhi int) {
	W, Hq, Wq := p.W, p.Hq, p.Wq
	plane, wh := Hq*Wq, 2*Wq
	half := planes[4*plane:]
	n := rb - ra
	for e := range 2 {
		// Half row e: element s is padded column 2s+e = x column 2s+e-1.
		d := half[e*Hq*wh : e*Hq*wh+n*wh]
		if rhi <= rlo {
			clear(d)
			continue
		}
		clear(d[:(rlo-ra)*wh])
		clear(d[(rhi-ra)*wh:])
		lpad := 1 - e
		w := min(wh, (W-e)/2+1) - lpad
		kernels.PadCopyRows(d[(rlo-ra)*wh:], wh, x[(rlo-1)*W+2*lpad+e-1:], W, rhi-rlo, lpad, w, 2)
	}
	for pw := range 4 {
		e, f := pw%2, pw/2 // padded column 4q+pw = half-row element 2q+f of half e
		d := planes[pw*plane : pw*plane+n*Wq]
		kernels.PadCopyRows(d, Wq, half[e*Hq*wh+f:], wh, n, 0, Wq-f, 2)
	}
}

// winoTile chooses the output tile of a Winograd conv: 4×4 (a quarter of
// the products) on planes of at least 14×14 (smaller ones waste too much
// of their last tiles) where its 36 weight matrices stay within 4 MiB;
// else 2×2. Larger ones stream from memory every run, which costs more
// than the products saved (ResNet-50's 256-channel 14×14 layers: 9 MiB,
// measured slower than 2×2 in the whole model on 1 and 2 threads).
func winoTile(C, M, H, W int) int {
	if convWinoTile != 0 {
		return convWinoTile
	}
	if H >= 14 && W >= 14 && 36*M*C*4 <= 4<<20 {
		return 4
	}
	return 2
}
