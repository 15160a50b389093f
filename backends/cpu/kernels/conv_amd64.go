//go:build !noasm

package kernels

//go:noescape
func convEpi512(dst, src, z *float32, n int, bias float32, flags int)

//go:noescape
func convCompactRow512(dst, src, z *float32, segs *int, nseg int, bias float32, flags int)

// convCompactArch runs ConvCompactRow in assembly where the level has it.
func convCompactArch(dst, src, z []float32, segs []int, bias float32, relu bool) bool {
	if CurrentISA() < AVX512 || len(segs) == 0 {
		return false
	}
	flags := 0
	zp := &dst[0] // never read without flags&1
	if z != nil {
		flags, zp = 1, &z[0]
	}
	if relu {
		flags |= 2
	}
	convCompactRow512(&dst[0], &src[0], zp, &segs[0], len(segs)/3, bias, flags)
	return true
}

// convKernel returns the assembly implicit-GEMM kernel for the ISA level,
// panel width and row count, or nil.
func convKernel(isa ISA, nr, mr int) func(k int, a, b *float32, off *int, c *float32, ldc int, mask uint32, acc int, bias, z *float32, epi int) {
	switch {
	case isa >= AVX512 && nr == 32 && mr < len(conv512Kernels):
		return conv512Kernels[mr]
	case isa >= AVX2 && nr == 16 && mr < len(conv256Kernels):
		return conv256Kernels[mr]
	}
	return nil
}

// convEpiArch runs the epilogue in assembly where the level has it.
func convEpiArch(isa ISA, dst, src, z []float32, bias float32, relu bool) bool {
	if isa < AVX512 || len(dst) == 0 {
		return false
	}
	flags := 0
	var zp *float32
	if z != nil {
		flags, zp = 1, &z[0]
	}
	if relu {
		flags |= 2
	}
	convEpi512(&dst[0], &src[0], zp, len(dst), bias, flags)
	return true
}

//go:noescape
func convTEpi512(y *float32, ldy int, tile *float32, rows int, nch int, segs *int, nseg int, bias, z *float32, flags int)

// convTArch reports whether the transposed-orientation kernels exist at
// the current level.
func convTArch() bool { return CurrentISA() >= AVX512 }

// convTTile runs the transposed kernel for rows pixels and one 32-channel
// weight panel into tile.
func convTTile(k, rows int, a []float32, off []int, b, tile []float32) {
	convT512Kernels[rows](k, &a[0], &off[0], &b[0], &tile[0])
}

// convTStore runs the transposing epilogue (see convTEpi512).
func convTStore(y []float32, ldy int, tile []float32, rows, nch int, segs []int, bias, z []float32, relu bool) {
	flags := 0
	bp, zp := &tile[0], &y[0] // never read without their flags
	if bias != nil {
		flags, bp = 1, &bias[0]
	}
	if z != nil {
		flags, zp = flags|2, &z[0]
	}
	if relu {
		flags |= 4
	}
	convTEpi512(&y[0], ldy, &tile[0], rows, nch, &segs[0], len(segs)/2, bp, zp, flags)
}
