package cpu

import (
	"github.com/weftrt/weft/backends/cpu/kernels"
)

// Depthwise convolutions (one input and one output channel per group)
// with a window that kernels.DepthwiseRows has a SIMD kernel for: each
// channel is a weighted sum of its taps' shifted runs of its padded
// (stride-phase split) plane, computed row by row straight into the
// output (no GEMM, no column compaction). A task pads each of its
// channels into a per-worker plane just before using it, so the padded
// copy stays in cache instead of going through memory as a whole-input
// buffer. Tasks are runs of channels.

// dwConv is the depthwise part of an implicitConv plan.
type dwConv struct {
	w        []float32 // [C][taps], constant
	taps     int
	per      int // channels per task
	tasks    int
	planeLen int // floats of a worker's padded plane
	planeOff int // scratch offset of the workers' planes
}

// planDepthwise sets p.dw (adding its scratch to l) when the conv is
// depthwise with constant weights and a window the kernels cover.
func (p *implicitConv) planDepthwise(w arg, l *layout, workers int) bool {
	taps := p.gh.k * p.gw.k
	if p.G != p.C || p.Mg != 1 || p.Cg != 1 || w.c == nil || p.direct || !kernels.DepthwiseFast(taps) {
		return false
	}
	d := &dwConv{w: w.c.Float32s(), taps: taps}
	hi := 0
	for _, o := range p.off[:taps] {
		hi = max(hi, o)
	}
	d.planeLen = max(p.chanLen, hi+(p.OH-1)*p.Wq+p.OW)
	d.planeOff = l.add(workers * d.planeLen)
	tasks := 1
	if workers > 1 {
		tasks = min(p.C, 4*workers)
	}
	d.per = (p.C + tasks - 1) / tasks
	d.tasks = (p.C + d.per - 1) / d.per
	p.dw = d
	p.temp = false
	return true
}

// dwTask runs channels [t·per, (t+1)·per) on worker wk's plane.
func (j *implicitJob) dwTask(wk, t int) {
	p, d := j.p, j.p.dw
	ohw, hw := p.OH*p.OW, p.H*p.W
	plane := j.temp[wk*d.planeLen : (wk+1)*d.planeLen]
	clear(plane[p.chanLen:]) // never read for an output; kept defined
	for c := t * d.per; c < min((t+1)*d.per, p.C); c++ {
		p.transformChannel(plane[:p.chanLen], j.x[c*hw:(c+1)*hw])
		var bias float32
		if j.bias != nil {
			bias = j.bias[c]
		}
		y := j.y[c*ohw : (c+1)*ohw]
		// With a residual the ReLU comes after it.
		kernels.DepthwiseRows(y, p.OH, p.OW, plane, p.Wq, p.off[:d.taps], d.w[c*d.taps:(c+1)*d.taps], bias, p.relu && j.z == nil)
		if j.z != nil {
			kernels.ConvEpilogue(y, y, j.z[c*ohw:(c+1)*ohw], 0, p.relu)
		}
		if p.act != nil {
			p.act(y)
		}
	}
}
