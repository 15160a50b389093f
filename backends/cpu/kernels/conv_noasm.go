//go:build !amd64 || noasm

package kernels

func convKernel(ISA, int, int) func(k int, a, b *float32, off *int, c *float32, ldc int, mask uint32, acc int, bias, z *float32, epi int) {
	return nil
}

func convKernelHalf(ISA, int, int) func(k int, a, b *float32, off *int, c *float32, ldc int, mask uint32, acc int, bias, z *float32, epi int) {
	return nil
}

func convEpiArch(ISA, []float32, []float32, []float32, float32, bool) bool { return false }

func convCompactArch([]float32, []float32, []float32, []int, float32, bool) bool { return false }

func convTKernel(ISA, int) func(k int, w, b *float32, off *int, c *float32, acc int, y *float32, ldy, d0 int, pmask uint32, nch int, bias, z *float32, epi, second int) {
	return nil
}

func padCopyRowsArch([]float32, int, []float32, int, int, int, int, int) bool { return false }
