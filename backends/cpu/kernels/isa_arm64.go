//go:build !noasm

package kernels

import "golang.org/x/sys/cpu"

// detectISA picks the arm64 level from the HWCAP bits golang.org/x/sys/cpu
// reads: NEON (ASIMD, with FP for the f16 block scales), then SDOT
// (ASIMDDP). Under qemu-user the -cpu model decides these bits.
func detectISA() ISA {
	a := cpu.ARM64
	if !a.HasASIMD || !a.HasFP {
		return Generic
	}
	if a.HasASIMDDP {
		return DotProd
	}
	return NEON
}
