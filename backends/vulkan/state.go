//go:build cgo

package vulkan

/*
#include "vk.h"
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
)

// runState is the storage of one run of an executable: the arena (the
// runtime's plan arena, or its own), the scratch buffer for values outside
// the plan, the staging buffer and the command buffer recorded once over
// them. One run uses it at a time; running it allocates no device memory.
type runState struct {
	e              *executable
	arena          *buffer // nil when the partition has no planned values
	ownArena       bool
	scratch, stage *buffer
	cmds           *commands
}

// newState allocates a run state over arena (nil: its own, when needed)
// and records its command buffer.
func (e *executable) newState(arena *buffer) (st *runState, err error) {
	d := e.d
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("vulkan: partition %d: the executable is closed", e.part.Index)
	}
	st = &runState{e: e, arena: arena}
	defer func() {
		if err != nil {
			st.destroy()
		}
	}()
	if arena == nil && e.arena > 0 {
		if st.arena, err = d.newBuffer(int(e.arena), d.devType, false); err != nil {
			return nil, err
		}
		st.ownArena = true
	}
	if st.scratch, err = d.newBuffer(int(e.scratch), d.devType, false); err != nil {
		return nil, err
	}
	if st.stage, err = d.newBuffer(int(e.staging), d.stagingType, true); err != nil {
		return nil, err
	}
	if st.cmds, err = d.newCommands(e.nsets, e.ndescs); err != nil {
		return nil, err
	}
	if err = st.record(); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.states = append(e.states, st)
	e.mu.Unlock()
	return st, nil
}

// where returns the buffer and span of a non-constant value.
func (st *runState) where(v *ir.Value) (C.VkBuffer, span) {
	l := st.e.at[v]
	if l.inArena {
		return st.arena.h, l.span
	}
	return st.scratch.h, l.span
}

// record records the state's command buffer: the inputs' copies from
// staging, one dispatch per step with a barrier after each, the outputs'
// copies to staging and a barrier for the host's reads.
func (st *runState) record() error {
	e, d := st.e, st.e.d
	cb := st.cmds.cb
	for _, v := range e.inputs {
		s := e.stageAt[v]
		b, a := st.where(v)
		C.wv_cmd_copy(cb, st.stage.h, C.uint64_t(s.off), b, C.uint64_t(a.off), C.uint64_t(s.size))
	}
	C.wv_cmd_barrier(cb)
	for _, s := range e.steps {
		n := len(s.d.args)
		bufs := make([]C.VkBuffer, n)
		offs := make([]C.uint64_t, n)
		ranges := make([]C.uint64_t, n)
		for i, v := range s.d.args {
			var sp span
			if v.IsConst() {
				bufs[i], sp = e.consts.h, e.constAt[constKey{v, s.d.halfArgs&(1<<i) != 0}]
			} else {
				bufs[i], sp = st.where(v)
			}
			// Ranges are whole words, so that shaders reading bytes as uint
			// words (QMatMul's blocks, f16 pairs) see the last partial one;
			// the padding is inside the span's aligned slot.
			offs[i], ranges[i] = C.uint64_t(sp.off), C.uint64_t((sp.size+3)&^3)
		}
		var set C.VkDescriptorSet
		r := C.wv_set(d.h, st.cmds.dp, s.pipe.dsl, C.uint32_t(n), &bufs[0], &offs[0], &ranges[0], &set)
		if err := check("vkAllocateDescriptorSets", r); err != nil {
			return fmt.Errorf("vulkan: node %v: %w", s.node, err)
		}
		g := s.d.groups
		C.wv_cmd_dispatch(cb, s.pipe.h, s.pipe.pl, set, unsafe.Pointer(&s.d.push[0]), C.uint32_t(4*len(s.d.push)),
			C.uint32_t(g[0]), C.uint32_t(g[1]), C.uint32_t(g[2]))
		C.wv_cmd_barrier(cb)
	}
	for _, v := range e.outputs {
		s := e.stageAt[v]
		b, a := st.where(v)
		C.wv_cmd_copy(cb, b, C.uint64_t(a.off), st.stage.h, C.uint64_t(s.off), C.uint64_t(s.size))
	}
	C.wv_cmd_host_barrier(cb)
	return nil
}

// destroy frees what the state owns (not the runtime's arena); it may be
// called again.
func (st *runState) destroy() {
	if st.cmds != nil {
		st.cmds.destroy()
		st.cmds = nil
	}
	for _, b := range []*buffer{st.scratch, st.stage} {
		if b != nil {
			b.Free()
		}
	}
	if st.ownArena && st.arena != nil {
		st.arena.Free()
	}
	st.scratch, st.stage, st.arena = nil, nil, nil
}

// Close frees the state's device memory and command buffer (the runtime's
// arena stays: the runtime frees it). No run may be in flight.
func (st *runState) Close() error {
	e := st.e
	e.mu.Lock()
	defer e.mu.Unlock()
	st.destroy()
	for i, s := range e.states {
		if s == st {
			e.states = append(e.states[:i], e.states[i+1:]...)
			break
		}
	}
	return nil
}

// Run uploads the partition's inputs from env, replays the recorded
// command buffer and stores the outputs in env: into the destination
// tensor the runtime bound for a graph output when it matches, otherwise
// into a fresh host tensor.
func (st *runState) Run(ctx context.Context, env *backends.Env) error {
	e := st.e
	if err := ctx.Err(); err != nil {
		return err
	}
	if st.cmds == nil {
		return fmt.Errorf("vulkan: partition %d: the run state is closed", e.part.Index)
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
	host := st.stage.bytes()
	for _, v := range e.inputs {
		s := e.stageAt[v]
		copy(host[s.off:s.off+s.size], env.Get(v).Data)
	}
	if err := st.cmds.submitWait(ctx); err != nil {
		// The state may be in any condition after a device error: drop it.
		st.Close()
		return fmt.Errorf("%s: partition %d: %w", e.d.name, e.part.Index, err)
	}
	for _, v := range e.outputs {
		s := e.stageAt[v]
		t := env.Get(v)
		if !e.gout[v] || t == nil || matches(v, t) != nil {
			t = ir.NewTensor(v.DType, v.Shape.Ints())
		}
		copy(t.Data, host[s.off:s.off+s.size])
		env.Set(v, t)
	}
	return nil
}
