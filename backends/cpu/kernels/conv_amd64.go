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

// convKernelHalf returns the mr×16 variant of the AVX-512 kernel (for a
// last panel of at most 16 columns), or nil.
func convKernelHalf(isa ISA, nr, mr int) func(k int, a, b *float32, off *int, c *float32, ldc int, mask uint32, acc int, bias, z *float32, epi int) {
	if isa >= AVX512 && nr == 32 && mr < len(conv512HalfKernels) {
		return conv512HalfKernels[mr]
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

// convTKernel returns the transposed kernel for mr pixels, or nil.
func convTKernel(isa ISA, mr int) func(k int, w, b *float32, off *int, c *float32, acc int, y *float32, ldy, d0 int, pmask uint32, nch int, bias, z *float32, epi, second int) {
	if isa >= AVX512 && mr > 0 && mr < len(convT512Kernels) {
		return convT512Kernels[mr]
	}
	return nil
}

//go:noescape
func padCopyRows512(dst *float32, ldd int, src *float32, lds int, n, lpad, w, cs int, even *int32, tail uint32)

// evenIdx picks the even floats of two vectors (VPERMT2PS).
var evenIdx = [16]int32{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}

// padCopyRowsArch runs PadCopyRows in assembly where the level has it
// (column strides 1 and 2).
func padCopyRowsArch(dst []float32, ldd int, src []float32, lds, n, lpad, w, cs int) bool {
	if CurrentISA() < AVX512 || cs > 2 {
		return false
	}
	var tail uint32
	if t := w % 16; t > 0 {
		tail = uint32(uint64(1)<<(2*t-1) - 1)
	}
	padCopyRows512(&dst[0], ldd, &src[0], lds, n, lpad, w, cs, &evenIdx[0], tail)
	return true
}
