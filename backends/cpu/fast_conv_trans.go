package cpu

import (
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// The transposed implicit GEMM (kernels.ConvGemmT): output channels in the
// vector lanes, output pixels broadcast from the same padded buffer (or
// the input itself) that ConvGemm reads. ConvGemm puts pixels in the
// lanes, 32 to a panel, and a small plane fills them badly (7×7: 49 or 56
// virtual columns in 64 lanes); channel counts are multiples of 32 in the
// networks that have such planes. Tiles cover only the columns that are
// output pixels (two output rows a tile when a row has at most 7), so the
// Wq-OW columns the other path computes and drops cost nothing here. A
// task is a run of 32-channel panels over all tiles; the last K block
// transposes each tile into the output with bias, residual and ReLU.

// transMaxPixels is the largest output plane (OH·OW) that takes the
// transposed path in automatic mode.
var transMaxPixels = 256

// convTransMode selects the path where both apply: 0 automatic, 1 never
// the transposed one, 2 always (for tests and benchmarks).
var convTransMode = 0

// convTransChunks lets a task of the transposed path cover a chunk of the
// tiles when there are too few panels to go round (a variable so that
// benchmarks can compare it with whole-panel tasks).
var convTransChunks = true

// transConv is the transposed path's part of an implicitConv plan.
type transConv struct {
	cw      *kernels.ConvWeightsT  // constant weights, packed once; nil: per run
	wOff    int                    // scratch offset of runtime weights
	layouts []*kernels.ConvTLayout // per tile chunk: B row offsets, tiles, output pixels
	pix     [][2]int               // per tile chunk: its output pixels [lo, hi)
	per     int                    // panels per task
	tasks   int
	tempLen int // floats of one worker's partial tiles
	tempOff int
}

var convWeightsTPool = sync.Pool{New: func() any { return new(kernels.ConvWeightsT) }}

// wantTrans reports whether p should run the transposed GEMM.
func (p *implicitConv) wantTrans() bool {
	if convTransMode == 1 || p.G != 1 || !kernels.ConvTFast() {
		return false
	}
	// Larger planes: spatial convs with K >= 512 gain a little too (no
	// columns past OW computed); pointwise ones lose to the transposes
	// of the final store.
	px := p.OH * p.OW
	return convTransMode == 2 || px <= transMaxPixels || p.gh.k*p.gw.k > 1 && p.K >= 512
}

// planTrans sets up the transposed path (p.tr), adding its scratch to l.
func (p *implicitConv) planTrans(w arg, l *layout, workers int) {
	tr := &transConv{}
	if w.c != nil {
		tr.cw = sharedConvWeightsT(w.c.Float32s(), p.M, p.K)
	} else {
		tr.wOff = l.add(kernels.ConvWeightsTLen(p.M, p.K))
	}
	dst := make([]int, p.nv) // per virtual column: output pixel, or -1
	for v := range dst {
		oh, ow := v/p.Wq, v%p.Wq
		dst[v] = -1
		if ow < p.OW {
			dst[v] = oh*p.OW + ow
		}
	}
	tiles := p.transTiles()
	panels := (p.M + 31) / 32
	tasks, chunks := 1, 1
	if workers > 1 {
		// At least 4 tasks per worker: runs of panels, or where there are
		// too few panels (64 or 128 channels on a large plane), each panel
		// over chunks of the tiles.
		tasks = min(panels, 4*workers)
		if panels < 4*workers && convTransChunks {
			chunks = min(len(tiles), (4*workers+panels-1)/panels)
		}
	}
	tr.per = (panels + tasks - 1) / tasks
	tr.tasks = (panels + tr.per - 1) / tr.per * chunks
	most := 0
	for c := 0; c < chunks; c++ {
		ts := tiles[c*len(tiles)/chunks : (c+1)*len(tiles)/chunks]
		tr.layouts = append(tr.layouts, kernels.NewConvTLayout(p.off, dst, ts))
		tr.pix = append(tr.pix, tilePixels(ts, dst))
		most = max(most, len(ts))
	}
	tr.tempLen = kernels.ConvTTempLen(most)
	tr.tempOff = l.add(workers * tr.tempLen)
	p.temp = false
	p.tr = tr
}

// tilePixels returns the range [lo, hi) of the output pixels of the
// columns of tiles (dst as for kernels.NewConvTLayout); tiles in column
// order cover consecutive pixels, so consecutive runs of tiles split the
// plane into consecutive ranges.
func tilePixels(tiles []kernels.ConvTTile, dst []int) [2]int {
	lo, hi := -1, -1
	for _, t := range tiles {
		h := (t.N + 1) / 2
		for r := 0; r < t.N; r++ {
			v := t.V0 + r
			if r >= h {
				v = t.V0 + t.Second + r - h
			}
			if d := dst[v]; d >= 0 {
				if lo < 0 {
					lo = d
				}
				hi = d + 1
			}
		}
	}
	if lo < 0 {
		return [2]int{}
	}
	return [2]int{lo, hi}
}

// transTask runs panels [t·per, (t+1)·per) of the transposed GEMM over
// one chunk of the tiles (t%chunks; all of them with one chunk).
func (j *implicitJob) transTask(wk, t int) {
	p, tr := j.p, j.p.tr
	chunks := len(tr.layouts)
	ch := t % chunks
	t /= chunks
	layout, pix := tr.layouts[ch], tr.pix[ch]
	epi := &j.epis[wk]
	*epi = kernels.ConvEpi{Bias: j.bias, Z: j.z, Relu: p.relu}
	if !p.bias && !p.z && !p.relu {
		epi = nil
	}
	ohw := p.OH * p.OW
	tmp := j.temp[wk*tr.tempLen : (wk+1)*tr.tempLen]
	p0, p1 := t*tr.per, min((t+1)*tr.per, j.cwt.Panels())
	for pn := p0; pn < p1; pn++ {
		kernels.ConvGemmT(j.cwt, pn, layout, j.buf, tmp, j.y, ohw, epi)
	}
	if p.act != nil {
		for m := p0 * 32; m < min(p.M, p1*32); m++ {
			p.act(j.y[m*ohw+pix[0] : m*ohw+pix[1]])
		}
	}
}

// transTiles covers the output pixels' virtual columns with tiles and
// skips the rest (the Wq-OW columns past each output row): all columns
// in runs of up to 14 when there are none to skip, else two output rows
// a tile where two fit (OW <= 7), else each row on its own in runs.
func (p *implicitConv) transTiles() []kernels.ConvTTile {
	if p.Wq == p.OW {
		return kernels.ConvTTiles(nil, 0, p.nv)
	}
	var tiles []kernels.ConvTTile
	for oh := 0; oh < p.OH; oh++ {
		v0 := oh * p.Wq
		if 2*p.OW <= 14 && oh+1 < p.OH {
			tiles = append(tiles, kernels.ConvTTile{V0: v0, Second: p.Wq, N: 2 * p.OW})
			oh++
			continue
		}
		tiles = kernels.ConvTTiles(tiles, v0, v0+p.OW)
	}
	return tiles
}
