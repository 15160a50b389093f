//go:build amd64 && !noasm

package kernels

//go:noescape
func dotQ4P512rows(nr int, nb int, w *byte, rb int, lay *byte, y *float32)

//go:noescape
func dotQ4P512x4rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)

//go:noescape
func dotQ4P512x8rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)

func init() {
	if BestISA() < AVX512 || !hasVNNI {
		return
	}
	q4pKernels.x1 = func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int) {
		if q4pCheck(1, nr, nb, w, rb, lay, ld, y, ldy) {
			dotQ4P512rows(nr, nb, &w[0], rb, &lay[0], &y[0])
		}
	}
	q4pKernels.x4 = func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int) {
		if q4pCheck(4, nr, nb, w, rb, lay, ld, y, ldy) {
			dotQ4P512x4rows(nr, nb, &w[0], rb, &lay[0], ld, &y[0], ldy)
		}
	}
	q4pKernels.x8 = func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int) {
		if q4pCheck(8, nr, nb, w, rb, lay, ld, y, ldy) {
			dotQ4P512x8rows(nr, nb, &w[0], rb, &lay[0], ld, &y[0], ldy)
		}
	}
}
