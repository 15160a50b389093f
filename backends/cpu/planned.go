package cpu

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// The planned-kernel protocol. CompilePlanned turns a partition into a list
// of steps over dense value slots. A step whose node has static shapes and
// an "into" kernel (intoBuilders) writes its outputs into preallocated
// tensors: views of the device arena at the plan's offsets, or the caller's
// destination for graph outputs. Every other step runs the reference kernel
// (which allocates) and copies the result into the planned tensor when it
// has one. Shapes are checked at run time, so an into kernel only ever runs
// on the shapes it was built for; anything else takes the reference path.

// slot kinds: where a value's tensor comes from.
const (
	slotLoad    = iota // read from the Env at the start of a run
	slotConst          // a constant, bound once per state
	slotPlanned        // a view of the arena
	slotPrivate        // static size but not planned: the state's own tensor
	slotOutput         // a graph output: the runtime's destination, if any
	slotDynamic        // size known only at run time: whatever the kernel returns
	slotAlias          // the output of an in-place op (ir.InPlaceInput): its input's tensor
)

type slotInfo struct {
	v     *ir.Value
	kind  int
	c     *ir.Tensor // slotConst: the constant, copied once when unaligned
	shape []int64    // static shape (nil for dynamic)
	off   int64      // arena offset (slotPlanned)
	bytes int64
	alias int // slotAlias: the slot of the input written in place
	// constOK (slotConst): c has v's dtype and static shape, so steps
	// need not check it every run.
	constOK bool
	// view (slotPlanned): the output of a view op (ir.ViewOp) that the
	// memory plan put on its input's bytes; it has no step, its tensor is
	// bound once per state. viewed: some view lies on this value's bytes.
	view, viewed bool
}

// step is one node.
type step struct {
	n       *ir.Node
	k       ref.Kernel
	into    intoKernel
	scratch int   // scratch bytes into needs
	in, out []int // slot indices; -1 for an absent optional input
	store   []bool
	a0      int // args[a0:] holds in, then out
	// pf: the const slots of the next steps' inputs this step prefetches
	// before it runs (small ones only; CompilePlanned).
	pf []int
	// fixed: every operand is bindable (plannedExe.bindable) and no
	// output goes to another partition. While the values sit in their
	// bound tensors (execState.rebind), a run calls into with the
	// arguments bound once per state: no per-step lookups, whose metadata
	// the decode step's weight stream has evicted by then.
	fixed bool
}

// plannedExe is a partition compiled for arena execution.
type plannedExe struct {
	executable // the plain path, for Run without a state
	slots      []slotInfo
	loads      []int
	steps      []step
	nargs      int
	arenaSize  int64
	scratch    int // the most scratch bytes any step needs
	// pool is the steps' worker pool: a run starts by restarting its
	// stream batches when its workers are on different dies
	// (kernels.Pool.RestartStream).
	pool *kernels.Pool
	// streamed is the bytes of the weights the steps read whole on every
	// run, copies the weight copies among them, and pf the prefetch they
	// were last set to (a kernels.Prefetch; setPrefetch).
	streamed int64
	copies   []*weightCopy
	pf       atomic.Int32
}

// setPrefetch sets how the decode kernels prefetch e's weight copies
// (streamPrefetch), as a run starts: whether the workers share a cache
// (far: kernels.Pool.Far) can change while a plan lives.
func (e *plannedExe) setPrefetch(far bool) {
	if len(e.copies) == 0 {
		return
	}
	pf := int32(streamPrefetch(e.streamed, e.pool.Workers(), far))
	if e.pf.Swap(pf) == pf {
		return
	}
	for _, c := range e.copies {
		c.pf.Store(uint32(pf))
	}
}

