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

	qmu sync.Mutex // vkQueueSubmit needs the queue externally synchronized

	pmu   sync.Mutex
	cache C.VkPipelineCache
	pipes map[string]*pipeline
}

func openDevice(in *instance, pd C.VkPhysicalDevice, index int, env func(string) string) (*device, error) {
	info, ci := in.describe(pd, index)
	name := fmt.Sprintf("vulkan:%d", index)
	// The memory types are only known once a device exists; a device
	// without a compute queue is skipped before that.
	if info.ComputeQueueFamily < 0 {
		return nil, fmt.Errorf("%s (%s): skipped: no compute queue", name, info.Name)
	}
	d := &device{name: name, qfam: C.uint32_t(ci.queueFamily), pipes: map[string]*pipeline{}}
	if err := check("vkCreateDevice", C.wv_create_device(pd, &ci, &d.h, &d.queue)); err != nil {
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
	if err := check("vkCreatePipelineCache", C.wv_pipeline_cache(d.h, &d.cache)); err != nil {
		C.wv_destroy_device(d.h)
		return nil, fmt.Errorf("%s (%s): %w", name, info.Name, err)
	}
	return d, nil
}

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
	b := &buffer{d: d, size: size}
	m := C.int(0)
	if mapIt {
		m = 1
	}
	alloc := max(size, 4)
	if err := check("vkAllocateMemory", C.wv_buffer(d.h, C.uint64_t(alloc), mt, m, &b.h, &b.mem, &b.mapped)); err != nil {
		return nil, fmt.Errorf("%s: a %d-byte buffer: %w", d.name, size, err)
	}
	return b, nil
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

// pipeline returns the pipeline of a shader, building it on first use (the
// in-memory pipeline cache; saving it beside a plan is later work).
func (d *device) pipeline(name string) (*pipeline, error) {
	d.pmu.Lock()
	defer d.pmu.Unlock()
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
func (d *device) Compile(p *plan.Partition) (backends.Executable, error) {
	return d.compile(p)
}
