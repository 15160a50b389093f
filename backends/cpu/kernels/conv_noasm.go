//go:build !amd64 || noasm

package kernels

func convKernel(ISA, int, int) func(k int, a, b *float32, off *int, c *float32, ldc int, mask uint32, acc int, bias, z *float32, epi int) {
	return nil
}

func convEpiArch(ISA, []float32, []float32, []float32, float32, bool) bool { return false }

func convCompactArch([]float32, []float32, []float32, []int, float32, bool) bool { return false }

func convTArch() bool { return false }

func convTTile(k, rows int, a []float32, off []int, b, tile []float32) {
	panic("kernels: no transposed conv kernel on this architecture")
}

func convTStore(y []float32, ldy int, tile []float32, rows, nch int, segs []int, bias, z []float32, relu bool) {
	panic("kernels: no transposed conv kernel on this architecture")
}
