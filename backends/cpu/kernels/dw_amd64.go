//go:build !noasm

package kernels

//go:noescape
func dw9x512(y *float32, rows, ow int, b *float32, wq int, off *int, w *float32, bias float32, relu int)

// dwArch runs DepthwiseRows in assembly where the level and tap count
// have a kernel.
func dwArch(y []float32, rows, ow int, b []float32, wq int, off []int, w []float32, bias float32, relu bool) bool {
	if CurrentISA() < AVX512 || len(off) != 9 {
		return false
	}
	r := 0
	if relu {
		r = 1
	}
	dw9x512(&y[0], rows, ow, &b[0], wq, &off[0], &w[0], bias, r)
	return true
}

func dwFast(taps int) bool { return CurrentISA() >= AVX512 && taps == 9 }
