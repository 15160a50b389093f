//go:build cgo

package vulkan

/*
#cgo linux LDFLAGS: -ldl
#define WV_IMPL
#include "vk.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// This file is the Go half of the binding (vk.h is the C half): loading
// the loader, and thin wrappers that turn VkResults into errors. Handles
// are C values kept in Go structs; Go memory passed to C (SPIR-V words,
// push constants, arrays of handles) holds no Go pointers and is not
// retained by C.

var (
	loadOnce sync.Once
	loadErr  error
)

// loadLoader dlopens libvulkan.so.1 once per process.
func loadLoader() error {
	loadOnce.Do(func() {
		var buf [512]C.char
		if C.wv_open(&buf[0], C.int(len(buf))) != 0 {
			loadErr = fmt.Errorf("vulkan: no Vulkan loader: %s", C.GoString(&buf[0]))
		}
	})
	return loadErr
}

// vkResultNames names the VkResult codes weft may see.
var vkResultNames = map[C.VkResult]string{
	C.VK_NOT_READY:                            "VK_NOT_READY",
	C.VK_TIMEOUT:                              "VK_TIMEOUT",
	C.VK_INCOMPLETE:                           "VK_INCOMPLETE",
	C.VK_ERROR_OUT_OF_HOST_MEMORY:             "VK_ERROR_OUT_OF_HOST_MEMORY",
	C.VK_ERROR_OUT_OF_DEVICE_MEMORY:           "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	C.VK_ERROR_INITIALIZATION_FAILED:          "VK_ERROR_INITIALIZATION_FAILED",
	C.VK_ERROR_DEVICE_LOST:                    "VK_ERROR_DEVICE_LOST",
	C.VK_ERROR_MEMORY_MAP_FAILED:              "VK_ERROR_MEMORY_MAP_FAILED",
	C.VK_ERROR_LAYER_NOT_PRESENT:              "VK_ERROR_LAYER_NOT_PRESENT",
	C.VK_ERROR_EXTENSION_NOT_PRESENT:          "VK_ERROR_EXTENSION_NOT_PRESENT",
	C.VK_ERROR_FEATURE_NOT_PRESENT:            "VK_ERROR_FEATURE_NOT_PRESENT",
	C.VK_ERROR_INCOMPATIBLE_DRIVER:            "VK_ERROR_INCOMPATIBLE_DRIVER",
	C.VK_ERROR_TOO_MANY_OBJECTS:               "VK_ERROR_TOO_MANY_OBJECTS",
	C.VK_ERROR_FORMAT_NOT_SUPPORTED:           "VK_ERROR_FORMAT_NOT_SUPPORTED",
	C.VK_ERROR_FRAGMENTED_POOL:                "VK_ERROR_FRAGMENTED_POOL",
	C.VK_ERROR_OUT_OF_POOL_MEMORY:             "VK_ERROR_OUT_OF_POOL_MEMORY",
	C.VK_ERROR_INVALID_EXTERNAL_HANDLE:        "VK_ERROR_INVALID_EXTERNAL_HANDLE",
	C.VK_ERROR_UNKNOWN:                        "VK_ERROR_UNKNOWN",
	C.VK_ERROR_INVALID_SHADER_NV:              "VK_ERROR_INVALID_SHADER_NV",
	C.VK_PIPELINE_COMPILE_REQUIRED:            "VK_PIPELINE_COMPILE_REQUIRED",
	C.VK_ERROR_FRAGMENTATION:                  "VK_ERROR_FRAGMENTATION",
	C.VK_ERROR_NOT_PERMITTED_KHR:              "VK_ERROR_NOT_PERMITTED",
	C.VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS: "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS",
}

// errVk is a failed Vulkan call.
type errVk struct {
	call string
	code C.VkResult
}

func (e *errVk) Error() string {
	name, ok := vkResultNames[e.code]
	if !ok {
		name = fmt.Sprintf("VkResult %d", int(e.code))
	}
	return fmt.Sprintf("vulkan: %s: %s", e.call, name)
}

// check turns a VkResult into nil or an error naming the call.
func check(call string, r C.VkResult) error {
	if r == C.VK_SUCCESS {
		return nil
	}
	return &errVk{call: call, code: r}
}

// isTimeout reports whether err is a VK_TIMEOUT.
func isTimeout(err error) bool {
	var e *errVk
	return errors.As(err, &e) && e.code == C.VK_TIMEOUT
}

// instance is the VkInstance of one probe, destroyed when the last of
// its devices closes.
type instance struct {
	h       C.VkInstance
	version uint32
	refs    atomic.Int32 // open devices
	gone    bool
}

// release destroys the instance (once).
func (in *instance) release() {
	if !in.gone {
		C.wv_destroy_instance(in.h)
		in.gone = true
	}
}

func newInstance() (*instance, error) {
	if err := loadLoader(); err != nil {
		return nil, err
	}
	var in instance
	var v C.uint32_t
	if err := check("vkCreateInstance", C.wv_create_instance(&in.h, &v)); err != nil {
		return nil, err
	}
	if m := C.wv_missing(); m != nil {
		return nil, fmt.Errorf("vulkan: the loader has no %s", C.GoString(m))
	}
	in.version = uint32(v)
	return &in, nil
}

// physicalDevices enumerates the instance's physical devices.
func (in *instance) physicalDevices() []C.VkPhysicalDevice {
	var pds [16]C.VkPhysicalDevice
	n := C.wv_physical_devices(in.h, &pds[0], C.uint32_t(len(pds)))
	return append([]C.VkPhysicalDevice{}, pds[:n]...)
}

// describe reads what a physical device reports.
func (in *instance) describe(pd C.VkPhysicalDevice, index int) (Info, C.wv_info) {
	var ci C.wv_info
	C.wv_device_info(pd, C.uint32_t(in.version), &ci)
	i := Info{
		Index:              index,
		Name:               C.GoString(&ci.name[0]),
		VendorID:           uint32(ci.vendorID),
		DeviceID:           uint32(ci.deviceID),
		Type:               deviceTypeName(uint32(ci.deviceType)),
		APIVersion:         uint32(ci.apiVersion),
		DriverVersion:      uint32(ci.driverVersion),
		DriverID:           uint32(ci.driverID),
		DriverName:         C.GoString(&ci.driverName[0]),
		DriverInfo:         C.GoString(&ci.driverInfo[0]),
		MaxInvocations:     uint32(ci.maxInvocations),
		MaxSharedMemory:    uint32(ci.maxShared),
		MaxPushConstants:   uint32(ci.maxPush),
		MaxStorageRange:    uint64(ci.maxStorageRange),
		MinStorageAlign:    uint64(ci.minStorageAlign),
		ShaderFloat16:      ci.float16 != 0,
		ShaderInt8:         ci.int8 != 0,
		ShaderInt16:        ci.int16 != 0,
		ShaderFloat64:      ci.float64 != 0,
		Storage16Bit:       ci.storage16 != 0,
		Storage8Bit:        ci.storage8 != 0,
		ComputeQueueFamily: int(ci.queueFamily),
	}
	for k := 0; k < 3; k++ {
		i.MaxGroupCount[k] = uint32(ci.maxGroupCount[k])
		i.MaxGroupSize[k] = uint32(ci.maxGroupSize[k])
	}
	return i, ci
}

// memory property bits (VkMemoryPropertyFlagBits).
const (
	memDeviceLocal  = C.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
	memHostVisible  = C.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT
	memHostCoherent = C.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
)