// CompilePlanned implements backends.PlanCompiler.
func (d device) CompilePlanned(p *plan.Plan, part *plan.Partition) (backends.Executable, error) {
	for _, n := range part.Nodes {
		if err := d.Supports(n); err != nil {
			return nil, fmt.Errorf("cpu: node %v: %w", n, err)
		}
	}
	e := &plannedExe{executable: executable{nodes: part.Nodes}, arenaSize: -1, pool: poolFor(d.threads)}
	for _, a := range p.Arenas {
		if a.Device == DeviceName {
			e.arenaSize = a.Size
		}
	}
	buf := map[*ir.Value]plan.Buffer{}
	for _, b := range p.Buffers {
		buf[b.Value] = b
	}
	isOut := map[*ir.Value]bool{}
	for _, o := range p.Graph.Outputs {
		isOut[o] = true
	}
	store := map[*ir.Value]bool{}
	for _, o := range part.Outputs {
		store[o] = true
	}
	for _, n := range part.Nodes {
		for _, sg := range n.Subgraphs() {
			for _, v := range sg.OuterRefs() {
				store[v] = true
			}
		}
	}
	slotOf := map[*ir.Value]int{}
	newSlot := func(si slotInfo) int {
		slotOf[si.v] = len(e.slots)
		e.slots = append(e.slots, si)
		return len(e.slots) - 1
	}
	for _, n := range part.Nodes {
		st := step{n: n, a0: e.nargs}
		st.k, _ = ref.Lookup(n.Op)
		for _, v := range n.Inputs {
			if v == nil {
				st.in = append(st.in, -1)
				continue
			}
			s, ok := slotOf[v]
			if !ok {
				if v.Const != nil {
					c := v.Const
					if !aligned(c) {
						// A weight at an odd offset of a mapped file would be
						// copied by every Float32s call: copy it once here.
						c = c.Clone()
					}
					s = newSlot(slotInfo{v: v, kind: slotConst, c: c, shape: append([]int64{}, c.Shape...)})
					e.slots[s].constOK = fits(c, v.DType, staticShape(v))
				} else {
					s = newSlot(slotInfo{v: v, kind: slotLoad, shape: staticShape(v)})
					e.loads = append(e.loads, s)
				}
			}
			st.in = append(st.in, s)
		}
		for _, o := range n.Outputs {
			si := slotInfo{v: o, kind: slotDynamic, shape: staticShape(o), off: -1}
			b, planned := buf[o]
			switch ai := ir.InPlaceInput(n.Op); {
			case isOut[o]:
				si.kind = slotOutput
			case ai >= 0 && len(n.Outputs) == 1 && ai < len(st.in) && st.in[ai] >= 0:
				// The op writes input ai in place: the output is that
				// tensor (the memory plan gives it no buffer and keeps the
				// input alive as long as the output).
				si.kind, si.alias = slotAlias, st.in[ai]
			case si.shape == nil || !o.DType.Valid():
				si.shape = nil
			case planned && b.Offset >= 0 && b.Device == DeviceName:
				if e.arenaSize < 0 || b.Offset+b.Bytes > e.arenaSize || o.DType.Bytes(ir.NumElements(si.shape)) != b.Bytes {
					return nil, fmt.Errorf("cpu: the plan places %v at [%d, %d), outside the %d-byte cpu arena or at the wrong size", o, b.Offset, b.Offset+b.Bytes, e.arenaSize)
				}
				si.kind, si.off, si.bytes = slotPlanned, b.Offset, b.Bytes
			default:
				si.kind = slotPrivate
			}
			st.out = append(st.out, newSlot(si))
			st.store = append(st.store, store[o])
		}
		var spec *nodeSpec
		st.into, spec = buildInto(e.pool, n, e.slots, st.in, st.out)
		if st.into != nil {
			st.scratch = spec.scratch
			e.streamed += spec.streamed
			for _, c := range spec.copies {
				if !slices.Contains(e.copies, c) {
					e.copies = append(e.copies, c)
				}
			}
		}
		if e.isView(st, buf) {
			// Nothing to run: the output's planned tensor is the input's
			// bytes in the output's shape.
			e.slots[st.out[0]].view, e.slots[st.in[0]].viewed = true, true
			continue
		}
		st.fixed = e.fixedStep(st)
		e.scratch = max(e.scratch, st.scratch)
		e.nargs += len(st.in) + len(st.out)
		e.steps = append(e.steps, st)
	}
	// Each step prefetches the small constants (a norm's scale, a bias) of
	// the constAhead steps after it: between the streaming ops of a decode
	// step, whose weights have evicted them, the short serial ops would
	// otherwise each wait for memory.
	for i := range e.steps {
		for _, nx := range e.steps[i+1 : min(len(e.steps), i+1+constAhead)] {
			for _, si := range nx.in {
				if si >= 0 && e.slots[si].kind == slotConst && len(e.slots[si].c.Data) <= maxConstPrefetch && !slices.Contains(e.steps[i].pf, si) {
					e.steps[i].pf = append(e.steps[i].pf, si)
				}
			}
		}
	}
	return e, nil
}

