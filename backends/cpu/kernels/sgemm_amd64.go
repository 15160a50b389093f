//go:build !noasm

package kernels

// archKernel returns the assembly micro-kernel for the ISA level and panel
// width, or nil.
func archKernel(isa ISA, nr, mr int) func(k int, a, b, c *float32, ldc int, mask uint32, acc int) {
	switch {
	case isa >= AVX512 && nr == 32 && mr < len(sgemm512Kernels):
		return sgemm512Kernels[mr]
	case isa >= AVX2 && nr == 16 && mr < len(sgemm256Kernels):
		return sgemm256Kernels[mr]
	}
	return nil
}

// archShape returns the micro-tile (MR, NR) of the level's kernel.
func archShape(isa ISA) (mr, nr int) {
	switch isa {
	case AVX512:
		return 14, 32
	case AVX2:
		return 6, 16
	}
	return genericMR, genericNR
}
