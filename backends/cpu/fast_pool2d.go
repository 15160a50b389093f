package cpu

import (
	"math"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

func init() { registerIntoFirst(buildRowMaxPool, "MaxPool") }

// maxPool3Enabled lets buildRowMaxPool use kernels.MaxPool3S2Row (a
// variable so that tests and benchmarks can compare it with the general
// row kernel).
var maxPool3Enabled = true

// buildRowMaxPool handles float32 1-D/2-D MaxPool (Y only) with column
// stride 1 or 2 row by row: per output row, the vertical max of the
// window's in-bounds input rows (kernels.MaxRows) goes into a per-worker
// row padded with -Inf on both sides, and kernels.MaxPoolRow takes each
// output's horizontal max from it. Planes are spread over the pool. Other
// strides, or windows that may read padding only, decline (the next
// MaxPool kernel takes them).
func buildRowMaxPool(s *nodeSpec) intoKernel {
	x, y := s.input(0), s.out[0]
	if len(s.in) != 1 || len(s.out) != 1 || !allF32(x, y) {
		return nil
	}
	r := len(x.shape) - 2
	kernel := s.n.AttrInts("kernel_shape", nil)
	if r < 1 || r > 2 || len(kernel) != r || s.n.AttrInt("storage_order", 0) != 0 {
		return nil
	}
	g, ok := geomFor(s.n, x.shape, y.shape, x.shape[1], kernel, s.n.AttrInt("ceil_mode", 0) != 0)
	if !ok {
		return nil
	}
	gh, gw := g[0], g[1]
	if !gh.everyWindowReads() || !gw.everyWindowReads() || gw.stride > 2 {
		return nil
	}
	j := rowPoolJob{gh: gh, gw: gw, planes: int(x.shape[0] * x.shape[1])}
	if j.planes*gh.out*gw.out < 4096 {
		return nil // small: the plain kernel
	}
	j.hTaps = windowTaps(gh)
	j.win3 = useMaxPool3(gw, j.hTaps)
	for k := 0; k < gw.k; k++ {
		j.offs = append(j.offs, k*gw.dil)
	}
	// The padded row: padB cells of -Inf, the W columns, then -Inf up to
	// the last tap of the last output plus the kernel's vector slack.
	j.rowLen = max(gw.padB+gw.in, (gw.out-1)*gw.stride+(gw.k-1)*gw.dil+1) + kernels.MaxPoolRowSlack + 32*gw.stride
	workers := s.pool.Workers()
	var l layout
	rowOff := l.add(workers * j.rowLen)
	s.scratch = l.bytes()
	pool := s.pool
	return func(in, out []*ir.Tensor, scratch []byte) error {
		job := rowPoolJobs.Get().(*rowPoolJob)
		*job = j
		job.x, job.y = in[0].Float32s(), out[0].Float32s()
		job.rows = region(scratch, rowOff, workers*j.rowLen)
		ninf := float32(math.Inf(-1))
		for i := range job.rows {
			job.rows[i] = ninf
		}
		job.per = max(1, j.planes/(4*workers))
		pool.RunTasks((j.planes+job.per-1)/job.per, job)
		*job = rowPoolJob{}
		rowPoolJobs.Put(job)
		return nil
	}
}

// useMaxPool3 reports whether kernels.MaxPool3S2Row covers a pool with
// columns along gw and the in-bounds rows hTaps of each output row: 3
// columns at stride 2 with one column of padding before, at most 3 rows a
// window, and a vector kernel to run it.
func useMaxPool3(gw axis2, hTaps [][]int) bool {
	if !maxPool3Enabled || gw.k != 3 || gw.stride != 2 || gw.padB != 1 || gw.dil != 1 || !kernels.MaxPool3S2RowVector() {
		return false
	}
	for _, hs := range hTaps {
		if len(hs) > 3 {
			return false
		}
	}
	return true
}

// rowPoolJob is one row-wise MaxPool run; task t covers planes
// [t*per, (t+1)*per) using worker wk's padded row.
type rowPoolJob struct {
	gh, gw      axis2
	planes, per int
	hTaps       [][]int
	win3        bool // columns 3 wide, stride 2, pad 1 before: kernels.MaxPool3S2Row
	offs        []int
	rowLen      int
	rows        []float32 // workers × rowLen, -Inf outside the columns
	x, y        []float32
}

var rowPoolJobs = sync.Pool{New: func() any { return new(rowPoolJob) }}

// Task pools a band of planes.
func (j *rowPoolJob) Task(wk, t int) {
	H, W, OH, OW := j.gh.in, j.gw.in, j.gh.out, j.gw.out
	row := j.rows[wk*j.rowLen : (wk+1)*j.rowLen]
	mid := row[j.gw.padB : j.gw.padB+W]
	for p := t * j.per; p < min((t+1)*j.per, j.planes); p++ {
		xp := j.x[p*H*W : (p+1)*H*W]
		yp := j.y[p*OH*OW : (p+1)*OH*OW]
		if j.win3 {
			// The window's rows straight from the plane, one call a row.
			for oh, hs := range j.hTaps {
				r0 := xp[hs[0]*W : hs[0]*W+W]
				r1, r2 := r0, r0
				if len(hs) > 1 {
					r1, r2 = xp[hs[1]*W:hs[1]*W+W], xp[hs[len(hs)-1]*W:hs[len(hs)-1]*W+W]
				}
				kernels.MaxPool3S2Row(yp[oh*OW:(oh+1)*OW], r0, r1, r2)
			}
			continue
		}
		for oh, hs := range j.hTaps {
			src := xp[hs[0]*W : hs[0]*W+W]
			if len(hs) == 1 {
				copy(mid, src)
			} else {
				kernels.MaxRows(mid, src, xp[hs[1]*W:hs[1]*W+W])
				for _, h := range hs[2:] {
					kernels.MaxRows(mid, mid, xp[h*W:h*W+W])
				}
			}
			kernels.MaxPoolRow(yp[oh*OW:(oh+1)*OW], row, j.offs, j.gw.stride)
		}
	}
}