// constAhead is how many steps ahead a step prefetches small constants,
// and maxConstPrefetch the largest constant it prefetches (bytes).
const (
	constAhead       = 2
	maxConstPrefetch = 16 << 10
)

// isView reports whether st is a view op (ir.ViewOp) that has nothing to
// do: its kernel would copy the input onto itself, because the memory plan
// placed its output in place of its input (plan.Buffer.InPlaceOf), both
// in this arena, and the output goes to no other partition.
func (e *plannedExe) isView(st step, buf map[*ir.Value]plan.Buffer) bool {
	n := st.n
	if !ir.ViewOp(n.Op) || st.into == nil || len(st.out) != 1 || st.store[0] || len(st.in) == 0 || st.in[0] < 0 {
		return false
	}
	in, out := &e.slots[st.in[0]], &e.slots[st.out[0]]
	return in.kind == slotPlanned && out.kind == slotPlanned && in.off == out.off && in.bytes == out.bytes &&
		buf[out.v].InPlaceOf == in.v
}

// fixedStep reports whether st qualifies as a fixed step (step.fixed).
func (e *plannedExe) fixedStep(st step) bool {
	if st.into == nil {
		return false
	}
	for _, si := range st.in {
		if si >= 0 && !e.bindable(si, true) {
			return false
		}
	}
	for k, si := range st.out {
		if st.store[k] || !e.bindable(si, false) {
			return false
		}
	}
	return true
}

// bindable reports whether slot si's tensor stays the same from run to
// run while the state is bound (execState.rebind): a planned or private
// value (its own tensor), a constant that fits its value, a graph input
// of static shape (Run rebinds when the caller passes another tensor), or
// an in-place output of one of those. Constants and graph inputs count
// only as inputs.
func (e *plannedExe) bindable(si int, input bool) bool {
	switch info := &e.slots[si]; info.kind {
	case slotPlanned:
		return true
	case slotPrivate:
		return info.v.DType.Bytes(ir.NumElements(info.shape)) >= 0
	case slotConst:
		return input && info.constOK
	case slotLoad:
		return input && info.shape != nil
	case slotAlias:
		return e.bindable(info.alias, true)
	}
	return false
}

// staticShape returns v's shape as ints when it is fully known, else nil.
func staticShape(v *ir.Value) []int64 {
	if v == nil || !v.Shape.Static() {
		return nil
	}
	s := v.Shape.Ints()
	if s == nil {
		s = []int64{}
	}
	return s
}

// NewState implements backends.StatefulExecutable.
func (e *plannedExe) NewState(arena backends.Buffer) (backends.ExecState, error) {
	var mem []byte
	if e.arenaSize > 0 {
		if arena == nil || arena.Host() == nil || int64(len(arena.Host())) < e.arenaSize {
			return nil, fmt.Errorf("cpu: the partition needs a host arena of %d bytes", e.arenaSize)
		}
		mem = arena.Host()[:e.arenaSize]
	}
	s := &execState{e: e, arena: mem, slots: make([]*ir.Tensor, len(e.slots)), home: make([]*ir.Tensor, len(e.slots)),
		args: make([]*ir.Tensor, e.nargs), scratch: ir.AlignedBytes(e.scratch), bound: make([]*ir.Tensor, len(e.slots))}
	for i, si := range e.slots {
		switch si.kind {
		case slotConst:
			s.slots[i] = si.c
		case slotPlanned:
			s.home[i] = &ir.Tensor{DType: si.v.DType, Shape: si.shape, Data: mem[si.off : si.off+si.bytes : si.off+si.bytes]}
		case slotPrivate:
			if si.v.DType.Bytes(ir.NumElements(si.shape)) >= 0 {
				s.home[i] = ir.NewTensor(si.v.DType, si.shape)
			}
		}
	}
	s.rebind()
	return s, nil
}

