//go:build !noasm

package kernels

//go:noescape
func packPanel14x512(kb int, a *float32, lda int, d *float32)

// packPanel packs one panel as packPanelGo does; 14-row panels (the
// AVX-512 kernel's) transpose 16 columns at a time in registers.
func packPanel(d, a []float32, lda, rows, kcb int) {
	kb := kcb / 16
	if rows != 14 || kb == 0 || CurrentISA() < AVX512 {
		packPanelGo(d, a, lda, rows, kcb)
		return
	}
	_ = a[13*lda+kb*16-1] // the loads stay inside a
	_ = d[kb*16*14-1]
	packPanel14x512(kb, &a[0], lda, &d[0])
	if k := kb * 16; k < kcb {
		packPanelGo(d[k*rows:], a[k:], lda, rows, kcb-k)
	}
}
