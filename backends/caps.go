package backends

import "github.com/weftrt/weft/ir"

// Capabilities is what a device states about itself beyond Supports: the
// precision it stores and computes floating-point data in, and its limits.
// Supports stays the authority on single nodes; capabilities are for
// people, profiles and the scheduler's coarse decisions.
type Capabilities struct {
	// Storage lists the dtypes the device's kernels read and write in its
	// buffers (storage precision), e.g. f16 with 16-bit storage.
	Storage []ir.DType
	// Arith lists the floating-point dtypes the kernels compute in
	// (arithmetic precision). A dtype in Storage but not here is
	// converted to a wider one for arithmetic.
	Arith []ir.DType
	// MaxBufferBytes is the largest buffer one kernel argument may span
	// (0: no limit stated).
	MaxBufferBytes int64
	// Notes says which switches shaped the lists (kill switches, opt-ins).
	Notes []string
}

// CapabilityReporter is an optional Device interface: devices that
// describe their capabilities.
type CapabilityReporter interface {
	Capabilities() Capabilities
}

// CacheFiler is an optional Device interface for devices that keep
// compiled device code (the Vulkan backend's pipeline cache) in a file
// beside a compiled plan, so that opening the plan again skips the
// driver's compilation. The device picks the file name from the plan's
// path. Whoever opens a plan calls LoadCache before compiling its
// partitions and SaveCache after.
type CacheFiler interface {
	// LoadCache reads the cache file of the plan at planPath, if there is
	// one that fits this device, and says what happened (loaded, absent,
	// or ignored and why). A cache that does not fit is never an error.
	LoadCache(planPath string) string
	// SaveCache writes the device's cache beside the plan at planPath.
	SaveCache(planPath string) error
}
