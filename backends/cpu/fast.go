package cpu

import (
	"sync"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/kernels"
)

// The fast kernels (fast*.go) wrap backends/cpu/kernels (SIMD SGEMM,
// quantized GEMM, a persistent worker pool) as into kernels registered
// ahead of the plain-Go ones: each declines what it does not cover and the
// node falls back to the plain kernel, then to the reference.

// NewDevice returns a CPU device whose fast kernels run on threads workers
// (0: GOMAXPROCS at first use). Devices with the same thread count share one
// persistent pool.
func NewDevice(threads int) backends.Device { return device{threads: max(threads, 0)} }

// serialMACs is the work (multiply-adds) below which a fast kernel runs on
// the calling goroutine alone: about 2.5 µs at the AVX-512 peak, the order
// of a few hand-offs to the pool's workers.
const serialMACs = 1 << 19

var (
	poolsMu sync.Mutex
	pools   = map[int]*kernels.Pool{}
)

// poolFor returns the process-wide pool of n workers (n <= 0: the default
// pool, sized by GOMAXPROCS), started on first use and kept for the life of
// the process, so that sessions reuse workers instead of starting their own.
func poolFor(n int) *kernels.Pool {
	if n <= 0 {
		return kernels.Default()
	}
	poolsMu.Lock()
	defer poolsMu.Unlock()
	p := pools[n]
	if p == nil {
		p = kernels.NewPool(n)
		pools[n] = p
	}
	return p
}

// epilogue is the elementwise tail of a fused GEMM: over rows × cols of y
// (row-major), y = act(y + rowBias[r%len] + colBias[c] + z), each part
// optional. It runs over the pool in blocks of rows; a job is taken from a
// sync.Pool so that a run does not allocate.
type epilogue struct {
	y, z             []float32
	rowBias, colBias []float32
	act              func([]float32)
	relu             bool // max(0, ·) fused into the single pass (act is nil)
	rows, cols, per  int
}

var epiPool = sync.Pool{New: func() any { return new(epilogue) }}

// runEpilogue applies the epilogue described by e (copied) over pool.
func runEpilogue(pool *kernels.Pool, e epilogue) {
	if e.rowBias == nil && e.colBias == nil && e.z == nil && e.act == nil && !e.relu || e.rows == 0 || e.cols == 0 {
		return
	}
	j := epiPool.Get().(*epilogue)
	*j = e
	// Blocks of about 16K elements: enough to amortize a task, small
	// enough to balance the activations' cost.
	j.per = max(1, min(e.rows, 16384/e.cols))
	if w := pool.Workers(); w > 1 {
		j.per = max(1, min(j.per, (e.rows+2*w-1)/(2*w)))
	}
	pool.RunTasks((e.rows+j.per-1)/j.per, j)
	*j = epilogue{}
	epiPool.Put(j)
}

// Task runs rows [t*per, (t+1)*per) in one pass over each row.
func (e *epilogue) Task(_, t int) {
	r0 := t * e.per
	r1 := min(r0+e.per, e.rows)
	for r := r0; r < r1; r++ {
		row := e.y[r*e.cols : (r+1)*e.cols]
		var b float32
		if e.rowBias != nil {
			b = e.rowBias[r%len(e.rowBias)]
		}
		var zr, cb []float32
		if e.z != nil {
			zr = e.z[r*e.cols : (r+1)*e.cols]
		}
		if e.colBias != nil {
			cb = e.colBias[:len(row)]
		}
		switch {
		case cb == nil && zr == nil:
			if e.rowBias != nil || e.relu {
				for i, v := range row {
					v += b
					if e.relu && v < 0 {
						v = 0
					}
					row[i] = v
				}
			}
		case b == 0 && !e.relu:
			// Vector adds: row·1 + m is exactly row + m.
			if cb != nil {
				kernels.ScaleAdd(row, 1, cb)
			}
			if zr != nil {
				kernels.ScaleAdd(row, 1, zr)
			}
		case cb == nil:
			zr = zr[:len(row)]
			for i, v := range row {
				v = v + b + zr[i]
				if e.relu && v < 0 {
					v = 0
				}
				row[i] = v
			}
		default:
			for i, v := range row {
				v += b
				v += cb[i]
				if zr != nil {
					v += zr[i]
				}
				if e.relu && v < 0 {
					v = 0
				}
				row[i] = v
			}
		}
		if e.act != nil {
			e.act(row)
		}
	}
}

// layout hands out 64-byte aligned float32 regions of a kernel's scratch.
type layout struct{ n int }

// add reserves n floats and returns their offset.
func (l *layout) add(n int) int {
	off := l.n
	l.n += (n + 15) &^ 15
	return off
}

// bytes is the scratch size of the layout.
func (l *layout) bytes() int { return l.n * 4 }

// region views n floats of scratch at float offset off.
func region(scratch []byte, off, n int) []float32 { return f32View(scratch[off*4:], n) }

// packedPool recycles the PackedB headers of per-run packing.
var packedPool = sync.Pool{New: func() any { return new(kernels.PackedB) }}

// sgemm computes C = A·B (M×K times K×N, dense row-major) over pool with B
// packed into scratch at pbOff and A's packing at aOff (see gemmLayout).
func sgemm(pool *kernels.Pool, M, N, K int, a, b, c []float32, scratch []byte, pbOff, aOff int) {
	sgemmEpi(pool, M, N, K, a, b, c, scratch, pbOff, aOff, nil)
}

// sgemmEpi is sgemm with the epilogue epi (nil: none) fused into the GEMM.
func sgemmEpi(pool *kernels.Pool, M, N, K int, a, b, c []float32, scratch []byte, pbOff, aOff int, epi *kernels.Epilogue) {
	pb := packedPool.Get().(*kernels.PackedB)
	pb.Pack(region(scratch, pbOff, kernels.PackedBLen(K, N)), b, N, K, N, false)
	kernels.SgemmPackedEpi(pool, M, a, K, pb, c, N, false, region(scratch, aOff, M*K), epi)
	*pb = kernels.PackedB{}
	packedPool.Put(pb)
}

// gemmLayout reserves sgemm's scratch for an M×K by K×N product.
func gemmLayout(l *layout, M, N, K int) (pbOff, aOff int) {
	return l.add(kernels.PackedBLen(K, N)), l.add(M * K)
}
