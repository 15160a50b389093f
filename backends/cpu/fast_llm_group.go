package cpu

import (
	"fmt"
	"slices"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// QMatMulGroup (ir/ops.go): the QMatMuls of a decoder layer that share an
// input (q/k/v; gate/up with the SwiGLU epilogue) as one kernel. The
// activations are quantized once (kernels.QuantizeActs) and the rows of
// every weight are split into tasks that one pool batch runs: a decode
// step then has one dispatch and one quantization per group instead of one
// per weight. Each task calls kernels.QMatMul on its slice of weight rows,
// serially, so every output element is the one QMatMul computes on its
// own (its summation order does not depend on how the rows are split).
// F16 and BF16 weights: each task runs kernels.HalfMatMulRows on its
// rows (whole groups of four), nothing is quantized; at one activation row
// (decode) that is HalfMatMul's GEMV, at more its dot-product kernels and
// never the packed GEMM, so that every row comes out bit for bit as at one
// row (frontend/llama groups half weights in graphs that compute every
// token's logits, which verify speculative drafts, for that reason).
// With bias (a Qwen2 layer's q/k/v) a task adds each weight's bias to the
// rows it computed, in f32 as the Add it replaces.
// With act silu_mul a task computes its rows of the gate into Y and of the
// up projection into scratch, then Y = SiLU(gate)·up for those rows; at
// one activation row the gate's and the up projection's rows are separate
// tasks and the SwiGLU runs over the whole row after the batch.

func init() { registerIntoFirst(buildQMatMulGroup, "QMatMulGroup") }

// qgTask is rows [n0, n1) of weight w.
type qgTask struct{ w, n0, n1 int }

// qgShape is what a group kernel fixes at compile time.
type qgShape struct {
	dt      ir.DType
	M, K    int
	ns      []int // rows of each weight
	rb      int   // bytes per weight row
	siluMul bool
	// apart (silu_mul at one activation row): the gate's and the up
	// projection's rows are separate tasks, so that a worker streams
	// through a contiguous run of one weight, and the SwiGLU of the whole
	// row follows the batch.
	apart bool
	half  bool // f16 or bf16 weights: kernels.HalfMatMul, no quantization
	// bias: the inputs after the weights are one f32 bias per weight,
	// added to its rows by the task that computes them.
	bias bool
	// packed: Q4_0 or Q8_0 weights repacked (fast_weightcopy.go); the
	// job's weights are the packed copies.
	packed bool
	copies []*weightCopy // per weight, or nil (fast_weightcopy.go)
	tasks  []qgTask
}

// qgJob is one run of a group kernel: the quantized activations and the
// run's weights and outputs. Jobs come from a sync.Pool, so concurrent runs
// never share one and warm runs do not allocate.
type qgJob struct {
	sh *qgShape
	x  []float32 // the activations, for f16 and bf16 weights
	q  kernels.QuantizedActs
	// rows, when ok (one activation row): the row kernel the tasks call
	// directly instead of kernels.QMatMul.
	rows   kernels.QRows
	rowsOK bool
	ws     [][]byte
	ys     [][]float32
	bs     [][]float32 // the biases, with shape.bias
	up     []float32
	// prime is the output of the one-row QMatMul that builds the
	// activations' layouts before the tasks share them.
	prime []float32
	mu    sync.Mutex
	err   error
}

var qgJobs = sync.Pool{New: func() any { return new(qgJob) }}

// buildQMatMulGroup accepts f32 X [..., K] and constant Q8_0, Q4_0, Q4_K or
// Q6_K weights of one type (the types kernels.QMatMul has), K a multiple of
// 32 (256 for the K-quants); or F16 or BF16 weights of one type
// (kernels.HalfMatMulRows, row groups of four).
func buildQMatMulGroup(s *nodeSpec) intoKernel {
	x := s.input(0)
	if len(s.in) < 2 || !x.ok || x.dt != ir.Float32 || len(x.shape) < 1 {
		return nil
	}
	act := s.n.AttrString("act", "")
	nw, err := ir.QMatMulGroupWeights(s.n)
	if err != nil {
		return nil
	}
	nb := len(s.in) - 1 - nw // biases (0 or nw)
	switch {
	case act == "" && len(s.out) == nw:
	case act == "silu_mul" && nw == 2 && len(s.out) == 1:
	default:
		return nil
	}
	K := int(x.shape[len(x.shape)-1])
	dt := s.in[1].dt
	if K == 0 {
		return nil
	}
	M := numel(x.shape) / K
	half := dt == ir.Float16 || dt == ir.BFloat16
	switch {
	case dt == ir.Q8_0 || dt == ir.Q4_0:
	case dt == ir.Q4_K || dt == ir.Q6_K:
		if K%256 != 0 {
			return nil
		}
	case half:
	default:
		return nil
	}
	if !half && K%32 != 0 {
		return nil
	}
	sh := &qgShape{dt: dt, M: M, K: K, siluMul: act == "silu_mul", half: half}
	sh.rb = int(dt.Bytes(int64(K)))
	for i := 1; i <= nw; i++ {
		w := s.in[i]
		if !w.ok || w.c == nil || w.dt != dt || len(w.shape) != 2 || int(w.shape[1]) != K ||
			int64(len(w.c.Data)) != dt.Bytes(w.shape[0]*int64(K)) {
			return nil
		}
		sh.ns = append(sh.ns, int(w.shape[0]))
	}
	for i := 0; i < nb; i++ {
		if b := s.input(1 + nw + i); !b.ok || b.dt != ir.Float32 || !slices.Equal(b.shape, []int64{int64(sh.ns[i])}) {
			return nil
		}
	}
	sh.bias = nb > 0
	for o := range s.out {
		want := append(append([]int64{}, x.shape[:len(x.shape)-1]...), int64(sh.ns[o]))
		if s.out[o].dt != ir.Float32 || !slices.Equal(want, s.out[o].shape) {
			return nil
		}
	}
	if sh.siluMul {
		if sh.ns[0] != sh.ns[1] {
			return nil
		}
		s.scratch = M * sh.ns[0] * 4
	}
	// Tasks of about 64 KiB of weights (both weights' rows with silu_mul
	// at several rows), at least four per worker for balance; none
	// straddles two weights. A decode step (one row) takes 128 KiB: the
	// half types and the K-quants pay a kernel call's setup per task, and
	// a group has several weights to balance with (32 KiB measured no
	// better on Qwen2-0.5B at two threads).
	workers := s.pool.Workers()
	rowBytes := sh.rb
	if sh.siluMul {
		rowBytes *= 2
	}
	taskBytes := 65536
	if M == 1 {
		taskBytes = 131072
		// One row: the SwiGLU of the whole row after the batch is a few
		// hundred ns, and it spares a worker a jump between the two
		// weights every task, each a stream its prefetches had not reached.
		sh.apart = sh.siluMul
	}
	if sh.apart {
		rowBytes = sh.rb
	}
	// At one row, tasks of one size in bytes across the group's weights,
	// about a twelfth of a worker's share: the pool splits a batch into
	// regions by task count, so q/k/v with smaller k and v (GQA) got
	// regions of 480 and 100 KB on Qwen2-0.5B, and the worker with the
	// small one spent its time stealing. Equal tasks took its q/k/v group
	// from 403–448 to 354–382 µs a token at two threads (four alternating
	// pairs); groups of equal weights keep their earlier split.
	total := 0
	for _, n := range sh.ns {
		total += n * rowBytes
	}
	for w, n := range sh.ns {
		if sh.siluMul && !sh.apart && w == 1 {
			break
		}
		rows := max(1, min((n+4*workers-1)/(4*workers), taskBytes/rowBytes))
		if M == 1 {
			rows = max(1, min(taskBytes, max(8192, total/(12*workers)))/rowBytes)
		}
		if half {
			// Whole groups of four rows, as kernels.HalfMatMul splits
			// them: its four-row GEMV then sums every row as it would.
			rows = (rows + 3) &^ 3
		}
		for n0 := 0; n0 < n; n0 += rows {
			sh.tasks = append(sh.tasks, qgTask{w, n0, min(n, n0+rows)})
		}
	}
	// The weights' copies (fast_weightcopy.go): Q4_0 or Q8_0 repacked
	// where the CPU has their packed kernels (every weight or none, so that one kernel
	// family serves the group), else each weight copied to huge pages
	// where that applies (nil: read in place). The shape, and so the
	// kernel, holds them: their memory lives as long as they do.
	sh.copies = make([]*weightCopy, nw)
	sh.packed = packOn(dt)
	for i, n := range sh.ns {
		if sh.packed {
			if sh.copies[i] = sharedPack(dt, s.in[1+i].c.Data, n, K); sh.copies[i] == nil {
				sh.packed = false
				break
			}
		}
	}
	if !sh.packed {
		for i, n := range sh.ns {
			sh.copies[i] = residentWeight(s.in[1+i].c.Data, n, K)
		}
	}
	for i, c := range sh.copies {
		s.streams(s.in[1+i].c.Data, c)
	}
	pool := s.pool
	return func(in, out []*ir.Tensor, scratch []byte) error {
		j := qgJobs.Get().(*qgJob)
		defer qgJobs.Put(j)
		j.sh, j.err = sh, nil
		j.x = in[0].Float32s()
		j.ws, j.ys = j.ws[:0], j.ys[:0]
		for i, w := range in[1 : 1+len(sh.ns)] {
			if c := sh.copies[i]; c != nil {
				j.ws = append(j.ws, c.data)
			} else {
				j.ws = append(j.ws, w.Data)
			}
		}
		for _, y := range out {
			j.ys = append(j.ys, y.Float32s())
		}
		j.bs = j.bs[:0]
		if sh.bias {
			for _, b := range in[1+len(sh.ns):] {
				j.bs = append(j.bs, b.Float32s())
			}
		}
		if sh.siluMul {
			j.up = f32View(scratch, M*sh.ns[0])
		}
		if !half {
			if err := kernels.QuantizeActs(&j.q, j.x, K, M, K); err != nil {
				return err
			}
			// kernels.QMatMul builds its layouts of the activations on its
			// first call after QuantizeActs, and calls sharing them must
			// not run concurrently until then: QRows.Init builds the one
			// the row kernel reads; otherwise one weight row first, alone.
			if sh.packed {
				j.rowsOK = j.rows.InitPacked(sh.dt, &j.q)
				j.rows.SetPrefetch(sh.copies[0].prefetch())
			} else {
				j.rowsOK = j.rows.Init(sh.dt, &j.q)
			}
			if !j.rowsOK {
				if cap(j.prime) < M {
					j.prime = make([]float32, M)
				}
				if err := j.qmatmul(j.ws[0][:sh.rb], 1, j.prime[:M], 1); err != nil {
					return err
				}
			}
		}
		// Region order: each worker streams through a contiguous run of
		// the group's weights (see kernels.Pool.RunStream).
		pool.RunStream(len(sh.tasks), j)
		err := j.err
		if err == nil && sh.apart {
			siluMulRow(j.ys[0], j.up)
		}
		j.ws, j.ys, j.bs, j.up, j.x, j.rowsOK = j.ws[:0], j.ys[:0], j.bs[:0], nil, nil, false
		return err
	}
}

// Task computes task t's rows of its weight's output (and, with silu_mul,
// of the up projection, then the SwiGLU of those rows).
func (j *qgJob) Task(_, t int) {
	sh := j.sh
	tk := sh.tasks[t]
	rows := tk.n1 - tk.n0
	N := sh.ns[tk.w]
	w := j.ws[tk.w][tk.n0*sh.rb : tk.n1*sh.rb]
	var y []float32
	switch {
	case sh.apart && tk.w == 1:
		y = j.up
	case sh.siluMul:
		y = j.ys[0]
	default:
		y = j.ys[tk.w]
	}
	err := j.matmul(w, rows, y[tk.n0:], N)
	if err == nil && sh.bias {
		b := j.bs[tk.w][tk.n0:tk.n1]
		for m := 0; m < sh.M; m++ {
			yr := y[m*N+tk.n0 : m*N+tk.n1]
			for i, v := range b {
				yr[i] += v
			}
		}
	}
	if err == nil && sh.siluMul && !sh.apart {
		err = j.matmul(j.ws[1][tk.n0*sh.rb:tk.n1*sh.rb], rows, j.up[tk.n0:], N)
		if err == nil {
			for m := 0; m < sh.M; m++ {
				siluMulRow(y[m*N+tk.n0:m*N+tk.n1], j.up[m*N+tk.n0:m*N+tk.n1])
			}
		}
	}
	if err != nil {
		j.mu.Lock()
		if j.err == nil {
			j.err = fmt.Errorf("QMatMulGroup weight %d rows [%d, %d): %w", tk.w, tk.n0, tk.n1, err)
		}
		j.mu.Unlock()
	}
}

// matmul computes rows weight rows w against the job's activations into y
// (leading dimension ldy), serially.
func (j *qgJob) matmul(w []byte, rows int, y []float32, ldy int) error {
	if j.sh.half {
		return kernels.HalfMatMulRows(nil, j.sh.dt, w, rows, j.sh.K, j.x, j.sh.K, j.sh.M, y, ldy)
	}
	if j.rowsOK {
		return j.rows.Run(w, rows, y)
	}
	return j.qmatmul(w, rows, y, ldy)
}

// qmatmul is kernels.QMatMul on the job's quantized activations, or its
// packed twin for packed weights.
func (j *qgJob) qmatmul(w []byte, rows int, y []float32, ldy int) error {
	if j.sh.packed {
		return kernels.QMatMulPacked(nil, j.sh.dt, w, rows, &j.q, y, ldy, j.sh.copies[0].prefetch())
	}
	return kernels.QMatMul(nil, j.sh.dt, w, rows, &j.q, y, ldy)
}

// siluMulRow sets g[i] = SiLU(g[i])·u[i]: kernels.SiLU (the vectorized
// activation the SiLU op's fast kernel runs; relative error below 3e-7),
// then the f32 product.
func siluMulRow(g, u []float32) {
	kernels.SiLU(g)
	u = u[:len(g)]
	for i, uv := range u {
		g[i] *= uv
	}
}
