//go:build cgo

package vulkan

/*
#include "vk.h"
*/
import "C"

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// span is a byte range inside a buffer.
type span struct{ off, size uint64 }

// step is one dispatch with its pipeline.
type step struct {
	node *ir.Node
	pipe *pipeline
	d    dispatch
}

// executable is a compiled partition. Constants live in one device buffer
// uploaded at compile time; everything else lives in a per-run arena whose
// layout (one span per value, no reuse yet) is fixed here, so that each run
// state records its command buffer once and replays it.
type executable struct {
	d     *device
	part  *plan.Partition
	steps []step

	consts  *buffer
	constAt map[*ir.Value]span
	arenaAt map[*ir.Value]span
	arena   uint64
	inputs  []*ir.Value // non-constant partition inputs, uploaded each run
	outputs []*ir.Value // downloaded each run
	stageAt map[*ir.Value]span
	staging uint64
	nsets   int
	ndescs  int
	checks  []step // dispatches whose run-time indices are checked on the host
	mu      sync.Mutex
	free    []*runState
}

func (d *device) compile(p *plan.Partition) (*executable, error) {
	e := &executable{d: d, part: p, constAt: map[*ir.Value]span{}, arenaAt: map[*ir.Value]span{}, stageAt: map[*ir.Value]span{}}
	for _, n := range p.Nodes {
		ds, err := planNode(n, d.quirks, d.lim)
		if err != nil {
			return nil, fmt.Errorf("vulkan: node %v: %w", n, err)
		}
		for _, dp := range ds {
			pipe, err := d.pipeline(dp.shader)
			if err != nil {
				return nil, fmt.Errorf("vulkan: node %v: %w", n, err)
			}
			if len(dp.args) != pipe.info.bindings || len(dp.push) != pipe.info.push {
				return nil, fmt.Errorf("vulkan: node %v: shader %s takes %d buffers and %d push words, planned %d and %d",
					n, dp.shader, pipe.info.bindings, pipe.info.push, len(dp.args), len(dp.push))
			}
			e.steps = append(e.steps, step{node: n, pipe: pipe, d: dp})
			if dp.index != nil && !dp.index.IsConst() {
				e.checks = append(e.checks, e.steps[len(e.steps)-1])
			}
			e.nsets++
			e.ndescs += len(dp.args)
		}
	}
	// Lay out the constants, the arena and the staging buffer.
	var constBytes uint64
	place := func(at map[*ir.Value]span, end *uint64, v *ir.Value) {
		if _, ok := at[v]; ok {
			return
		}
		size := uint64(v.DType.Bytes(v.Shape.NumElements()))
		at[v] = span{off: *end, size: size}
		*end += (size + d.align - 1) / d.align * d.align
	}
	for _, v := range p.Inputs {
		if v.IsConst() {
			place(e.constAt, &constBytes, v)
			continue
		}
		e.inputs = append(e.inputs, v)
		place(e.arenaAt, &e.arena, v)
		place(e.stageAt, &e.staging, v)
	}
	for _, s := range e.steps {
		for _, v := range s.d.args {
			if v.IsConst() { // a partition input, or a constant of a Fused body
				place(e.constAt, &constBytes, v)
			} else {
				place(e.arenaAt, &e.arena, v)
			}
		}
	}
	for _, c := range e.checks {
		if !slices.Contains(e.inputs, c.d.index) {
			return nil, fmt.Errorf("vulkan: node %v: its indices %v are computed in the partition; they must come from outside", c.node, c.d.index)
		}
	}
	for _, v := range p.Outputs {
		if _, ok := e.arenaAt[v]; !ok {
			return nil, fmt.Errorf("vulkan: partition %d: output %v is not computed by its nodes", p.Index, v)
		}
		e.outputs = append(e.outputs, v)
		place(e.stageAt, &e.staging, v)
	}
	if constBytes > 0 {
		if err := e.uploadConsts(constBytes); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// uploadConsts copies the partition's constants into a device buffer
// through a staging buffer (the one path that works on every device).
func (e *executable) uploadConsts(size uint64) error {
	d := e.d
	var err error
	if e.consts, err = d.newBuffer(int(size), d.devType, false); err != nil {
		return err
	}
	stage, err := d.newBuffer(int(size), d.stagingType, true)
	if err != nil {
		e.consts.Free()
		return err
	}
	defer stage.Free()
	host := stage.bytes()
	for v, s := range e.constAt {
		if uint64(len(v.Const.Data)) != s.size {
			e.consts.Free()
			return fmt.Errorf("vulkan: constant %v has %d bytes, want %d", v, len(v.Const.Data), s.size)
		}
		copy(host[s.off:s.off+s.size], v.Const.Data)
	}
	c, err := d.newCommands(1, 1)
	if err != nil {
		e.consts.Free()
		return err
	}
	defer c.destroy()
	C.wv_cmd_copy(c.cb, stage.h, 0, e.consts.h, 0, C.uint64_t(size))
	if err := c.submitWait(context.Background()); err != nil {
		e.consts.Free()
		return err
	}
	return nil
}

// commands is a command buffer being recorded or replayed, with its
// descriptor pool and fence.
type commands struct {
	d     *device
	dp    C.VkDescriptorPool
	cp    C.VkCommandPool
	cb    C.VkCommandBuffer
	fence C.VkFence
	ended bool
}

func (d *device) newCommands(nsets, ndescs int) (*commands, error) {
	c := &commands{d: d}
	r := C.wv_state_create(d.h, d.qfam, C.uint32_t(nsets), C.uint32_t(ndescs), &c.dp, &c.cp, &c.cb, &c.fence)
	if err := check("command buffer setup", r); err != nil {
		c.destroy()
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	return c, nil
}

func (c *commands) destroy() { C.wv_state_destroy(c.d.h, c.dp, c.cp, c.fence) }

// submitWait ends recording (the first time), submits and waits for the
// GPU to finish. It always waits for completion, even when ctx ends, since
// the buffers must not be reused while the GPU may still touch them.
func (c *commands) submitWait(ctx context.Context) error {
	if !c.ended {
		if err := check("vkEndCommandBuffer", C.wv_cmd_end(c.cb)); err != nil {
			return err
		}
		c.ended = true
	}
	c.d.qmu.Lock()
	err := check("vkQueueSubmit", C.wv_submit(c.d.h, c.d.queue, c.cb, c.fence))
	c.d.qmu.Unlock()
	if err != nil {
		return err
	}
	for {
		err := check("vkWaitForFences", C.wv_wait(c.d.h, c.fence, 100_000_000))
		if err == nil || !isTimeout(err) {
			return err
		}
		_ = ctx // no way to abort a submitted command buffer: keep waiting
	}
}

// runState is the per-run storage of an executable: the arena, the
// staging buffer and the recorded command buffer. One run uses it at a time.
type runState struct {
	arena, stage *buffer
	cmds         *commands
}

func (e *executable) newState() (*runState, error) {
	d := e.d
	st := &runState{}
	var err error
	defer func() {
		if err != nil {
			st.destroy()
		}
	}()
	if st.arena, err = d.newBuffer(int(e.arena), d.devType, false); err != nil {
		return nil, err
	}
	if st.stage, err = d.newBuffer(int(e.staging), d.stagingType, true); err != nil {
		return nil, err
	}
	if st.cmds, err = d.newCommands(e.nsets, e.ndescs); err != nil {
		return nil, err
	}
	cb := st.cmds.cb
	for _, v := range e.inputs {
		s, a := e.stageAt[v], e.arenaAt[v]
		C.wv_cmd_copy(cb, st.stage.h, C.uint64_t(s.off), st.arena.h, C.uint64_t(a.off), C.uint64_t(s.size))
	}
	C.wv_cmd_barrier(cb)
	for _, s := range e.steps {
		n := len(s.d.args)
		bufs := make([]C.VkBuffer, n)
		offs := make([]C.uint64_t, n)
		ranges := make([]C.uint64_t, n)
		for i, v := range s.d.args {
			sp, ok := e.constAt[v]
			bufs[i] = st.arena.h
			if ok {
				bufs[i] = e.consts.h
			} else {
				sp = e.arenaAt[v]
			}
			// Ranges are whole words, so that shaders reading bytes as uint
			// words (QMatMul's blocks) see the last partial one; the padding
			// is inside the span's d.align-aligned slot.
			offs[i], ranges[i] = C.uint64_t(sp.off), C.uint64_t((sp.size+3)&^3)
		}
		var set C.VkDescriptorSet
		r := C.wv_set(d.h, st.cmds.dp, s.pipe.dsl, C.uint32_t(n), &bufs[0], &offs[0], &ranges[0], &set)
		if err = check("vkAllocateDescriptorSets", r); err != nil {
			return nil, fmt.Errorf("vulkan: node %v: %w", s.node, err)
		}
		g := s.d.groups
		C.wv_cmd_dispatch(cb, s.pipe.h, s.pipe.pl, set, unsafe.Pointer(&s.d.push[0]), C.uint32_t(4*len(s.d.push)),
			C.uint32_t(g[0]), C.uint32_t(g[1]), C.uint32_t(g[2]))
		C.wv_cmd_barrier(cb)
	}
	for _, v := range e.outputs {
		s, a := e.stageAt[v], e.arenaAt[v]
		C.wv_cmd_copy(cb, st.arena.h, C.uint64_t(a.off), st.stage.h, C.uint64_t(s.off), C.uint64_t(s.size))
	}
	C.wv_cmd_host_barrier(cb)
	return st, nil
}

func (st *runState) destroy() {
	if st.cmds != nil {
		st.cmds.destroy()
	}
	if st.arena != nil {
		st.arena.Free()
	}
	if st.stage != nil {
		st.stage.Free()
	}
}

// Run uploads the partition's inputs from env, replays the recorded
// command buffer and binds fresh host tensors for the outputs.
func (e *executable) Run(ctx context.Context, env *backends.Env) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, v := range e.inputs {
		t := env.Get(v)
		if t == nil {
			return fmt.Errorf("vulkan: input %v has no value", v)
		}
		if err := matches(v, t); err != nil {
			return err
		}
	}
	for _, c := range e.checks {
		check := checkIndices
		if c.d.nonNeg {
			check = checkPositions
		}
		if err := check(c.node, env.Get(c.d.index), c.d.bound); err != nil {
			return err
		}
	}
	st, err := e.get()
	if err != nil {
		return err
	}
	host := st.stage.bytes()
	for _, v := range e.inputs {
		s := e.stageAt[v]
		copy(host[s.off:s.off+s.size], env.Get(v).Data)
	}
	if err := st.cmds.submitWait(ctx); err != nil {
		// The state may be in any condition after a device error: drop it.
		st.destroy()
		return fmt.Errorf("%s: partition %d: %w", e.d.name, e.part.Index, err)
	}
	for _, v := range e.outputs {
		s := e.stageAt[v]
		t := ir.NewTensor(v.DType, v.Shape.Ints())
		copy(t.Data, host[s.off:s.off+s.size])
		env.Set(v, t)
	}
	e.put(st)
	return nil
}

// matches checks a host tensor against the value it is bound to.
func matches(v *ir.Value, t *ir.Tensor) error {
	want := v.Shape.Ints()
	if t.DType != v.DType || len(t.Shape) != len(want) {
		return fmt.Errorf("vulkan: input %v got a %v tensor", v, t)
	}
	for i := range want {
		if t.Shape[i] != want[i] {
			return fmt.Errorf("vulkan: input %v got a %v tensor", v, t)
		}
	}
	if err := t.Check(); err != nil {
		return fmt.Errorf("vulkan: input %v: %w", v, err)
	}
	return nil
}

// get takes a run state from the pool, or makes one.
func (e *executable) get() (*runState, error) {
	e.mu.Lock()
	if n := len(e.free); n > 0 {
		st := e.free[n-1]
		e.free = e.free[:n-1]
		e.mu.Unlock()
		return st, nil
	}
	e.mu.Unlock()
	return e.newState()
}

func (e *executable) put(st *runState) {
	e.mu.Lock()
	e.free = append(e.free, st)
	e.mu.Unlock()
}

// Close frees the executable's device memory. No Run may be in flight.
func (e *executable) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, st := range e.free {
		st.destroy()
	}
	e.free = nil
	if e.consts != nil {
		e.consts.Free()
		e.consts = nil
	}
}
