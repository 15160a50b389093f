package cpu

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// intoKernel computes a node's outputs into preallocated tensors (out) of
// exactly the dtypes and shapes it was built for, from inputs of exactly
// the dtypes and shapes it was built for (nil for absent optional inputs).
// It must not allocate, and must stay correct when out[0] shares bytes with
// an input of the same dtype and shape (the memory planner's in-place reuse
// of elementwise ops; other ops never alias). scratch is the run state's
// scratch memory, at least the bytes the builder asked for (nodeSpec.scratch;
// 64-byte aligned, contents undefined, shared by the steps of one run). It
// returns an error only for bad data (an index out of range), never for a
// shape it accepted.
type intoKernel func(in, out []*ir.Tensor, scratch []byte) error

// arg is what a builder knows about one input or output at compile time.
type arg struct {
	dt    ir.DType
	shape []int64
	c     *ir.Tensor // the constant, for constant inputs
	ok    bool       // present (optional inputs may be absent)
}

// nodeSpec is a node with the static dtypes and shapes of its operands.
type nodeSpec struct {
	n       *ir.Node
	in, out []arg
	// scratch is the number of scratch bytes the kernel needs; a builder
	// that accepts the node sets it.
	scratch int
	// pool runs the fast kernels (fast*.go); never nil.
	pool *kernels.Pool
	// streamed is the bytes of the constant weights the kernel reads
	// whole on every run (a decode GEMV's), copies the copies it reads
	// them from (fast_weightcopy.go), whose prefetch the executor sets
	// (streamPrefetch).
	streamed int64
	copies   []*weightCopy
}

// streams records that the kernel reads weight w whole on every run, from
// its copy c (nil: in place).
func (s *nodeSpec) streams(w []byte, c *weightCopy) {
	s.streamed += int64(len(w))
	if c != nil {
		s.copies = append(s.copies, c)
	}
}

// input returns input i, or an absent arg.
func (s *nodeSpec) input(i int) arg {
	if i < len(s.in) {
		return s.in[i]
	}
	return arg{}
}

// intoBuilder returns the into kernel for a node, or nil to decline (the
// node then runs its reference kernel). It runs once, at compile time, and
// should precompute everything the kernel needs.
type intoBuilder func(s *nodeSpec) intoKernel

// intoBuilders maps an op to its builders, tried in order until one
// accepts the node; the families register in init().
var intoBuilders = map[string][]intoBuilder{}

// registerInto adds b as the last-resort builder of ops (the plain-Go
// kernels of this package).
func registerInto(b intoBuilder, ops ...string) {
	for _, op := range ops {
		intoBuilders[op] = append(intoBuilders[op], b)
	}
}

// registerIntoFirst adds b ahead of the builders already registered for
// ops: a fast kernel that declines what it does not cover leaves the node
// to the plain one.
func registerIntoFirst(b intoBuilder, ops ...string) {
	for _, op := range ops {
		intoBuilders[op] = append([]intoBuilder{b}, intoBuilders[op]...)
	}
}

// build returns the first kernel that one of op's builders makes for s.
func build(op string, s *nodeSpec) intoKernel {
	for _, b := range intoBuilders[op] {
		s.scratch, s.streamed, s.copies = 0, 0, nil
		if k := b(s); k != nil {
			return k
		}
	}
	return nil
}

// buildInto returns the into kernel of a step and the spec it was built
// from (the scratch bytes it needs, the weights it streams), or nil when
// the op has none or some operand's shape is not static.
func buildInto(pool *kernels.Pool, n *ir.Node, slots []slotInfo, in, out []int) (intoKernel, *nodeSpec) {
	if len(intoBuilders[n.Op]) == 0 {
		return nil, nil
	}
	spec := &nodeSpec{n: n, pool: pool}
	for _, si := range in {
		if si < 0 {
			spec.in = append(spec.in, arg{})
			continue
		}
		info := slots[si]
		if info.shape == nil {
			return nil, nil
		}
		spec.in = append(spec.in, arg{dt: info.v.DType, shape: info.shape, c: info.v.Const, ok: true})
	}
	for _, si := range out {
		info := slots[si]
		if info.shape == nil || !info.v.DType.Valid() {
			return nil, nil
		}
		spec.out = append(spec.out, arg{dt: info.v.DType, shape: info.shape, ok: true})
	}
	return build(n.Op, spec), spec
}

// buildIntoForTest builds the into kernel for n from explicit operands (for
// tests that compare it with the reference kernel), bound to scratch memory
// filled with garbage; nil when the builders decline.
func buildIntoForTest(n *ir.Node, in []*ir.Tensor, out []*ir.Tensor, constIn []bool) (func(in, out []*ir.Tensor) error, error) {
	return buildIntoWorkers(n, in, out, constIn, 0)
}

// buildIntoWorkers is buildIntoForTest on a pool of the given number of
// workers (0: the default pool).
func buildIntoWorkers(n *ir.Node, in []*ir.Tensor, out []*ir.Tensor, constIn []bool, workers int) (func(in, out []*ir.Tensor) error, error) {
	if len(intoBuilders[n.Op]) == 0 {
		return nil, fmt.Errorf("no into kernel for %s", n.Op)
	}
	spec := specFor(n, in, out, constIn, workers)
	k := build(n.Op, spec)
	if k == nil {
		return nil, nil
	}
	scratch := ir.AlignedBytes(spec.scratch)
	for i := range scratch {
		scratch[i] = 0xCD
	}
	return func(in, out []*ir.Tensor) error { return k(in, out, scratch) }, nil
}

// specFor is the nodeSpec of n with explicit operands (constIn: which
// inputs are constants) on a pool of the given number of workers.
func specFor(n *ir.Node, in []*ir.Tensor, out []*ir.Tensor, constIn []bool, workers int) *nodeSpec {
	spec := &nodeSpec{n: n, pool: poolFor(workers)}
	for i, t := range in {
		if t == nil {
			spec.in = append(spec.in, arg{})
			continue
		}
		a := arg{dt: t.DType, shape: t.Shape, ok: true}
		if i < len(constIn) && constIn[i] {
			a.c = t
		}
		spec.in = append(spec.in, a)
	}
	for _, t := range out {
		spec.out = append(spec.out, arg{dt: t.DType, shape: t.Shape, ok: true})
	}
	return spec
}

// numel is the element count of a static shape.
func numel(s []int64) int { return int(ir.NumElements(s)) }

// normAxis resolves a possibly negative axis against rank (ok=false when
// out of range).
func normAxis(axis int64, rank int) (int, bool) {
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), axis >= 0 && axis < int64(rank)
}

// allF32 reports whether every present operand is float32.
func allF32(args ...arg) bool {
	for _, a := range args {
		if a.ok && a.dt != ir.Float32 {
			return false
		}
	}
	return true
}
