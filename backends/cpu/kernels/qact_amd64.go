//go:build !noasm

package kernels

//go:noescape
func quantActsAVX2(nb int, x *float32, qs *int8, d *float32, nsum *int32)

// quantActsRow quantizes one row of K = 32·len(d) floats (see
// QuantizeActs): the AVX2 kernel from the AVX2 level up (AVX-512 gains
// nothing on blocks of 32), the scalar loop below it.
func quantActsRow(x []float32, qs []int8, d []float32, nsum []int32) {
	nb := len(d)
	if nb == 0 {
		return
	}
	if CurrentISA() < AVX2 {
		quantActsGeneric(x, qs, d, nsum)
		return
	}
	_, _, _ = x[nb*qBlock-1], qs[nb*qBlock-1], nsum[nb-1]
	quantActsAVX2(nb, &x[0], &qs[0], &d[0], &nsum[0])
}
