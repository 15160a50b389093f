//go:build !amd64 || noasm

package kernels

// lastLevelCache has no CPUID to read here (LastLevelCache falls back on
// the OS).
func lastLevelCache() int64 { return 0 }

// amdCPU is false where there is no CPUID to read (StreamPrefetchHelps).
func amdCPU() bool { return false }
