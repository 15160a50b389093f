//go:build !noasm

package kernels

//go:noescape
func poolMaxRows512(dst, a, b *float32, n int)

//go:noescape
func poolMaxRow512(dst, v *float32, n int, offs *int, nk int, stride int)

func maxRowsArch(dst, a, b []float32) bool {
	if CurrentISA() < AVX512 || len(dst) == 0 {
		return false
	}
	poolMaxRows512(&dst[0], &a[0], &b[0], len(dst))
	return true
}

func maxPoolRowArch(dst, v []float32, offs []int, stride, maxOff int) bool {
	n := len(dst)
	if CurrentISA() < AVX512 || n == 0 || stride < 1 || stride > 2 ||
		((n+15)/16*16)*stride+maxOff+32 > len(v) {
		return false
	}
	poolMaxRow512(&dst[0], &v[0], n, &offs[0], len(offs), stride)
	return true
}
