//go:build !noasm

package kernels

//go:generate go run gen_neon_arm64.go

// archKernel returns the NEON micro-kernel for mr rows of a 16-wide panel,
// or nil. The kernels have no column masks: sgemmJob.micro computes a
// column-edge tile aside and copies its valid columns.
func archKernel(isa ISA, nr, mr int) func(k int, a, b, c *float32, ldc int, mask uint32, acc int) {
	if isa >= NEON && nr == neonNR && mr > 0 && mr < len(sgemmNEONKernels) {
		return sgemmNEONKernels[mr]
	}
	return nil
}

// The NEON micro-tile: 6 rows × 16 columns keeps 24 accumulators, 4 B
// vectors and 2 A vectors in the 32 V registers (gen_neon_arm64.go). The
// panel width is the generic one, and it divides 32 (the column alignment
// backends/cpu uses for conv chunks at every level).
const (
	neonMR = 6
	neonNR = 16
)

// archShape returns the micro-tile (MR, NR) of the level's kernel.
func archShape(isa ISA) (mr, nr int) {
	if isa >= NEON {
		return neonMR, neonNR
	}
	return genericMR, genericNR
}
