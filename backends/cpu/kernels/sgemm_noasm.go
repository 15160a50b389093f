//go:build (!amd64 && !arm64) || noasm

package kernels

func archKernel(ISA, int, int) func(k int, a, b, c *float32, ldc int, mask uint32, acc int) {
	return nil
}

func archShape(ISA) (mr, nr int) { return genericMR, genericNR }
