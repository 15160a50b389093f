package vulkan

import (
	"fmt"
	"strings"
)

// This file is the one place where device behaviour is decided: the facts
// a device reports (Info) and the environment's kill switches become named
// flags (Quirks), and the rest of the package reads only the flags.
//
// Kill switches (environment variables, read once when the backend first
// lists its devices):
//
//	WEFT_VULKAN_DISABLE=1      no Vulkan devices at all (plans stay on the CPU)
//	WEFT_VULKAN_SOFTWARE=0     hide CPU implementations (lavapipe, SwiftShader)
//	WEFT_VULKAN_FP16=0          no f16 storage and no f16 arithmetic
//	WEFT_VULKAN_FP16_STORAGE=0  no f16 storage (f16 tensors stay on the CPU)
//	WEFT_VULKAN_FP16_ARITH=0    f16 storage may stay, arithmetic is f32
//	WEFT_VULKAN_FP16_WEIGHTS=1  opt in: f32 MatMul weights (constant B)
//	                            stored as f16 on the device (needs f16
//	                            storage; halves their memory and bandwidth,
//	                            rounds each weight to f16)
//	WEFT_VULKAN_INT8=0          no 8-bit storage
//
// As in ncnn, storage precision (how tensors sit in memory) and arithmetic
// precision (what the shader computes in) are separate switches, and the
// device is created with exactly the features the flags allow enabled
// (storageBuffer16BitAccess, shaderFloat16), so that a switched-off feature
// is off in the driver too. The precision policy:
//
//   - An f32 graph computes in f32 everywhere, unless WEFT_VULKAN_FP16_WEIGHTS=1
//     opts its MatMul weights into f16 storage (activations, sums and
//     outputs stay f32).
//   - A graph whose MatMul data is already f16 runs with f16 storage and,
//     where F16Arith holds, f16 arithmetic inside each 16-term tile (the
//     running sum across tiles is f32); without F16Arith, in f32.
//   - Without F16Storage, nodes with f16 data are declined (they run on the
//     CPU), never computed at a precision other than the one stated here.

// Info is what a physical device reports about itself.
type Info struct {
	Index         int    // position in vkEnumeratePhysicalDevices
	Name          string // deviceName, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
	VendorID      uint32
	DeviceID      uint32
	Type          string // "discrete", "integrated", "virtual", "cpu" or "other"
	APIVersion    uint32 // VK_MAKE_API_VERSION encoding
	DriverVersion uint32 // vendor-specific encoding
	DriverID      uint32 // VkDriverId (0 before Vulkan 1.2)
	DriverName    string
	DriverInfo    string

	MaxGroupCount      [3]uint32
	MaxGroupSize       [3]uint32
	MaxInvocations     uint32
	MaxSharedMemory    uint32
	MaxPushConstants   uint32
	MaxStorageRange    uint64
	MinStorageAlign    uint64
	DeviceMemoryBytes  uint64 // the heap device buffers come from
	DeviceMemoryHost   bool   // device buffers are host-visible and coherent
	HasStagingMemory   bool   // a host-visible coherent memory type exists
	ShaderFloat16      bool
	ShaderInt8         bool
	ShaderInt16        bool
	ShaderFloat64      bool
	Storage16Bit       bool // storageBuffer16BitAccess
	Storage8Bit        bool // storageBuffer8BitAccess
	ComputeQueueFamily int  // -1 when the device has no compute queue
}

// Vendor IDs (PCI, or Khronos-assigned for vendors without one).
const (
	vendorAMD         = 0x1002
	vendorNVIDIA      = 0x10de
	vendorIntel       = 0x8086
	vendorARM         = 0x13b5
	vendorQualcomm    = 0x5143
	vendorImagination = 0x1010
	vendorApple       = 0x106b
	vendorMesa        = 0x10005 // VK_VENDOR_ID_MESA: lavapipe
	vendorSwiftShader = 0x1ae0  // Google
)

// VendorName names a vendor ID ("0x…" when unknown).
func VendorName(id uint32) string {
	switch id {
	case vendorAMD:
		return "AMD"
	case vendorNVIDIA:
		return "NVIDIA"
	case vendorIntel:
		return "Intel"
	case vendorARM:
		return "ARM"
	case vendorQualcomm:
		return "Qualcomm"
	case vendorImagination:
		return "Imagination"
	case vendorApple:
		return "Apple"
	case vendorMesa:
		return "Mesa"
	case vendorSwiftShader:
		return "Google"
	}
	return fmt.Sprintf("0x%x", id)
}

