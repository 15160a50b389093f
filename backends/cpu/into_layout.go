package cpu

import (
	"fmt"
	"slices"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

func init() {
	registerInto(buildCopy, "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")
	registerInto(buildTranspose, "Transpose")
	registerInto(buildConcat, "Concat")
	registerInto(buildSplit, "Split")
	registerInto(buildGather, "Gather")
}

// buildCopy handles ops that only change the shape: the output's bytes are
// the input's (any dtype). The static output shape was inferred at compile
// time; the run-time shape check guards the input.
func buildCopy(s *nodeSpec) intoKernel {
	x, y := s.input(0), s.out[0]
	if len(s.out) != 1 || !x.ok || x.dt != y.dt || numel(x.shape) != numel(y.shape) {
		return nil
	}
	// Reshape's shape, Squeeze's and Unsqueeze's axes must be constants, or
	// the static output shape might not describe this run.
	for _, a := range s.in[1:] {
		if a.ok && a.c == nil {
			return nil
		}
	}
	n := int(numel(x.shape)) * x.dt.Size()
	pool := s.pool
	// A copy is a transpose of one row per 4 KiB chunk.
	const chunk = 4096
	return func(in, out []*ir.Tensor, scratch []byte) error {
		if n < layoutParMin {
			copy(out[0].Data, in[0].Data)
			return nil
		}
		runLayout(pool, layoutJob{run: copyRows, src: in[0].Data[:n], dst: out[0].Data[:n], es: 1, total: n, inner: chunk, rows: n / chunk})
		if tail := n / chunk * chunk; tail < n {
			copy(out[0].Data[tail:n], in[0].Data[tail:n])
		}
		return nil
	}
}

// buildTranspose handles Transpose of any fixed-size dtype.
func buildTranspose(s *nodeSpec) intoKernel {
	x, y := s.input(0), s.out[0]
	if len(s.in) != 1 || len(s.out) != 1 || x.dt != y.dt || x.dt.Size() <= 0 {
		return nil
	}
	rank := len(x.shape)
	perm := s.n.AttrInts("perm", nil)
	if perm == nil {
		for i := rank - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != rank {
		return nil
	}
	st := make([]int64, rank) // input stride for each output dim
	inSt := rowStrides(x.shape)
	seen := make([]bool, rank)
	want := make([]int64, rank)
	for i, p := range perm {
		if p < 0 || int(p) >= rank || seen[p] {
			return nil
		}
		seen[p] = true
		st[i], want[i] = inSt[p], x.shape[p]
	}
	if !slices.Equal(want, y.shape) {
		return nil
	}
	es := x.dt.Size()
	total := numel(y.shape)
	if rank == 0 || total == 0 {
		return func(in, out []*ir.Tensor, scratch []byte) error {
			copy(out[0].Data, in[0].Data)
			return nil
		}
	}
	dims, strides := mergeTransposeDims(want, st)
	r := len(dims)
	inner, innerSt := int(dims[r-1]), int(strides[r-1])
	outer, outerSt := dims[:r-1], strides[:r-1]
	rows := numel(outer)
	shape := layoutJob{es: es, total: total, inner: inner, innerSt: innerSt, outer: outer, outerSt: outerSt, rows: rows}
	pool := s.pool
	return func(in, out []*ir.Tensor, scratch []byte) error {
		e := shape
		e.src, e.dst = in[0].Data, out[0].Data
		e.run = transposeRows
		runLayout(pool, e)
		return nil
	}
}

// layoutJob is one run of a copy or transpose: rows × inner output
// elements of es bytes, an output row read from src at the outer
// strides (in elements) with inner stride innerSt. Large ones share the
// rows out on the pool (which also keeps its workers warm between the
// kernels around attention).
type layoutJob struct {
	run                    func(j *layoutJob, r0, r1 int)
	src, dst               []byte
	es, total, inner, rows int
	innerSt, per           int
	outer, outerSt         []int64
}

// layoutParMin is the byte count from which copies and transposes use
// the pool.
const layoutParMin = 1 << 18

var layoutJobs = sync.Pool{New: func() any { return new(layoutJob) }}

func runLayout(pool *kernels.Pool, e layoutJob) {
	j := layoutJobs.Get().(*layoutJob)
	*j = e
	if w := pool.Workers(); w == 1 || e.rows < 2 || e.total*e.es < layoutParMin {
		j.run(j, 0, e.rows)
	} else {
		j.per = (e.rows + 2*w - 1) / (2 * w)
		pool.RunTasks((e.rows+j.per-1)/j.per, j)
	}
	*j = layoutJob{}
	layoutJobs.Put(j)
}

// Task runs rows [t*per, (t+1)*per).
func (j *layoutJob) Task(_, t int) {
	r0 := t * j.per
	j.run(j, r0, min(r0+j.per, j.rows))
}

// copyRows copies bytes [r0, r1)·inner·es (a plain copy; inner·es bytes
// per row).
func copyRows(j *layoutJob, r0, r1 int) {
	b := j.inner * j.es
	copy(j.dst[r0*b:r1*b], j.src[r0*b:r1*b])
}

// transposeRows writes output rows [r0, r1) of a transpose.
func transposeRows(j *layoutJob, r0, r1 int) {
	src, dst, es, inner, innerSt := j.src, j.dst, j.es, j.inner, j.innerSt
	outer, outerSt := j.outer, j.outerSt
	var idx [8]int // odometer over the outer dims (rank ≤ 8 after merging, else div/mod)
	useIdx := len(outer) <= len(idx)
	var sf, df []float32
	if es == 4 && innerSt != 1 {
		sf, df = f32View(src, j.total), f32View(dst, j.total)
	}
	start := func(r int) int {
		off := 0
		for d := len(outer) - 1; d >= 0; d-- {
			n := int(outer[d])
			if useIdx {
				idx[d] = r % n
			}
			off += (r % n) * int(outerSt[d])
			r /= n
		}
		return off
	}
	off := start(r0)
	for r := r0; r < r1; r++ {
		if !useIdx {
			off = start(r)
		}
		o := r * inner
		switch {
		case innerSt == 1: // contiguous rows: one block copy
			copy(dst[o*es:(o+inner)*es], src[off*es:(off+inner)*es])
		case es == 4:
			d := df[o : o+inner]
			for k := range d {
				d[k] = sf[off+k*innerSt]
			}
		default:
			for k := 0; k < inner; k++ {
				i := (off + k*innerSt) * es
				copy(dst[(o+k)*es:(o+k+1)*es], src[i:i+es])
			}
		}
		if useIdx {
			for d := len(outer) - 1; d >= 0; d-- {
				idx[d]++
				off += int(outerSt[d])
				if idx[d] < int(outer[d]) {
					break
				}
				off -= idx[d] * int(outerSt[d])
				idx[d] = 0
			}
		}
	}
}

// mergeTransposeDims simplifies a transpose given as output dims and the
// input stride of each: unit dims are dropped and neighbours that are
// contiguous in the input too (stride[i] = stride[i+1]·dims[i+1]) are
// merged, so that e.g. [B,S,H,D] → [B,H,S,D] copies rows of D elements.
// The result has at least one dim.
func mergeTransposeDims(dims, strides []int64) ([]int64, []int64) {
	var od, os []int64
	for i, d := range dims {
		if d == 1 {
			continue
		}
		if n := len(od); n > 0 && os[n-1] == strides[i]*d {
			od[n-1] *= d
			os[n-1] = strides[i]
			continue
		}
		od, os = append(od, d), append(os, strides[i])
	}
	if len(od) == 0 {
		return []int64{1}, []int64{1}
	}
	return od, os
}

func rowStrides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= shape[i]
	}
	return st
}

