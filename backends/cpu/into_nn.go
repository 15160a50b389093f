package cpu

import (
	"math"
	"slices"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	registerInto(buildMatMul, "MatMul")
	registerInto(buildSoftmax, "Softmax")
	registerInto(buildLayerNorm, "LayerNormalization")
}

// buildMatMul handles float32 MatMul with numpy rules (1-D operands, batch
// broadcasting), accumulating in float32.
func buildMatMul(s *nodeSpec) intoKernel {
	a, b, y := s.input(0), s.input(1), s.out[0]
	if len(s.in) != 2 || len(s.out) != 1 || !a.ok || !b.ok || !allF32(a, b, y) || len(a.shape) == 0 || len(b.shape) == 0 {
		return nil
	}
	as, bs := a.shape, b.shape
	if len(as) == 1 {
		as = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int64{bs[0], 1}
	}
	ra, rb := len(as), len(bs)
	M, K, N := int(as[ra-2]), int(as[ra-1]), int(bs[rb-1])
	if int(bs[rb-2]) != K {
		return nil
	}
	batch, err := ref.BroadcastShapes(as[:ra-2], bs[:rb-2])
	if err != nil {
		return nil
	}
	want := append([]int64{}, batch...)
	if len(a.shape) > 1 {
		want = append(want, int64(M))
	}
	if len(b.shape) > 1 {
		want = append(want, int64(N))
	}
	if !slices.Equal(want, y.shape) {
		return nil
	}
	nb := numel(batch)
	aOff, bOff := make([]int, nb), make([]int, nb)
	it := ref.NewIndexer(batch, ref.BroadcastStrides(as[:ra-2], batch), ref.BroadcastStrides(bs[:rb-2], batch))
	for i := 0; i < nb; i++ {
		aOff[i], bOff[i] = int(it.Offsets[0])*M*K, int(it.Offsets[1])*K*N
		it.Next()
	}
	return func(in, out []*ir.Tensor, scratch []byte) error {
		av, bv, yv := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
		for bi := range aOff {
			A, B := av[aOff[bi]:aOff[bi]+M*K], bv[bOff[bi]:bOff[bi]+K*N]
			for m := 0; m < M; m++ {
				gemvRow(yv[(bi*M+m)*N:(bi*M+m+1)*N], A[m*K:(m+1)*K], B, N)
			}
		}
		return nil
	}
}

// gemvRow computes row = a · B for one row a of A and B of shape
// [len(a), N]: four rows of B at a time, so each output element is loaded
// and stored once per four products.
func gemvRow(row, a, B []float32, N int) {
	clear(row)
	K := len(a)
	k := 0
	for ; k+4 <= K; k += 4 {
		a0, a1, a2, a3 := a[k], a[k+1], a[k+2], a[k+3]
		b0 := B[k*N : k*N+N]
		b1 := B[(k+1)*N : (k+1)*N+N]
		b2 := B[(k+2)*N : (k+2)*N+N]
		b3 := B[(k+3)*N : (k+3)*N+N]
		r := row[:N]
		for j := range r {
			r[j] += a0*b0[j] + a1*b1[j] + a2*b2[j] + a3*b3[j]
		}
	}
	for ; k < K; k++ {
		x, b := a[k], B[k*N:k*N+N]
		r := row[:N]
		for j := range r {
			r[j] += x * b[j]
		}
	}
}

// buildSoftmax handles float32 Softmax over one axis (or, with the
// importer's legacy_axis, over the flattened dims from axis on). Rows that
// are contiguous (the axis is the last) run the float32 vector kernels
// (kernels.Max, ExpSum, ScaleAdd: within a few float32 ulps of the
// reference); strided ones follow the reference, exp(x - max) / sum in
// float64, rounded once.
func buildSoftmax(s *nodeSpec) intoKernel {
	x, y := s.input(0), s.out[0]
	if len(s.in) != 1 || len(s.out) != 1 || !allF32(x, y) || !slices.Equal(x.shape, y.shape) {
		return nil
	}
	rank := len(x.shape)
	var outer, size, inner int
	if s.n.AttrInt("legacy_axis", 0) != 0 {
		a := s.n.AttrInt("axis", 1)
		if a < 0 {
			a += int64(rank)
		}
		if a < 0 || a > int64(rank) {
			return nil
		}
		outer, size, inner = numel(x.shape[:a]), numel(x.shape[a:]), 1
	} else {
		axis, ok := normAxis(s.n.AttrInt("axis", -1), rank)
		if !ok {
			return nil
		}
		outer, size, inner = numel(x.shape[:axis]), int(x.shape[axis]), numel(x.shape[axis+1:])
	}
	pool := s.pool
	return func(in, out []*ir.Tensor, scratch []byte) error {
		xv, yv := in[0].Float32s(), out[0].Float32s()
		if inner == 1 && size > 0 {
			// Contiguous rows: the vector kernels, in float32.
			runRows(pool, rowsJob{run: softmaxRows, x: xv, y: yv, rows: outer, cols: size})
			return nil
		}
		for o := 0; o < outer; o++ {
			for k := 0; k < inner; k++ {
				base := o*size*inner + k
				if size == 0 {
					continue
				}
				mx := float64(xv[base])
				for j := 1; j < size; j++ {
					if v := float64(xv[base+j*inner]); v > mx {
						mx = v
					}
				}
				sum := 0.0
				for j := 0; j < size; j++ {
					sum += math.Exp(float64(xv[base+j*inner]) - mx)
				}
				for j := 0; j < size; j++ {
					i := base + j*inner
					yv[i] = float32(math.Exp(float64(xv[i])-mx) / sum)
				}
			}
		}
		return nil
	}
}

