package kernels

// genericKernel computes a rows×ncols tile of C (+)= A·B from a packed A
// panel (kcb×rows, k-major) and a packed B panel (kcb×nr) in plain Go. It
// is the only kernel on GOARCHes without assembly and the oracle-adjacent
// fallback everywhere; rows <= 14 and nr <= 32.
func genericKernel(rows, ncols, kcb, nr int, ap, bp, c []float32, ldc int, acc bool) {
	var t [14 * 32]float32
	tile := t[:rows*nr]
	for kk := 0; kk < kcb; kk++ {
		b := bp[kk*nr : kk*nr+nr]
		a := ap[kk*rows : kk*rows+rows]
		for r, av := range a {
			row := tile[r*nr : r*nr+nr]
			for j, bv := range b {
				row[j] += av * bv
			}
		}
	}
	for r := 0; r < rows; r++ {
		src := tile[r*nr : r*nr+ncols]
		dst := c[r*ldc : r*ldc+ncols]
		if acc {
			for j, v := range src {
				dst[j] += v
			}
		} else {
			copy(dst, src)
		}
	}
}
