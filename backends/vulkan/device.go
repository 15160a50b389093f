//go:build cgo

package vulkan

/*
#include "vk.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// probe creates the instance and one logical device per usable physical
// device. Whatever goes wrong becomes the reason, never an error: a
// machine without Vulkan simply has no Vulkan devices.
func probe(env func(string) string) ([]backends.Device, string) {
	if r := disabledReason(env); r != "" {
		return nil, r
	}
	in, err := newInstance()
	if err != nil {
		return nil, err.Error()
	}
	pds := in.physicalDevices()
	if len(pds) == 0 {
		return nil, "vulkan: the loader found no physical devices"
	}
	var devs []backends.Device
	var skipped []string
	for i, pd := range pds {
		d, err := openDevice(in, pd, i, env)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		devs = append(devs, d)
	}
	if len(devs) == 0 {
		in.release()
	}
	return devs, strings.Join(skipped, "; ")
}

// device is one logical Vulkan device with one compute queue.
type device struct {
	name   string
	info   Info
	quirks Quirks
	lim    limits

	h           C.VkDevice
	queue       C.VkQueue
	qfam        C.uint32_t
	devType     C.int32_t // memory type of device buffers
	stagingType C.int32_t // memory type of staging buffers
	align       uint64    // offset alignment inside a buffer

	in   *instance
	uuid [16]byte // pipelineCacheUUID

	qmu sync.Mutex // vkQueueSubmit needs the queue externally synchronized

	pmu   sync.Mutex
	cache C.VkPipelineCache
	pipes map[string]*pipeline
	// The last LoadCache: bytes merged (0: none) and its note.
	cacheLoaded int
	cacheNote   string
	closed      bool // Close ran: every Vulkan object is gone

	// Counters of live Vulkan objects, for tests and Close: memory
	// allocations made (ever) and still held, and command states held.
	allocs, liveBuffers, liveCmds atomic.Int64
}

func openDevice(in *instance, pd C.VkPhysicalDevice, index int, env func(string) string) (*device, error) {
	info, ci := in.describe(pd, index)
	name := fmt.Sprintf("vulkan:%d", index)
	// The memory types are only known once a device exists; a device
	// without a compute queue is skipped before that.
	if info.ComputeQueueFamily < 0 {
		return nil, fmt.Errorf("%s (%s): skipped: no compute queue", name, info.Name)
	}
	d := &device{name: name, qfam: C.uint32_t(ci.queueFamily), pipes: map[string]*pipeline{}, in: in}
	for k := range d.uuid {
		d.uuid[k] = byte(ci.cacheUUID[k])
	}
	// The features the flags allow are enabled at creation (a shader may
	// use only enabled features); the flags are derived again below once
	// the memory types are known, from the same facts.
	want := deriveQuirks(info, env)
	err := check("vkCreateDevice", C.wv_create_device(pd, &ci, cbool(want.F16Storage), cbool(want.F16Arith), &d.h, &d.queue))
	if err != nil && (want.F16Storage || want.F16Arith) {
		// A driver that reports a feature and then refuses to enable it:
		// open the device without f16, as if it had reported none.
		info.Storage16Bit, info.ShaderFloat16 = false, false
		err = check("vkCreateDevice", C.wv_create_device(pd, &ci, 0, 0, &d.h, &d.queue))
	}
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", name, info.Name, err)
	}
	info.DeviceMemoryBytes = uint64(ci.devHeap)
	hv := C.uint32_t(memHostVisible | memHostCoherent)
	info.DeviceMemoryHost = ci.devType >= 0 && ci.devFlags&hv == hv
	info.HasStagingMemory = ci.stagingType >= 0
	d.info, d.quirks = info, deriveQuirks(info, env)
	if why := hideDevice(info, d.quirks, env); why != "" || ci.devType < 0 {
		if why == "" {
			why = "no memory type for storage buffers"
		}
		C.wv_destroy_device(d.h)
		return nil, fmt.Errorf("%s (%s): skipped: %s", name, info.Name, why)
	}
	d.devType, d.stagingType = ci.devType, ci.stagingType
	d.align = max(info.MinStorageAlign, 64)
	d.lim = limits{maxGroups: info.MaxGroupCount, maxStorageRange: info.MaxStorageRange}
	if err := check("vkCreatePipelineCache", C.wv_pipeline_cache(d.h, nil, 0, &d.cache)); err != nil {
		C.wv_destroy_device(d.h)
		return nil, fmt.Errorf("%s (%s): %w", name, info.Name, err)
	}
	in.refs.Add(1)
	return d, nil
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Close releases the device: its pipelines, its pipeline cache, the
// VkDevice and, with the last device of a probe, the VkInstance. Every
// executable compiled on it and every buffer allocated from it must be
// closed or freed first; otherwise Close refuses (and leaks nothing it
// cannot account for). The devices the backend registers live as long as
// the process; Close is for devices from a separate probe (tests, tools)
// and for programs that shut Vulkan down deterministically.
func (d *device) Close() error {
	d.pmu.Lock()
	defer d.pmu.Unlock()
	if d.closed {
		return nil
	}
	if n, c := d.liveBuffers.Load(), d.liveCmds.Load(); n != 0 || c != 0 {
		return fmt.Errorf("%s: close: %d buffers and %d command states are still in use (close the sessions and executables first)", d.name, n, c)
	}
	C.wv_device_wait_idle(d.h)
	for name, p := range d.pipes {
		C.wv_destroy_pipeline(d.h, p.h, p.pl, p.dsl)
		delete(d.pipes, name)
	}
	C.wv_destroy_cache(d.h, d.cache)
	C.wv_destroy_device(d.h)
	d.closed, d.h, d.cache = true, nil, nil
	if d.in.refs.Add(-1) == 0 {
		d.in.release()
	}
	return nil
}

// errClosed is the error of any use of a closed device.
func (d *device) errClosed() error { return fmt.Errorf("%s: the device is closed", d.name) }

// DeviceInfo returns what a Vulkan device reports about itself and the
// quirk flags derived from it; ok is false for devices of other backends.
func DeviceInfo(d backends.Device) (info Info, q Quirks, ok bool) {
	vd, ok := d.(*device)
	if !ok {
		return Info{}, Quirks{}, false
	}
	return vd.info, vd.quirks, true
}

func (d *device) Name() string { return d.name }

// Kind is GPU, except for software implementations (lavapipe), which run
// on the CPU and are costed as such by the scheduler: they never win a
// node from weft's own CPU kernels unless pinned there.
func (d *device) Kind() backends.Kind {
	if d.quirks.Software {
		return backends.CPU
	}
	return backends.GPU
}

// HostVisible reports whether device buffers live in host-visible,
// coherent memory (lavapipe, integrated GPUs with a unified heap).
func (d *device) HostVisible() bool { return d.info.DeviceMemoryHost }

// Supports accepts the nodes planNode can turn into dispatches.
func (d *device) Supports(n *ir.Node) error {
	_, err := planNode(n, d.quirks, d.lim)
	return err
}

// buffer is a VkBuffer with its own memory, mapped when host-visible.
type buffer struct {
	d      *device
	h      C.VkBuffer
	mem    C.VkDeviceMemory
	size   int
	mapped unsafe.Pointer // C memory, nil when not mapped
}

// newBuffer allocates size bytes (at least 4) of memory type mt, mapped
// when mapIt is set.
func (d *device) newBuffer(size int, mt C.int32_t, mapIt bool) (*buffer, error) {
	if d.isClosed() {
		return nil, d.errClosed()
	}
	b := &buffer{d: d, size: size}
	m := C.int(0)
	if mapIt {
		m = 1
	}
	alloc := max(size, 4)
	if err := check("vkAllocateMemory", C.wv_buffer(d.h, C.uint64_t(alloc), mt, m, &b.h, &b.mem, &b.mapped)); err != nil {
		return nil, fmt.Errorf("%s: a %d-byte buffer: %w", d.name, size, err)
	}
	d.allocs.Add(1)
	d.liveBuffers.Add(1)
	return b, nil
}

func (d *device) isClosed() bool {
	d.pmu.Lock()
	defer d.pmu.Unlock()
	return d.closed
}

// bytes views the mapped memory (nil when not mapped).
func (b *buffer) bytes() []byte {
	if b.mapped == nil {
		return nil
	}
	return unsafe.Slice((*byte)(b.mapped), b.size)
}

func (b *buffer) Size() int    { return b.size }
func (b *buffer) Host() []byte { return b.bytes() }

// Free releases the buffer; the caller makes sure no GPU work uses it.
func (b *buffer) Free() {
	if b.h != nil {
		C.wv_free_buffer(b.d.h, b.h, b.mem)
		b.h, b.mem, b.mapped = nil, nil, nil
		b.d.liveBuffers.Add(-1)
	}
}

// Alloc allocates a device buffer; Host returns its bytes when the device
// memory is host-visible.
func (d *device) Alloc(n int) (backends.Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("%s: negative allocation %d", d.name, n)
	}
	return d.newBuffer(n, d.devType, d.info.DeviceMemoryHost)
}

// pipeline is a compiled shader with its layouts.
type pipeline struct {
	info shaderInfo
	dsl  C.VkDescriptorSetLayout
	pl   C.VkPipelineLayout
	h    C.VkPipeline
}

// pipeline returns the pipeline of a shader, building it on first use
// through the device's pipeline cache (which LoadCache may have filled
// from a file beside the plan, see cache.go).
func (d *device) pipeline(name string) (*pipeline, error) {
	d.pmu.Lock()
	defer d.pmu.Unlock()
	if d.closed {
		return nil, d.errClosed()
	}
	if p, ok := d.pipes[name]; ok {
		return p, nil
	}
	si, ok := shaderTable[name]
	if !ok {
		return nil, fmt.Errorf("vulkan: no shader %q", name)
	}
	spv, err := spirv.ReadFile("shaders/" + name + ".spv")
	if err != nil {
		return nil, fmt.Errorf("vulkan: shader %s: %w", name, err)
	}
	if len(spv)%4 != 0 || len(spv) == 0 {
		return nil, fmt.Errorf("vulkan: shader %s: %d bytes of SPIR-V is not whole words", name, len(spv))
	}
	words := make([]uint32, len(spv)/4)
	for i := range words {
		words[i] = uint32(spv[4*i]) | uint32(spv[4*i+1])<<8 | uint32(spv[4*i+2])<<16 | uint32(spv[4*i+3])<<24
	}
	p := &pipeline{info: si}
	r := C.wv_pipeline(d.h, d.cache, (*C.uint32_t)(unsafe.Pointer(&words[0])), C.size_t(len(spv)),
		C.uint32_t(si.bindings), C.uint32_t(4*si.push), &p.dsl, &p.pl, &p.h)
	if err := check("vkCreateComputePipelines", r); err != nil {
		return nil, fmt.Errorf("%s: shader %s: %w", d.name, name, err)
	}
	d.pipes[name] = p
	return p, nil
}

// Compile plans every node, builds the pipelines and uploads the
// partition's constants; per-run resources are made by the first run.
// Every value lives in the executable's own per-run buffers.
func (d *device) Compile(p *plan.Partition) (backends.Executable, error) {
	return d.compile(nil, p)
}

// CompilePlanned is Compile for a partition of a memory-planned plan: the
// values the plan places in this device's arena live there (at their
// plan.Buffer offsets, inside the one buffer the runtime allocates per
// arena and run state, see NewState); the rest (graph outputs, inputs from
// other devices, Fused-body intermediates) in a small per-state buffer.
func (d *device) CompilePlanned(p *plan.Plan, part *plan.Partition) (backends.Executable, error) {
	return d.compile(p, part)
}

// Capabilities states the device's storage and arithmetic precision as the
// quirk flags left them (quirks.go): f32 always; f16 storage with
// storageBuffer16BitAccess (MatMul kernels), f16 arithmetic with
// shaderFloat16; Q8_0 and Q4_0 as QMatMul weights.
func (d *device) Capabilities() backends.Capabilities {
	c := backends.Capabilities{
		Storage:        []ir.DType{ir.Float32, ir.Q8_0, ir.Q4_0},
		Arith:          []ir.DType{ir.Float32},
		MaxBufferBytes: int64(min(d.info.MaxStorageRange, 1<<62)),
	}
	if d.quirks.F16Storage {
		c.Storage = append(c.Storage, ir.Float16)
	} else if d.info.Storage16Bit {
		c.Notes = append(c.Notes, "f16 storage switched off (WEFT_VULKAN_FP16 or WEFT_VULKAN_FP16_STORAGE)")
	}
	if d.quirks.F16Arith {
		c.Arith = append(c.Arith, ir.Float16)
	} else if d.info.ShaderFloat16 {
		c.Notes = append(c.Notes, "f16 arithmetic switched off (WEFT_VULKAN_FP16 or WEFT_VULKAN_FP16_ARITH)")
	}
	if d.quirks.F16Weights {
		c.Notes = append(c.Notes, "f32 MatMul weights stored as f16 (WEFT_VULKAN_FP16_WEIGHTS=1)")
	}
	return c
}

// MemoryStats reports, for a Vulkan device, how many device memory
// allocations it has made since it opened, how many are live, and how many
// command states (command pool, descriptor pool, fence) are live; ok is
// false for devices of other backends.
func MemoryStats(dev backends.Device) (allocs, live, cmds int64, ok bool) {
	d, ok := dev.(*device)
	if !ok {
		return 0, 0, 0, false
	}
	return d.allocs.Load(), d.liveBuffers.Load(), d.liveCmds.Load(), true
}