// buildConcat handles Concat of any fixed-size dtype.
func buildConcat(s *nodeSpec) intoKernel {
	y := s.out[0]
	if len(s.in) == 0 || len(s.out) != 1 || y.dt.Size() <= 0 {
		return nil
	}
	rank := len(y.shape)
	axis, ok := normAxis(s.n.AttrInt("axis", 0), rank)
	if !ok {
		return nil
	}
	es := y.dt.Size()
	chunk := make([]int, len(s.in)) // bytes per outer index, per input
	var dim int64
	for i, a := range s.in {
		if !a.ok || a.dt != y.dt || len(a.shape) != rank {
			return nil
		}
		for d := range rank {
			if d != axis && a.shape[d] != y.shape[d] {
				return nil
			}
		}
		dim += a.shape[axis]
		chunk[i] = numel(a.shape[axis:]) * es
	}
	if dim != y.shape[axis] {
		return nil
	}
	outer := numel(y.shape[:axis])
	return func(in, out []*ir.Tensor, scratch []byte) error {
		dst := out[0].Data
		o := 0
		for r := 0; r < outer; r++ {
			for i, t := range in {
				c := chunk[i]
				copy(dst[o:o+c], t.Data[r*c:(r+1)*c])
				o += c
			}
		}
		return nil
	}
}