// buildLayerNorm handles float32 LayerNormalization with only the Y output
// and Scale/B covering exactly the normalized dims. The row statistics
// (two passes: mean, then the mean squared deviation) and the affine step
// run the float32 vector kernels (kernels.Sum, SumSqDev, NormAffine); the
// reference keeps them in float64, which agrees to a few 1e-7 relative.
func buildLayerNorm(s *nodeSpec) intoKernel {
	x, sc, bias, y := s.input(0), s.input(1), s.input(2), s.out[0]
	if len(s.out) != 1 || !x.ok || !sc.ok || !allF32(x, sc, bias, y) || !slices.Equal(x.shape, y.shape) {
		return nil
	}
	if st := s.n.AttrInt("stash_type", 1); st != 1 {
		return nil
	}
	rank := len(x.shape)
	axis, ok := normAxis(s.n.AttrInt("axis", -1), rank)
	if !ok {
		return nil
	}
	norm := x.shape[axis:]
	if !coversTrailing(sc.shape, norm) || bias.ok && !coversTrailing(bias.shape, norm) {
		return nil
	}
	rows, cols := numel(x.shape[:axis]), numel(norm)
	eps := float64(s.n.AttrFloat("epsilon", 1e-5))
	hasBias := bias.ok
	pool := s.pool
	return func(in, out []*ir.Tensor, scratch []byte) error {
		xv, sv, yv := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
		var bv []float32
		if hasBias {
			bv = in[2].Float32s()
		}
		if cols == 0 {
			return nil
		}
		runRows(pool, rowsJob{run: layerNormRows, x: xv, y: yv, g: sv[:cols], b: bv, rows: rows, cols: cols, eps: eps})
		return nil
	}
}

func layerNormRows(j *rowsJob, r0, r1 int) {
	cols := j.cols
	for r := r0; r < r1; r++ {
		row := j.x[r*cols : (r+1)*cols]
		mean := kernels.Sum(row) / float32(cols)
		variance := kernels.SumSqDev(row, mean) / float32(cols)
		inv := float32(1 / math.Sqrt(float64(variance)+j.eps))
		kernels.NormAffine(row, j.y[r*cols:(r+1)*cols], j.g, j.b, mean, inv)
	}
}

func softmaxRows(j *rowsJob, r0, r1 int) {
	size := j.cols
	for o := r0; o < r1; o++ {
		row := j.y[o*size : (o+1)*size]
		copy(row, j.x[o*size:(o+1)*size])
		m := kernels.Max(row)
		kernels.ScaleAdd(row, 1/kernels.ExpSum(row, m), nil)
	}
}

// rowsJob runs a row kernel (a plain function, so that a run allocates
// nothing) over rows × cols of row-major data, on the pool in blocks of
// rows when there is enough work to share.
type rowsJob struct {
	run        func(j *rowsJob, r0, r1 int)
	x, y, g, b []float32
	rows, cols int
	eps        float64
	per        int
}

// rowsParMin is the element count from which row kernels use the pool.
const rowsParMin = 1 << 17

var rowsJobs = sync.Pool{New: func() any { return new(rowsJob) }}

func runRows(pool *kernels.Pool, e rowsJob) {
	j := rowsJobs.Get().(*rowsJob) // a pointer from the pool: e does not escape
	*j = e
	if w := pool.Workers(); w == 1 || e.rows < 2 || e.rows*e.cols < rowsParMin {
		j.run(j, 0, e.rows)
	} else {
		j.per = (e.rows + 2*w - 1) / (2 * w)
		pool.RunTasks((e.rows+j.per-1)/j.per, j)
	}
	*j = rowsJob{}
	rowsJobs.Put(j)
}

// Task runs rows [t*per, (t+1)*per).
func (j *rowsJob) Task(_, t int) {
	r0 := t * j.per
	j.run(j, r0, min(r0+j.per, j.rows))
}

// coversTrailing reports whether a parameter of shape p, broadcast against
// a tensor whose trailing dims are norm, has one element per position of
// norm (leading unit dims allowed).
func coversTrailing(p, norm []int64) bool {
	for len(p) > len(norm) {
		if p[0] != 1 {
			return false
		}
		p = p[1:]
	}
	off := len(norm) - len(p)
	for i := 0; i < off; i++ {
		if norm[i] != 1 {
			return false
		}
	}
	return slices.Equal(p, norm[off:])
}
