package cpu

import (
	"math"
	"sync"

	"github.com/weftrt/weft/ir"
)

func init() { registerIntoFirst(buildFastMaxPool, "MaxPool") }

// buildFastMaxPool handles float32 1-D/2-D MaxPool (Y only) in float32,
// with each window's in-bounds taps precomputed per output row and column
// and the planes spread over the pool. NaN propagates as in the reference.
func buildFastMaxPool(s *nodeSpec) intoKernel {
	x, y := s.input(0), s.out[0]
	if len(s.in) != 1 || len(s.out) != 1 || !allF32(x, y) {
		return nil
	}
	r := len(x.shape) - 2
	kernel := s.n.AttrInts("kernel_shape", nil)
	if r < 1 || r > 2 || len(kernel) != r {
		return nil
	}
	g, ok := geomFor(s.n, x.shape, y.shape, x.shape[1], kernel, s.n.AttrInt("ceil_mode", 0) != 0)
	if !ok {
		return nil
	}
	if !g[0].everyWindowReads() || !g[1].everyWindowReads() {
		return nil
	}
	j := maxPoolJob{gh: g[0], gw: g[1], planes: int(x.shape[0] * x.shape[1])}
	if j.planes*g[0].out*g[1].out < 4096 {
		return nil // small: the plain kernel
	}
	j.hTaps, j.wTaps = windowTaps(g[0]), windowTaps(g[1])
	pool := s.pool
	return func(in, out []*ir.Tensor, _ []byte) error {
		job := maxPoolJobs.Get().(*maxPoolJob)
		*job = j
		job.x, job.y = in[0].Float32s(), out[0].Float32s()
		job.per = max(1, j.planes/(4*pool.Workers()))
		pool.RunTasks((j.planes+job.per-1)/job.per, job)
		*job = maxPoolJob{}
		maxPoolJobs.Put(job)
		return nil
	}
}

// windowTaps returns, per output position along a, the input offsets of
// its in-bounds taps.
func windowTaps(a axis2) [][]int {
	taps := make([][]int, a.out)
	for o := range taps {
		for k := 0; k < a.k; k++ {
			if p := o*a.stride - a.padB + k*a.dil; p >= 0 && p < a.in {
				taps[o] = append(taps[o], p)
			}
		}
	}
	return taps
}

// maxPoolJob is one MaxPool run; task t covers planes [t*per, (t+1)*per).
type maxPoolJob struct {
	gh, gw       axis2
	planes, per  int
	hTaps, wTaps [][]int
	x, y         []float32
}

var maxPoolJobs = sync.Pool{New: func() any { return new(maxPoolJob) }}

// Task pools a band of planes.
func (j *maxPoolJob) Task(_, t int) {
	H, W, OH, OW := j.gh.in, j.gw.in, j.gh.out, j.gw.out
	ninf := float32(math.Inf(-1))
	for p := t * j.per; p < min((t+1)*j.per, j.planes); p++ {
		xp := j.x[p*H*W : (p+1)*H*W]
		yp := j.y[p*OH*OW : (p+1)*OH*OW]
		for oh, hs := range j.hTaps {
			yr := yp[oh*OW : (oh+1)*OW]
			for ow, ws := range j.wTaps {
				best := ninf
				for _, ih := range hs {
					xr := xp[ih*W : ih*W+W]
					for _, iw := range ws {
						if v := xr[iw]; v > best || v != v && best == best {
							best = v // a NaN sticks, as in the reference
						}
					}
				}
				yr[ow] = best
			}
		}
	}
}
