package cpu

import (
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { registerInto(buildChain, "Fused") }

// Limits of the chain interpreter: registers and inputs live in stack
// arrays so that a run allocates nothing.
const (
	maxChainRegs = 64
	maxChainIn   = 16
)

// Chain instruction codes.
const (
	ciUnary = iota
	ciAdd
	ciSub
	ciMul
	ciDiv
	ciPow
	ciMax
	ciMin
	ciEq
	ciLt
	ciGt
	ciLe
	ciGe
	ciAnd
	ciOr
	ciXor
	ciNot
	ciWhere
	ciClip
	ciToBool
	ciIdentity
)

var chainBinary = map[string]int{
	"Add": ciAdd, "Sub": ciSub, "Mul": ciMul, "Div": ciDiv, "Pow": ciPow, "Max": ciMax, "Min": ciMin,
	"Equal": ciEq, "Less": ciLt, "Greater": ciGt, "LessOrEqual": ciLe, "GreaterOrEqual": ciGe,
	"And": ciAnd, "Or": ciOr, "Xor": ciXor,
}

// cinstr is one body node: dst = op(a, b, c) on float64 registers (bools
// are 0 and 1); an f32 result is rounded to float32, as the reference
// rounds every intermediate tensor.
type cinstr struct {
	op         int
	dst        int
	a, b, c    int // -1: absent
	f          func(float64) float64
	roundF32   bool
	noLo, noHi bool // Clip: min absent (−∞), max absent (+∞)
}

// buildChain handles Fused nodes whose body is a chain of float32/bool
// elementwise ops over inputs that broadcast to the output: an interpreter
// evaluates the body over blocks of output elements, one instruction at a
// time over the block (chainJob), on the pool when the output is large.
func buildChain(s *nodeSpec) intoKernel {
	body := s.n.AttrGraph("body")
	if body == nil || len(s.out) != 1 || len(body.Outputs) != 1 || len(body.Inputs) != len(s.in) || len(s.in) > maxChainIn || len(body.OuterRefs()) > 0 {
		return nil
	}
	y := s.out[0]
	if y.dt != ir.Float32 && y.dt != ir.Bool || len(y.shape) == 0 {
		return nil
	}
	okType := func(dt ir.DType) bool { return dt == ir.Float32 || dt == ir.Bool }
	fitsOut := func(shape []int64) bool {
		b, err := ref.BroadcastShapes(shape, y.shape)
		return err == nil && slices.Equal(b, y.shape)
	}
	reg := map[*ir.Value]int{}
	var init []float64
	newReg := func(v *ir.Value) int {
		reg[v] = len(init)
		init = append(init, 0)
		return reg[v]
	}
	inSt := make([][]int64, len(s.in))
	for i, a := range s.in {
		bv := body.Inputs[i]
		if !a.ok || !okType(a.dt) || bv.DType != a.dt || !fitsOut(a.shape) {
			return nil
		}
		newReg(bv)
		inSt[i] = ref.BroadcastStrides(a.shape, y.shape)
	}
	for _, c := range body.Consts {
		if !okType(c.Const.DType) || c.Const.Len() != 1 {
			return nil
		}
		init[newReg(c)] = c.Const.Float64(0)
	}
	var prog []cinstr
	for _, n := range body.Nodes {
		if len(n.Outputs) != 1 || !okType(n.Outputs[0].DType) || !n.Outputs[0].Shape.Static() || !fitsOut(n.Outputs[0].Shape.Ints()) {
			return nil
		}
		in := make([]int, 3)
		for k := range in {
			in[k] = -1
		}
		if len(n.Inputs) > 3 {
			return nil
		}
		for k, v := range n.Inputs {
			if v == nil {
				continue
			}
			r, ok := reg[v]
			if !ok || !okType(v.DType) {
				return nil
			}
			in[k] = r
		}
		ins := cinstr{a: in[0], b: in[1], c: in[2], roundF32: n.Outputs[0].DType == ir.Float32}
		need := func(k int) bool { return len(n.Inputs) == k }
		switch op, isBin := chainBinary[n.Op]; {
		case isBin:
			if !need(2) || ins.a < 0 || ins.b < 0 {
				return nil
			}
			ins.op = op
		case n.Op == "Where":
			if !need(3) || ins.a < 0 || ins.b < 0 || ins.c < 0 {
				return nil
			}
			ins.op = ciWhere
		case n.Op == "Not":
			if !need(1) {
				return nil
			}
			ins.op = ciNot
		case n.Op == "Clip":
			ins.op, ins.noLo, ins.noHi = ciClip, ins.b < 0, ins.c < 0
			for _, v := range n.Inputs[1:] {
				if v != nil && (v.Shape.NumElements() != 1 || v.DType != n.Inputs[0].DType) {
					return nil
				}
			}
		case n.Op == "Cast" || n.Op == "Identity":
			ins.op = ciIdentity
			if n.Outputs[0].DType == ir.Bool {
				ins.op = ciToBool
			}
		default:
			f := unaryFunc(n)
			if f == nil {
				return nil
			}
			ins.op, ins.f = ciUnary, f
		}
		if ins.a < 0 || !chainTypesOK(ins.op, n) {
			return nil
		}
		ins.dst = newReg(n.Outputs[0])
		prog = append(prog, ins)
	}
	outReg, ok := reg[body.Outputs[0]]
	if !ok || body.Outputs[0].DType != y.dt || len(init) > maxChainRegs {
		return nil
	}
	// Merge output dims that every input walks contiguously (or not at
	// all), so that the innermost run is as long as possible.
	dims, sts := mergeChainDims(y.shape, inSt)
	r := len(dims)
	inner, outer := int(dims[r-1]), dims[:r-1]
	rows := numel(outer)
	blocksPerRow := (inner + chainBlock - 1) / chainBlock
	nIn := len(s.in)
	isBool := make([]bool, nIn)
	innerSt := make([]int, nIn)
	for i, a := range s.in {
		isBool[i] = a.dt == ir.Bool
		innerSt[i] = int(sts[i][r-1])
	}
	nRegs := len(init)
	per := nRegs * chainBlock * 8 // register bytes of one worker
	workers := s.pool.Workers()
	total := rows * inner
	if total < chainParMin {
		workers = 1
	}
	s.scratch = workers * per
	prog0 := prog
	pool := s.pool
	return func(in, out []*ir.Tensor, scratch []byte) error {
		j := chainJobs.Get().(*chainJob)
		*j = chainJob{
			prog: prog0, init: init, outReg: outReg, nIn: nIn, nConst: len(body.Consts), isBool: isBool, innerSt: innerSt, sts: sts,
			outer: outer, inner: inner, blocksPerRow: blocksPerRow, per: per, scratch: scratch,
			outBool: y.dt == ir.Bool, yb: out[0].Data,
		}
		for i := 0; i < nIn; i++ {
			if isBool[i] {
				j.bs[i] = in[i].Data
			} else {
				j.fs[i] = in[i].Float32s()
			}
		}
		if !j.outBool {
			j.yf = out[0].Float32s()
		}
		tasks := rows * blocksPerRow
		if workers == 1 {
			for t := 0; t < tasks; t++ {
				j.Task(0, t)
			}
		} else {
			pool.RunTasks(tasks, j)
		}
		*j = chainJob{}
		chainJobs.Put(j)
		return nil
	}
}

// The chain runs over blocks of up to chainBlock elements of a row: one
// instruction at a time over the whole block (a tight loop per op, not an
// interpreter step per element), registers in the kernel's scratch.
// Chains over at least chainParMin elements run on the pool.
const (
	chainBlock  = 256
	chainParMin = 1 << 14
)

// chainJob is one run of a chain; task t is block t%blocksPerRow of row
// t/blocksPerRow, computed in worker w's registers.
type chainJob struct {
	prog              []cinstr
	init              []float64
	outReg, nIn       int
	nConst            int // registers nIn … nIn+nConst-1 hold the constants
	isBool            []bool
	innerSt           []int
	sts               [][]int64
	outer             []int64
	inner             int
	blocksPerRow, per int
	scratch           []byte
	fs                [maxChainIn][]float32
	bs                [maxChainIn][]byte
	outBool           bool
	yf                []float32
	yb                []byte
}

var chainJobs = sync.Pool{New: func() any { return new(chainJob) }}

// Task computes one block.
func (j *chainJob) Task(w, t int) {
	row, blk := t/j.blocksPerRow, t%j.blocksPerRow
	j0 := blk * chainBlock
	n := min(chainBlock, j.inner-j0)
	var regs [maxChainRegs][]float64
	mem := f64View(j.scratch[w*j.per:(w+1)*j.per], len(j.init)*chainBlock)
	for k, c := range j.init {
		regs[k] = mem[k*chainBlock : k*chainBlock+n]
		if k >= j.nIn && k < j.nIn+j.nConst {
			for i := range regs[k] {
				regs[k][i] = c
			}
		}
	}
	var offs [maxChainIn]int
	for i := 0; i < j.nIn; i++ {
		off, rem := 0, row
		for d := len(j.outer) - 1; d >= 0; d-- {
			m := int(j.outer[d])
			off += (rem % m) * int(j.sts[i][d])
			rem /= m
		}
		offs[i] = off + j0*j.innerSt[i]
	}
	for i := 0; i < j.nIn; i++ {
		dst, st, off := regs[i], j.innerSt[i], offs[i]
		switch {
		case j.isBool[i]:
			src := j.bs[i]
			for e := range dst {
				dst[e] = b2f(src[off+e*st] != 0)
			}
		case st == 0:
			v := float64(j.fs[i][off])
			for e := range dst {
				dst[e] = v
			}
		case st == 1:
			src := j.fs[i][off : off+n]
			for e, v := range src {
				dst[e] = float64(v)
			}
		default:
			src := j.fs[i]
			for e := range dst {
				dst[e] = float64(src[off+e*st])
			}
		}
	}
	runChainBlock(j.prog, &regs)
	o := row*j.inner + j0
	res := regs[j.outReg]
	if j.outBool {
		yb := j.yb[o : o+n]
		for e, v := range res {
			yb[e] = byte(int(v) & 1)
		}
		return
	}
	yf := j.yf[o : o+n]
	for e, v := range res {
		yf[e] = float32(v)
	}
}

// mergeChainDims merges neighbouring output dims d, d+1 wherever every
// input's stride satisfies st[d] = st[d+1]·dims[d+1] (contiguous, or both
// 0 for a broadcast input), and returns the merged dims and strides.
func mergeChainDims(shape []int64, inSt [][]int64) ([]int64, [][]int64) {
	var dims []int64
	sts := make([][]int64, len(inSt))
	for d, n := range shape {
		if n == 1 {
			continue // unit dims add nothing to any offset
		}
		last := len(dims) - 1
		merge := last >= 0
		for i := range inSt {
			if !merge || sts[i][last] != inSt[i][d]*n {
				merge = false
				break
			}
		}
		if merge {
			dims[last] *= n
			for i := range inSt {
				sts[i][last] = inSt[i][d]
			}
			continue
		}
		dims = append(dims, n)
		for i := range inSt {
			sts[i] = append(sts[i], inSt[i][d])
		}
	}
	if dims == nil {
		dims = []int64{1}
		for i := range sts {
			sts[i] = []int64{0}
		}
	}
	return dims, sts
}

func f64View(b []byte, n int) []float64 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b[:n*8]))), n)
}

