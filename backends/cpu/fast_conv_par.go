package cpu

import (
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// convChunkAlign is the column alignment of a conv GEMM chunk: a multiple
// of every micro-kernel's panel width, so that PackedBLen of a full chunk
// is the same at every ISA level.
const convChunkAlign = 32

// convChunks returns the column chunk width and the per-worker packed-B
// size (floats) of a column-split conv GEMM over workers.
func convChunks(workers, K, N int) (per, packLen int) {
	per = roundUpInt((N+2*workers-1)/(2*workers), convChunkAlign)
	return per, K * per
}

// convColumnSplit selects the column-split conv GEMM on pools of several
// workers (a variable so that benchmarks can compare it with the plain
// pack-then-SgemmPacked path).
var convColumnSplit = true

func roundUpInt(x, m int) int { return (x + m - 1) / m * m }

// convGemmJob is Y = act(W·col + B + Z) for one image split into column
// chunks of the output pixels: each task packs its slice of col into its
// worker's region of scratch, runs the GEMM serially and applies the
// epilogue to its columns while they are in cache. Packing, GEMM and
// epilogue all run in parallel, with no hand-off between them.
type convGemmJob struct {
	M, N, K      int
	w, col, y, z []float32
	bias         []float32
	act          func([]float32)
	relu         bool
	per          int
	scratch      []byte
	packOff      int // float offset of worker 0's packed-B region
	packLen      int // floats per worker

	// Row mode (x set): task t builds the im2col columns of output rows
	// [t*rowsPer, (t+1)*rowsPer) itself, into its worker's region at
	// colOff (colLen floats per worker), instead of slicing col.
	x                  []float32
	C, rowsPer         int
	gh, gw             axis2
	hLo, hHi, wLo, wHi []int
	colOff, colLen     int
}

var convGemmJobs = sync.Pool{New: func() any { return new(convGemmJob) }}

// runConvGemm runs j (copied) over pool.
func runConvGemm(pool *kernels.Pool, j convGemmJob) {
	p := convGemmJobs.Get().(*convGemmJob)
	*p = j
	tasks := (j.N + j.per - 1) / j.per
	if j.x != nil {
		tasks = (j.gh.out + j.rowsPer - 1) / j.rowsPer
	}
	pool.RunTasks(tasks, p)
	*p = convGemmJob{}
	convGemmJobs.Put(p)
}

// Task computes output columns [t*per, (t+1)*per) on worker wk.
func (j *convGemmJob) Task(wk, t int) {
	n0 := t * j.per
	nc := min(j.per, j.N-n0)
	src, ld := j.col[n0:], j.N
	if j.x != nil {
		oh0 := t * j.rowsPer
		oh1 := min(oh0+j.rowsPer, j.gh.out)
		n0, nc = oh0*j.gw.out, (oh1-oh0)*j.gw.out
		src, ld = region(j.scratch, j.colOff+wk*j.colLen, j.K*nc), nc
		im2colRows(src, j.x, j.C, j.gh, j.gw, j.hLo, j.hHi, j.wLo, j.wHi, oh0, oh1)
	}
	pb := packedPool.Get().(*kernels.PackedB)
	pb.Pack(region(j.scratch, j.packOff+wk*j.packLen, j.packLen), src, ld, j.K, nc, false)
	kernels.SgemmPackedBuf(nil, j.M, j.w, j.K, pb, j.y[n0:], j.N, false, nil)
	*pb = kernels.PackedB{}
	packedPool.Put(pb)
	if j.bias == nil && j.z == nil && j.act == nil && !j.relu {
		return
	}
	for r := 0; r < j.M; r++ {
		e := epilogue{y: j.y[r*j.N+n0 : r*j.N+n0+nc], act: j.act, relu: j.relu, rows: 1, cols: nc, per: 1}
		if j.bias != nil {
			e.rowBias = j.bias[r : r+1]
		}
		if j.z != nil {
			e.z = j.z[r*j.N+n0 : r*j.N+n0+nc]
		}
		e.Task(0, 0)
	}
}

// im2colRows is im2col restricted to output rows [oh0, oh1): col is the
// C·kH·kW × (oh1-oh0)·OW patch matrix of those rows.
func im2colRows(col, x []float32, C int, gh, gw axis2, hLo, hHi, wLo, wHi []int, oh0, oh1 int) {
	H, W, OW := gh.in, gw.in, gw.out
	nc := (oh1 - oh0) * OW
	r := 0
	for c := 0; c < C; c++ {
		xp := x[c*H*W : (c+1)*H*W]
		for kh := 0; kh < gh.k; kh++ {
			for kw := 0; kw < gw.k; kw++ {
				dst := col[r*nc : (r+1)*nc]
				r++
				lo, hi := wLo[kw], wHi[kw]
				for oh := oh0; oh < oh1; oh++ {
					d := dst[(oh-oh0)*OW : (oh-oh0+1)*OW]
					if oh < hLo[kh] || oh >= hHi[kh] || lo >= hi {
						clear(d)
						continue
					}
					clear(d[:lo])
					clear(d[hi:])
					base := (oh*gh.stride-gh.padB+kh*gh.dil)*W - gw.padB + kw*gw.dil
					if gw.stride == 1 {
						copy(d[lo:hi], xp[base+lo:base+hi])
						continue
					}
					for ow := lo; ow < hi; ow++ {
						d[ow] = xp[base+ow*gw.stride]
					}
				}
			}
		}
	}
}
