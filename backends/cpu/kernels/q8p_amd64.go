//go:build !noasm

package kernels

//go:noescape
func dotQ8P512rows(nr int, nb int, w *byte, rb int, lay *byte, y *float32, pf int)

//go:noescape
func dotQ8P512x4rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)

//go:noescape
func dotQ8P512x8rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)

func init() {
	if BestISA() < AVX512 || !hasVNNI {
		return
	}
	q8pKernels[AVX512] = q4pSet{
		x1: func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int, pf Prefetch) {
			if q4pCheck(1, nr, nb, q8pBlock, w, rb, lay, ld, y, ldy) {
				dotQ8P512rows(nr, nb, &w[0], rb, &lay[0], &y[0], q4pDist(pf))
			}
		},
		x4: func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int, _ Prefetch) {
			if q4pCheck(4, nr, nb, q8pBlock, w, rb, lay, ld, y, ldy) {
				dotQ8P512x4rows(nr, nb, &w[0], rb, &lay[0], ld, &y[0], ldy)
			}
		},
		x8: func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int, _ Prefetch) {
			if q4pCheck(8, nr, nb, q8pBlock, w, rb, lay, ld, y, ldy) {
				dotQ8P512x8rows(nr, nb, &w[0], rb, &lay[0], ld, &y[0], ldy)
			}
		},
	}
}
