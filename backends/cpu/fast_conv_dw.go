package cpu

import (
	"github.com/weftrt/weft/backends/cpu/kernels"
)

// Depthwise convolutions (one input and one output channel per group)
// with a window that kernels.DepthwiseRows has a SIMD kernel for: each
// channel is a weighted sum of its taps' shifted runs of the padded
// buffer, computed row by row straight into the output (no GEMM, no
// column compaction). Tasks are runs of channels.

// dwConv is the depthwise part of an implicitConv plan.
type dwConv struct {
	w     []float32 // [C][taps], constant
	taps  int
	per   int // channels per task
	tasks int
}

// planDepthwise sets p.dw when the conv is depthwise with constant
// weights and a window the kernels cover.
func (p *implicitConv) planDepthwise(w arg, workers int) bool {
	taps := p.gh.k * p.gw.k
	if p.G != p.C || p.Mg != 1 || p.Cg != 1 || w.c == nil || p.direct || !kernels.DepthwiseFast(taps) {
		return false
	}
	d := &dwConv{w: w.c.Float32s(), taps: taps}
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

// dwTask runs channels [t·per, (t+1)·per).
func (j *implicitJob) dwTask(t int) {
	p, d := j.p, j.p.dw
	ohw := p.OH * p.OW
	for c := t * d.per; c < min((t+1)*d.per, p.C); c++ {
		var bias float32
		if j.bias != nil {
			bias = j.bias[c]
		}
		y := j.y[c*ohw : (c+1)*ohw]
		// With a residual the ReLU comes after it.
		kernels.DepthwiseRows(y, p.OH, p.OW, j.buf[c*p.chanLen:], p.Wq, p.off[:d.taps], d.w[c*d.taps:(c+1)*d.taps], bias, p.relu && j.z == nil)
		if j.z != nil {
			kernels.ConvEpilogue(y, y, j.z[c*ohw:(c+1)*ohw], 0, p.relu)
		}
		if p.act != nil {
			p.act(y)
		}
	}
}