// Quirks are the flags the backend acts on for one device.
type Quirks struct {
	// Software: a CPU implementation of Vulkan (lavapipe, SwiftShader):
	// correct, and slower than weft's own CPU kernels. Such a device is
	// listed (for tests and CI) with Kind CPU, so that the scheduler's cost
	// model never prefers it to the CPU device unless a node is pinned.
	Software bool
	// F16Storage: tensors may be stored as f16 (storageBuffer16BitAccess).
	F16Storage bool
	// F16Arith: shaders may compute in f16 (shaderFloat16).
	F16Arith bool
	// F16Weights: an f32 MatMul stores its constant weights as f16 (the
	// WEFT_VULKAN_FP16_WEIGHTS=1 opt-in; implies F16Storage).
	F16Weights bool
	// Int8Storage: tensors may be stored as int8 (storageBuffer8BitAccess).
	Int8Storage bool
	// BugTanhOverflow: tanh(x) returns NaN for large |x| on drivers that
	// evaluate it through exp(2x). The shaders always clamp the argument
	// (it costs nothing), so this flag is informational.
	BugTanhOverflow bool
}

// quirkRule derives one flag from a device's Info and the environment.
type quirkRule struct {
	flag string
	set  func(q *Quirks, i Info, env func(string) string)
}

// quirkRules is the whole table, in one place.
var quirkRules = []quirkRule{
	{"software", func(q *Quirks, i Info, _ func(string) string) {
		q.Software = i.Type == "cpu" || i.VendorID == vendorMesa && strings.Contains(i.Name, "llvmpipe") || i.VendorID == vendorSwiftShader
	}},
	{"f16_storage", func(q *Quirks, i Info, env func(string) string) {
		q.F16Storage = i.Storage16Bit && env("WEFT_VULKAN_FP16") != "0" && env("WEFT_VULKAN_FP16_STORAGE") != "0"
	}},
	{"f16_arith", func(q *Quirks, i Info, env func(string) string) {
		q.F16Arith = i.ShaderFloat16 && env("WEFT_VULKAN_FP16") != "0" && env("WEFT_VULKAN_FP16_ARITH") != "0"
	}},
	{"f16_weights", func(q *Quirks, i Info, env func(string) string) {
		q.F16Weights = q.F16Storage && env("WEFT_VULKAN_FP16_WEIGHTS") == "1"
	}},
	{"int8_storage", func(q *Quirks, i Info, env func(string) string) {
		q.Int8Storage = i.Storage8Bit && env("WEFT_VULKAN_INT8") != "0"
	}},
	{"bug_tanh_overflow", func(q *Quirks, i Info, _ func(string) string) {
		q.BugTanhOverflow = i.VendorID == vendorQualcomm || i.VendorID == vendorARM || i.VendorID == vendorImagination
	}},
}

// deriveQuirks applies every rule of quirkRules.
func deriveQuirks(i Info, env func(string) string) Quirks {
	var q Quirks
	for _, r := range quirkRules {
		r.set(&q, i, env)
	}
	return q
}

// Flags lists the names of the flags that are set, in table order.
func (q Quirks) Flags() []string {
	set := map[string]bool{
		"software": q.Software, "f16_storage": q.F16Storage, "f16_arith": q.F16Arith,
		"f16_weights":  q.F16Weights,
		"int8_storage": q.Int8Storage, "bug_tanh_overflow": q.BugTanhOverflow,
	}
	var names []string
	for _, r := range quirkRules {
		if set[r.flag] {
			names = append(names, r.flag)
		}
	}
	return names
}

// disabledReason returns why the whole backend is switched off, or "".
func disabledReason(env func(string) string) string {
	if v := env("WEFT_VULKAN_DISABLE"); v != "" && v != "0" {
		return "vulkan: disabled by WEFT_VULKAN_DISABLE=" + v
	}
	return ""
}

// hideDevice returns why a device is not offered, or "".
func hideDevice(i Info, q Quirks, env func(string) string) string {
	if i.ComputeQueueFamily < 0 {
		return "no compute queue"
	}
	if !i.HasStagingMemory {
		return "no host-visible coherent memory for staging"
	}
	if q.Software && env("WEFT_VULKAN_SOFTWARE") == "0" {
		return "a software implementation, hidden by WEFT_VULKAN_SOFTWARE=0"
	}
	return ""
}

// deviceTypeName names a VkPhysicalDeviceType.
func deviceTypeName(t uint32) string {
	switch t {
	case 1:
		return "integrated"
	case 2:
		return "discrete"
	case 3:
		return "virtual"
	case 4:
		return "cpu"
	}
	return "other"
}