// rebind puts every planned and private value back in its own tensor (a
// fallback may have left another there) and binds the fixed steps'
// arguments.
func (s *execState) rebind() {
	e := s.e
	for i, si := range e.slots {
		switch si.kind {
		case slotPlanned, slotPrivate:
			s.slots[i] = s.home[i]
		case slotAlias:
			s.slots[i] = s.slots[si.alias] // an earlier slot: an input of its step
		}
	}
	for i := range e.steps {
		st := &e.steps[i]
		if !st.fixed {
			continue
		}
		for k, si := range st.in {
			s.args[st.a0+k] = nil
			if si >= 0 {
				s.args[st.a0+k] = s.slots[si]
			}
		}
		for k, si := range st.out {
			s.args[st.a0+len(st.in)+k] = s.slots[si]
		}
	}
	s.dirty = false
}

// execState is the storage of one run of a plannedExe.
type execState struct {
	e     *plannedExe
	arena []byte
	slots []*ir.Tensor // the current tensor of each value
	home  []*ir.Tensor // the preallocated tensor of planned and private values
	args  []*ir.Tensor
	// scratch is shared by the steps (they run one after another).
	scratch []byte
	// dirty: a fallback left a planned or private value in a tensor not
	// its own, or a graph input does not fit: fixed steps take the checked
	// path until rebind.
	dirty bool
	// bound[i]: the graph input tensor of load slot i that rebind bound.
	bound []*ir.Tensor
	rctx  ref.Context
}

// Run executes the partition; see backends.ExecState for the outputs.
func (s *execState) Run(ctx context.Context, env *backends.Env) (err error) {
	e := s.e
	cur := -1
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("node %v: kernel panicked: %v", e.steps[cur].n, r)
		}
	}()
	// Graph inputs: fixed steps that read one are bound to the tensor of
	// the last run; another tensor rebinds them, one of the wrong shape
	// sends every fixed step down the checked path this run.
	rebind, bad := s.dirty, false
	for _, i := range e.loads {
		t := env.Get(e.slots[i].v)
		s.slots[i] = t
		if t != s.bound[i] {
			s.bound[i], rebind = t, true
		}
		if si := &e.slots[i]; si.shape != nil && (!fits(t, si.v.DType, si.shape) || !aligned(t)) {
			bad = true
		}
	}
	if rebind {
		s.rebind()
	}
	s.dirty = s.dirty || bad
	s.rctx.Ctx, s.rctx.Env = ctx, env
	far := e.pool.Far()
	if far {
		e.pool.RestartStream()
	}
	e.setPrefetch(far)
	tr := backends.TracerFrom(ctx)
	var t0 time.Time
	// Cancellation is polled between steps through the Done channel: a
	// receive that does not block costs a few ns, Err a lock.
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	for i := range e.steps {
		cur = i
		st := &e.steps[i]
		if tr != nil {
			t0 = time.Now()
		}
		if done != nil {
			select {
			case <-done:
				return ctx.Err()
			default:
			}
		}
		for _, si := range st.pf {
			prefetchRows(s.slots[si].Data)
		}
		if st.fixed && !s.dirty {
			nin := len(st.in)
			if err := st.into(s.args[st.a0:st.a0+nin], s.args[st.a0+nin:st.a0+nin+len(st.out)], s.scratch[:st.scratch]); err != nil {
				return fmt.Errorf("node %v: %w", st.n, err)
			}
			if tr != nil {
				tr.Span(backends.NodeSpan(DeviceName, st.n, t0, time.Now()))
			}
			continue
		}
		in := s.args[st.a0 : st.a0+len(st.in)]
		for k, si := range st.in {
			if si < 0 {
				in[k] = nil
				continue
			}
			if in[k] = s.slots[si]; in[k] == nil {
				return fmt.Errorf("node %v: input %d (%v) has no value", st.n, k, e.slots[si].v)
			}
		}
		out := s.args[st.a0+len(st.in) : st.a0+len(st.in)+len(st.out)]
		if s.intoReady(st, in, out, env) {
			if err := st.into(in, out, s.scratch[:st.scratch]); err != nil {
				return fmt.Errorf("node %v: %w", st.n, err)
			}
			for k, si := range st.out {
				s.slots[si] = out[k]
			}
		} else if err := s.fallback(st, in, env); err != nil {
			return err
		}
		for k, si := range st.out {
			if st.store[k] {
				env.Set(e.slots[si].v, s.slots[si])
			}
		}
		if tr != nil {
			tr.Span(backends.NodeSpan(DeviceName, st.n, t0, time.Now()))
		}
	}
	return nil
}