// buildSplit handles Split of any fixed-size dtype into the static output
// shapes (a split input, when present, must be a constant).
func buildSplit(s *nodeSpec) intoKernel {
	x := s.input(0)
	if !x.ok || len(s.in) > 2 || len(s.out) == 0 || x.dt.Size() <= 0 || s.input(1).ok && s.input(1).c == nil {
		return nil
	}
	rank := len(x.shape)
	axis, ok := normAxis(s.n.AttrInt("axis", 0), rank)
	if !ok {
		return nil
	}
	es := x.dt.Size()
	chunk := make([]int, len(s.out)) // bytes per outer index, per output
	var dim int64
	for i, o := range s.out {
		if o.dt != x.dt || len(o.shape) != rank {
			return nil
		}
		for d := range rank {
			if d != axis && o.shape[d] != x.shape[d] {
				return nil
			}
		}
		dim += o.shape[axis]
		chunk[i] = numel(o.shape[axis:]) * es
	}
	if dim != x.shape[axis] {
		return nil
	}
	outer := numel(x.shape[:axis])
	return func(in, out []*ir.Tensor, scratch []byte) error {
		src := in[0].Data
		o := 0
		for r := 0; r < outer; r++ {
			for i, t := range out {
				c := chunk[i]
				copy(t.Data[r*c:(r+1)*c], src[o:o+c])
				o += c
			}
		}
		return nil
	}
}

// buildGather handles Gather of any fixed-size dtype with int32 or int64
// indices (negative indices count from the end).
func buildGather(s *nodeSpec) intoKernel {
	x, idx, y := s.input(0), s.input(1), s.out[0]
	if len(s.in) != 2 || len(s.out) != 1 || !x.ok || !idx.ok || x.dt != y.dt || x.dt.Size() <= 0 || idx.dt != ir.Int64 && idx.dt != ir.Int32 {
		return nil
	}
	rank := len(x.shape)
	axis, ok := normAxis(s.n.AttrInt("axis", 0), rank)
	if !ok {
		return nil
	}
	want := append(append(append([]int64{}, x.shape[:axis]...), idx.shape...), x.shape[axis+1:]...)
	if !slices.Equal(want, y.shape) {
		return nil
	}
	es := x.dt.Size()
	outer, dim, inner := numel(x.shape[:axis]), int(x.shape[axis]), numel(x.shape[axis+1:])*es
	nidx := numel(idx.shape)
	is64 := idx.dt == ir.Int64
	return func(in, out []*ir.Tensor, scratch []byte) error {
		src, dst, ix := in[0].Data, out[0].Data, in[1]
		o := 0
		for r := 0; r < outer; r++ {
			for j := 0; j < nidx; j++ {
				var k int
				if is64 {
					k = int(int64(leUint64(ix.Data[j*8:])))
				} else {
					k = int(int32(leUint32(ix.Data[j*4:])))
				}
				if k < 0 {
					k += dim
				}
				if k < 0 || k >= dim {
					return gatherRangeError(j, k, dim)
				}
				copy(dst[o:o+inner], src[(r*dim+k)*inner:(r*dim+k+1)*inner])
				o += inner
			}
		}
		return nil
	}
}

func gatherRangeError(j, k, dim int) error {
	return fmt.Errorf("Gather index %d (element %d of indices) is out of range for a dimension of %d", k, j, dim)
}

func leUint64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func leUint32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
