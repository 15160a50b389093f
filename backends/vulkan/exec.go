//go:build cgo

package vulkan

/*
#include "vk.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// span is a byte range inside a buffer.
type span struct{ off, size uint64 }

// loc is where a non-constant value lives during a run: in the plan's
// arena (the buffer NewState is given), or in the run state's scratch.
type loc struct {
	inArena bool
	span
}

// constKey names a constant as uploaded: its f32 data may also be
// uploaded converted to f16 (the F16Weights opt-in), as a separate copy.
type constKey struct {
	v    *ir.Value
	half bool
}

// step is one dispatch with its pipeline.
type step struct {
	node *ir.Node
	pipe *pipeline
	d    dispatch
}

// executable is a compiled partition. Constants live in one device buffer
// uploaded at compile time. Every other value has a fixed place, chosen
// here: its plan.Buffer offset inside the device's arena when the plan
// placed it there (CompilePlanned), otherwise a span of the run state's
// scratch buffer. Each run state records its one command buffer once (input
// copies from staging, the dispatches with barriers between them, output
// copies back to staging) and replays it on every run.
type executable struct {
	d     *device
	part  *plan.Partition
	steps []step

	consts  *buffer
	constAt map[constKey]span
	at      map[*ir.Value]loc
	scratch uint64      // bytes of a state's scratch buffer
	arena   uint64      // bytes of the plan arena this partition touches (0: none)
	inputs  []*ir.Value // non-constant partition inputs, uploaded each run
	outputs []*ir.Value // downloaded each run
	gout    map[*ir.Value]bool
	stageAt map[*ir.Value]span
	staging uint64
	nsets   int
	ndescs  int
	checks  []step // dispatches whose run-time indices are checked on the host

	mu     sync.Mutex
	free   []*runState // idle states of the stateless Run
	states []*runState // every state made and not yet destroyed
	closed bool
}

// compile plans p's nodes and places its values; pl is nil for Compile
// (no memory plan: everything in the state's scratch).
func (d *device) compile(pl *plan.Plan, p *plan.Partition) (*executable, error) {
	e := &executable{d: d, part: p, constAt: map[constKey]span{}, at: map[*ir.Value]loc{},
		stageAt: map[*ir.Value]span{}, gout: map[*ir.Value]bool{}}
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
	planned := e.plannedOffsets(pl)
	var constBytes uint64
	next := func(end *uint64, size uint64) uint64 {
		off := *end
		*end += (size + d.align - 1) / d.align * d.align
		return off
	}
	placeConst := func(k constKey) {
		if _, ok := e.constAt[k]; ok {
			return
		}
		size := uint64(k.v.DType.Bytes(k.v.Shape.NumElements()))
		if k.half {
			size = uint64(2 * k.v.Shape.NumElements())
		}
		e.constAt[k] = span{off: next(&constBytes, size), size: size}
	}
	place := func(v *ir.Value) {
		if _, ok := e.at[v]; ok {
			return
		}
		size := uint64(v.DType.Bytes(v.Shape.NumElements()))
		if off, ok := planned[v]; ok {
			e.at[v] = loc{inArena: true, span: span{off: off, size: size}}
			e.arena = max(e.arena, off+(size+3)&^3)
			return
		}
		e.at[v] = loc{span: span{off: next(&e.scratch, size), size: size}}
	}
	stage := func(v *ir.Value) {
		size := uint64(v.DType.Bytes(v.Shape.NumElements()))
		e.stageAt[v] = span{off: next(&e.staging, size), size: size}
	}
	for _, v := range p.Inputs {
		if v.IsConst() {
			continue // placed below, as the dispatches read them
		}
		e.inputs = append(e.inputs, v)
		place(v)
		stage(v)
	}
	for _, s := range e.steps {
		for i, v := range s.d.args {
			if v.IsConst() { // a partition input, or a constant of a Fused body
				placeConst(constKey{v, s.d.halfArgs&(1<<i) != 0})
			} else {
				place(v)
			}
		}
	}
	for _, c := range e.checks {
		if !slices.Contains(e.inputs, c.d.index) {
			return nil, fmt.Errorf("vulkan: node %v: its indices %v are computed in the partition; they must come from outside", c.node, c.d.index)
		}
	}
	for _, v := range p.Outputs {
		if _, ok := e.at[v]; !ok {
			return nil, fmt.Errorf("vulkan: partition %d: output %v is not computed by its nodes", p.Index, v)
		}
		e.outputs = append(e.outputs, v)
		stage(v)
	}
	if pl != nil && pl.Graph != nil {
		for _, o := range pl.Graph.Outputs {
			e.gout[o] = true
		}
	}
	if constBytes > 0 {
		if err := e.uploadConsts(constBytes); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// plannedOffsets returns the arena offset of every value the plan places
// in this device's arena, leaving out offsets the device cannot bind (a
// minStorageBufferOffsetAlignment above plan.Align): those values go to
// scratch instead.
func (e *executable) plannedOffsets(pl *plan.Plan) map[*ir.Value]uint64 {
	at := map[*ir.Value]uint64{}
	if pl == nil {
		return at
	}
	align := max(e.d.info.MinStorageAlign, 1)
	for _, b := range pl.Buffers {
		if b.Value == nil || b.Offset < 0 || b.Device != e.part.Device || b.Arena < 0 || b.Arena >= len(pl.Arenas) ||
			pl.Arenas[b.Arena].Device != e.d.name || uint64(b.Offset)%align != 0 {
			continue
		}
		at[b.Value] = uint64(b.Offset)
	}
	return at
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
	for k, s := range e.constAt {
		v := k.v
		if want := uint64(v.DType.Bytes(v.Shape.NumElements())); uint64(len(v.Const.Data)) != want {
			e.consts.Free()
			return fmt.Errorf("vulkan: constant %v has %d bytes, want %d", v, len(v.Const.Data), want)
		}
		if !k.half {
			copy(host[s.off:s.off+s.size], v.Const.Data)
			continue
		}
		// f32 → f16, rounded to nearest even (ir.F32ToF16).
		for i := uint64(0); i < s.size/2; i++ {
			f := math.Float32frombits(binary.LittleEndian.Uint32(v.Const.Data[4*i:]))
			binary.LittleEndian.PutUint16(host[s.off+2*i:], ir.F32ToF16(f))
		}
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
	if d.isClosed() {
		return nil, d.errClosed()
	}
	c := &commands{d: d}
	r := C.wv_state_create(d.h, d.qfam, C.uint32_t(nsets), C.uint32_t(ndescs), &c.dp, &c.cp, &c.cb, &c.fence)
	d.liveCmds.Add(1)
	if err := check("command buffer setup", r); err != nil {
		c.destroy()
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	return c, nil
}

// destroy releases the command pool (and its command buffer), the
// descriptor pool and the fence; it may be called again.
func (c *commands) destroy() {
	if c.d == nil {
		return
	}
	C.wv_state_destroy(c.d.h, c.dp, c.cp, c.fence)
	c.d.liveCmds.Add(-1)
	c.d = nil
}

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

// Run runs the partition with a run state from the executable's own pool
// (made on first use, with its own arena when the partition has planned
// values): the Executable path, for callers without a plan arena.
func (e *executable) Run(ctx context.Context, env *backends.Env) error {
	e.mu.Lock()
	var st *runState
	if n := len(e.free); n > 0 {
		st = e.free[n-1]
		e.free = e.free[:n-1]
	}
	e.mu.Unlock()
	if st == nil {
		var err error
		if st, err = e.newState(nil); err != nil {
			return err
		}
	}
	err := st.Run(ctx, env)
	if st.cmds == nil { // destroyed after a device error
		return err
	}
	e.mu.Lock()
	e.free = append(e.free, st)
	e.mu.Unlock()
	return err
}

// NewState makes the per-run state of one concurrent run over arena, the
// device arena the runtime allocated for this run (see CompilePlanned). It
// allocates the state's scratch and staging buffers and records its
// command buffer; running it allocates no device memory.
func (e *executable) NewState(arena backends.Buffer) (backends.ExecState, error) {
	var ab *buffer
	if arena != nil {
		b, ok := arena.(*buffer)
		if !ok || b.d != e.d {
			return nil, fmt.Errorf("vulkan: partition %d: the arena is not a buffer of %s", e.part.Index, e.d.name)
		}
		if uint64(b.size) < e.arena {
			return nil, fmt.Errorf("vulkan: partition %d: the arena has %d bytes, the plan places values up to byte %d", e.part.Index, b.size, e.arena)
		}
		ab = b
	}
	if ab == nil && e.arena > 0 {
		return nil, fmt.Errorf("vulkan: partition %d: no arena given, and the plan places values in one", e.part.Index)
	}
	return e.newState(ab)
}

// Close frees the executable's device memory and command buffers: its
// constants and every run state it made (also those handed out by
// NewState). No Run may be in flight; the executable is unusable after.
func (e *executable) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, st := range e.states {
		st.destroy()
	}
	e.states, e.free, e.closed = nil, nil, true
	if e.consts != nil {
		e.consts.Free()
		e.consts = nil
	}
	return nil
}
