//go:build !noasm

package kernels

import "golang.org/x/sys/cpu"

// detectISA picks the arm64 level from the HWCAP bits golang.org/x/sys/cpu
// reads: NEON (ASIMD, with FP for the f16 block scales), then SDOT
// (ASIMDDP), then SMMLA (I8MM). Under qemu-user the -cpu model decides
// these bits.
func detectISA() ISA {
	a := cpu.ARM64
	switch {
	case !a.HasASIMD || !a.HasFP:
		return Generic
	case a.HasASIMDDP && a.HasI8MM:
		return I8MM
	case a.HasASIMDDP:
		return DotProd
	}
	return NEON
}