// chainTypesOK reports whether n's operand dtypes suit instruction op:
// logic on bools, arithmetic on float32, Where/Equal/Cast on either.
func chainTypesOK(op int, n *ir.Node) bool {
	want := ir.Float32
	switch op {
	case ciIdentity, ciToBool, ciEq:
		return true
	case ciWhere:
		return n.Inputs[0].DType == ir.Bool && n.Inputs[1].DType == n.Outputs[0].DType && n.Inputs[2].DType == n.Outputs[0].DType
	case ciAnd, ciOr, ciXor, ciNot:
		want = ir.Bool
	}
	for _, v := range n.Inputs {
		if v != nil && v.DType != want {
			return false
		}
	}
	return true
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// runChainBlock executes the program over one block of registers: each
// instruction is a loop over the block, with the same float64 operations
// and float32 rounding per element as the reference's tensors.
func runChainBlock(prog []cinstr, r *[maxChainRegs][]float64) {
	for i := range prog {
		p := &prog[i]
		a, dst := r[p.a], r[p.dst]
		var b, c []float64
		if p.b >= 0 {
			b = r[p.b][:len(a)]
		}
		if p.c >= 0 {
			c = r[p.c][:len(a)]
		}
		dst = dst[:len(a)]
		switch p.op {
		case ciUnary:
			for e, v := range a {
				dst[e] = p.f(v)
			}
		case ciAdd:
			for e, v := range a {
				dst[e] = v + b[e]
			}
		case ciSub:
			for e, v := range a {
				dst[e] = v - b[e]
			}
		case ciMul:
			for e, v := range a {
				dst[e] = v * b[e]
			}
		case ciDiv:
			for e, v := range a {
				dst[e] = v / b[e]
			}
		case ciPow:
			for e, v := range a {
				dst[e] = math.Pow(v, b[e])
			}
		case ciMax:
			for e, v := range a {
				dst[e] = max(v, b[e])
			}
		case ciMin:
			for e, v := range a {
				dst[e] = min(v, b[e])
			}
		case ciEq:
			for e, v := range a {
				dst[e] = b2f(v == b[e])
			}
		case ciLt:
			for e, v := range a {
				dst[e] = b2f(v < b[e])
			}
		case ciGt:
			for e, v := range a {
				dst[e] = b2f(v > b[e])
			}
		case ciLe:
			for e, v := range a {
				dst[e] = b2f(v <= b[e])
			}
		case ciGe:
			for e, v := range a {
				dst[e] = b2f(v >= b[e])
			}
		case ciAnd:
			for e, v := range a {
				dst[e] = b2f(v != 0 && b[e] != 0)
			}
		case ciOr:
			for e, v := range a {
				dst[e] = b2f(v != 0 || b[e] != 0)
			}
		case ciXor:
			for e, v := range a {
				dst[e] = b2f((v != 0) != (b[e] != 0))
			}
		case ciNot:
			for e, v := range a {
				dst[e] = b2f(v == 0)
			}
		case ciWhere:
			for e, v := range a {
				if v != 0 {
					dst[e] = b[e]
				} else {
					dst[e] = c[e]
				}
			}
		case ciClip:
			for e, v := range a {
				if !p.noLo && v < b[e] {
					v = b[e]
				}
				if !p.noHi && v > c[e] {
					v = c[e]
				}
				dst[e] = v
			}
		case ciToBool:
			for e, v := range a {
				dst[e] = b2f(v != 0)
			}
		case ciIdentity:
			copy(dst, a)
		}
		if p.roundF32 {
			for e, v := range dst {
				dst[e] = float64(float32(v))
			}
		}
	}
}
