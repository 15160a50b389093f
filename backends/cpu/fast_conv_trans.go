package cpu

import "github.com/weftrt/weft/backends/cpu/kernels"

// The transposed orientation of the implicit-GEMM conv (see
// kernels.ConvGemmT): for small images, output pixels fill the
// micro-tile's rows, 14 at a time, and output channels its 32 columns, so a
// 7×7 output wastes 7 of 56 lanes instead of 15 of 64, and 14×14 none.
// The tasks are (weight panel, group of pixel tiles): each task streams
// its panel once for its tiles.

// transPlan is the transposed part of an implicitConv plan.
type transPlan struct {
	cw       *kernels.ConvWeightsT
	tiles    int     // pixel tiles of ConvTRows virtual columns
	segs     [][]int // per tile: (lane mask, output shift) pairs
	groups   int     // tile groups per panel
	tileOff  int     // scratch: a tile per worker
	panels   int
	perGroup int
}

// useTrans reports whether the transposed orientation wastes clearly fewer
// lanes than the plain one (nr-wide panels of virtual columns) here.
func (p *implicitConv) useTrans(nr int) bool {
	if !kernels.ConvTSupported() || p.act != nil {
		return false
	}
	valid := float64(p.OH * p.OW)
	plain := valid / float64(roundUpInt(p.nv, nr))
	tr := valid / float64(roundUpInt(p.nv, kernels.ConvTRows)) *
		float64(p.M) / float64(roundUpInt(p.M, kernels.ConvTCols))
	return tr > plain+0.05
}

// planTrans fills p.tr for constant weights w (M×K) on workers; l gets the
// per-worker tiles.
func (p *implicitConv) planTrans(w []float32, workers int, l *layout) {
	t := &transPlan{cw: kernels.PackConvWeightsT(w, p.K, p.M, p.K)}
	t.panels = t.cw.Panels()
	t.tiles = (p.nv + kernels.ConvTRows - 1) / kernels.ConvTRows
	// Groups of at most 8 tiles (a panel is read once per group), more
	// groups while the tasks are fewer than 4 per worker.
	t.groups = (t.tiles + 7) / 8
	for t.groups < t.tiles && t.panels*t.groups < 4*workers {
		t.groups++
	}
	t.perGroup = (t.tiles + t.groups - 1) / t.groups
	t.groups = (t.tiles + t.perGroup - 1) / t.perGroup
	t.segs = make([][]int, t.tiles)
	for i := range t.segs {
		v0 := i * kernels.ConvTRows
		rows := min(kernels.ConvTRows, p.nv-v0)
		var segs []int
		for l := 0; l < rows; {
			v := v0 + l
			oh, ow := v/p.Wq, v%p.Wq
			n := min(rows-l, p.Wq-ow) // lanes left in this virtual row
			if ow < p.OW {
				k := min(n, p.OW-ow)
				segs = append(segs, (1<<k-1)<<l, oh*p.OW+ow-l)
			}
			l += n
		}
		t.segs[i] = segs
	}
	t.tileOff = l.add(workers * kernels.ConvTRows * kernels.ConvTCols)
	p.tr = t
}

// transTask runs task t of the transposed GEMM phase on worker wk.
func (j *implicitJob) transTask(wk, t int) {
	p, tr := j.p, j.p.tr
	panel, g := t/tr.groups, t%tr.groups
	tile := j.tile[wk*kernels.ConvTRows*kernels.ConvTCols : (wk+1)*kernels.ConvTRows*kernels.ConvTCols]
	for i := g * tr.perGroup; i < min((g+1)*tr.perGroup, tr.tiles); i++ {
		if len(tr.segs[i]) == 0 {
			continue // a tile of dropped columns only
		}
		v0 := i * kernels.ConvTRows
		rows := min(kernels.ConvTRows, p.nv-v0)
		kernels.ConvGemmT(tr.cw, panel, panel+1, j.buf[v0:], p.off, rows, j.y, p.OH*p.OW, tr.segs[i], j.bias, j.z, p.relu, tile)
	}
}
