package kernels

// packPanelGo is the scalar form of one panel of packA: rows rows of A
// from row 0 of a (row stride lda), columns [0, kcb), stored k-major:
// d[kk*rows+r] = a[r*lda+kk].
func packPanelGo(d, a []float32, lda, rows, kcb int) {
	for r := 0; r < rows; r++ {
		src := a[r*lda : r*lda+kcb]
		for kk, v := range src {
			d[kk*rows+r] = v
		}
	}
}
