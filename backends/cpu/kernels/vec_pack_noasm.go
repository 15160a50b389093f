//go:build !amd64 || noasm

package kernels

// packPanel packs one panel of packA (the scalar form).
func packPanel(d, a []float32, lda, rows, kcb int) { packPanelGo(d, a, lda, rows, kcb) }
