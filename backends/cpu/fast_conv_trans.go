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
// networks that have such planes. A task is a run of 32-channel panels
// over all virtual columns; the last K block scatters each tile into the
// output with bias, residual and ReLU.

// transMaxPixels is the largest output plane (OH·OW) that takes the
// transposed path in automatic mode.
var transMaxPixels = 256

// convTransMode selects the path where both apply: 0 automatic, 1 never
// the transposed one, 2 always (for tests and benchmarks).
var convTransMode = 0

// transConv is the transposed path's part of an implicitConv plan.
type transConv struct {
	cw      *kernels.ConvWeightsT // constant weights, packed once; nil: per run
	wOff    int                   // scratch offset of runtime weights
	dst     []int                 // per virtual column: output pixel, or -1
	per     int                   // panels per task
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
	// Deep 28×28 layers gain a little too; shallow ones (K < 1024) lose
	// to the final transposes.
	px := p.OH * p.OW
	return convTransMode == 2 || px <= transMaxPixels || px <= 4*transMaxPixels && p.K >= 1024
}

// planTrans sets up the transposed path (p.tr), adding its scratch to l.
func (p *implicitConv) planTrans(w arg, l *layout, workers int) {
	tr := &transConv{}
	if w.c != nil {
		tr.cw = sharedConvWeightsT(w.c.Float32s(), p.M, p.K)
	} else {
		tr.wOff = l.add(kernels.ConvWeightsTLen(p.M, p.K))
	}
	tr.dst = make([]int, p.nv)
	for v := range tr.dst {
		oh, ow := v/p.Wq, v%p.Wq
		tr.dst[v] = -1
		if ow < p.OW {
			tr.dst[v] = oh*p.OW + ow
		}
	}
	panels := (p.M + 31) / 32
	tasks := 1
	if workers > 1 {
		tasks = min(panels, 4*workers)
	}
	tr.per = (panels + tasks - 1) / tasks
	tr.tasks = (panels + tr.per - 1) / tr.per
	tr.tempLen = kernels.ConvTTempLen(p.nv)
	tr.tempOff = l.add(workers * tr.tempLen)
	p.temp = false
	p.tr = tr
}

// transTask runs panels [t·per, (t+1)·per) of the transposed GEMM over all
// virtual columns.
func (j *implicitJob) transTask(wk, t int) {
	p, tr := j.p, j.p.tr
	epi := &j.epis[wk]
	*epi = kernels.ConvEpi{Bias: j.bias, Z: j.z, Relu: p.relu}
	if !p.bias && !p.z && !p.relu {
		epi = nil
	}
	ohw := p.OH * p.OW
	tmp := j.temp[wk*tr.tempLen : (wk+1)*tr.tempLen]
	p0, p1 := t*tr.per, min((t+1)*tr.per, j.cwt.Panels())
	for pn := p0; pn < p1; pn++ {
		kernels.ConvGemmT(j.cwt, pn, j.buf, p.off, p.nv, tr.dst, tmp, j.y, ohw, epi)
	}
	if p.act != nil {
		for m := p0 * 32; m < min(p.M, p1*32); m++ {
			p.act(j.y[m*ohw : (m+1)*ohw])
		}
	}
}