// intoReady reports whether st's into kernel can run: the inputs have the
// shapes it was built for and every output has a tensor to write into.
func (s *execState) intoReady(st *step, in, out []*ir.Tensor, env *backends.Env) bool {
	if st.into == nil {
		return false
	}
	e := s.e
	for k, si := range st.in {
		// A planned or private value in its own tensor, or a constant,
		// has the shape it was compiled with.
		if si < 0 || in[k] == s.home[si] || e.slots[si].constOK {
			continue
		}
		if !fits(in[k], e.slots[si].v.DType, e.slots[si].shape) {
			return false
		}
	}
	for k, si := range st.out {
		info := &e.slots[si]
		switch info.kind {
		case slotPlanned, slotPrivate:
			out[k] = s.home[si]
		case slotAlias:
			out[k] = s.slots[info.alias]
		case slotOutput:
			out[k] = nil
			if info.shape == nil {
				return false
			}
			if t := env.Get(info.v); t != nil && fits(t, info.v.DType, info.shape) && aligned(t) {
				out[k] = t
			} else if info.v.DType.Bytes(ir.NumElements(info.shape)) >= 0 {
				out[k] = ir.NewTensor(info.v.DType, info.shape) // no destination: the caller owns a new one
			}
		default:
			out[k] = nil
		}
		if out[k] == nil {
			return false
		}
	}
	return true
}

// fallback runs the reference kernel and moves its results into place.
func (s *execState) fallback(st *step, in []*ir.Tensor, env *backends.Env) error {
	e := s.e
	res, err := st.k(&s.rctx, st.n, in)
	if err != nil {
		return fmt.Errorf("node %v: %w", st.n, err)
	}
	if len(res) != len(st.out) {
		return fmt.Errorf("node %v: kernel returned %d outputs, want %d", st.n, len(res), len(st.out))
	}
	for k, si := range st.out {
		t := res[k]
		if t == nil {
			return fmt.Errorf("node %v: kernel returned no tensor for output %d", st.n, k)
		}
		if err := t.Check(); err != nil {
			return fmt.Errorf("node %v: output %d: %w", st.n, k, err)
		}
		if e.slots[si].kind == slotAlias {
			if t != s.slots[e.slots[si].alias] {
				return fmt.Errorf("node %v: the kernel did not update its input %d in place", st.n, ir.InPlaceInput(st.n.Op))
			}
			s.slots[si] = t
			continue
		}
		var dst *ir.Tensor
		switch e.slots[si].kind {
		case slotPlanned, slotPrivate:
			dst = s.home[si]
		case slotOutput:
			dst = env.Get(e.slots[si].v)
		}
		switch {
		case dst != nil && dst != t && fits(t, dst.DType, dst.Shape) && len(dst.Data) == len(t.Data):
			copy(dst.Data, t.Data)
			t = dst
		case s.inArena(t):
			// A kernel may return a view of an input; an arena view must
			// not outlive the input's slot.
			t = t.Clone()
		}
		if kd := e.slots[si].kind; (kd == slotPlanned || kd == slotPrivate) && s.home[si] != nil && t != s.home[si] {
			if e.slots[si].viewed {
				return fmt.Errorf("node %v: output %d came back as %v %v, not the planned %v %v that views of it read",
					st.n, k, t.DType, t.Shape, dst.DType, dst.Shape)
			}
			s.dirty = true
		}
		s.slots[si] = t
	}
	return nil
}

// inArena reports whether t's data lies in the state's arena.
func (s *execState) inArena(t *ir.Tensor) bool {
	if len(s.arena) == 0 || len(t.Data) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s.arena)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(t.Data)))
	return p >= base && p < base+uintptr(len(s.arena))
}

// fits reports whether t has dtype dt and static shape shape (nil: unknown).
func fits(t *ir.Tensor, dt ir.DType, shape []int64) bool {
	if t == nil || shape == nil || t.DType != dt || len(t.Shape) != len(shape) {
		return false
	}
	for i, d := range shape {
		if t.Shape[i] != d {
			return false
		}
	}
	return int64(len(t.Data)) == dt.Bytes(ir.NumElements(shape))
}

// aligned reports whether t's data can be viewed as its element type.
func aligned(t *ir.Tensor) bool {
	if len(t.Data) == 0 {
		return true
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(t.Data)))%8 == 0
}
