//go:build !noasm

package kernels

//go:noescape
func poolMax3S2Row512(dst, r0, r1, r2 *float32, w, ow int)

func maxPool3S2RowArch(dst, r0, r1, r2 []float32) bool {
	if CurrentISA() < AVX512 {
		return false
	}
	poolMax3S2Row512(&dst[0], &r0[0], &r1[0], &r2[0], len(r0), len(dst))
	return true
}

func maxPool3S2RowVector() bool { return CurrentISA() >= AVX512 }
