//go:build !noasm

package kernels

import "math"

//go:noescape
func winoIn23_512(dst *float32, ldd int, p00, p01, p10, p11 *float32, lds, n int)

//go:noescape
func winoOut23_512(y0, y1, z0, z1, src *float32, lds, n, cols int, bias float32, flags int, idx *int32)

// winoIdx holds the VPERMT2PS indices that interleave two vectors: the
// low halves, then the high halves.
var winoIdx = [32]int32{0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
	8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31}

func winoFastArch() bool { return CurrentISA() == AVX512 }

// winoIn23Arch runs WinoIn23 in assembly where the level has it.
func winoIn23Arch(dst []float32, ldd int, p00, p01, p10, p11 []float32, lds, n int) bool {
	if !winoFastArch() {
		return false
	}
	winoIn23_512(&dst[0], ldd, &p00[0], &p01[0], &p10[0], &p11[0], lds, n)
	return true
}

// winoOut23Arch runs WinoOut23 in assembly where the level has it.
func winoOut23Arch(y0, y1, z0, z1, src []float32, lds, n, cols int, bias float32, relu bool) bool {
	if !winoFastArch() {
		return false
	}
	flags := 0
	p1, pz0, pz1 := &y0[0], &y0[0], &y0[0] // never touched without their flags
	if y1 != nil {
		flags |= 4
		p1 = &y1[0]
	}
	if z0 != nil {
		flags |= 1
		pz0 = &z0[0]
		if z1 != nil {
			pz1 = &z1[0]
		}
	}
	if relu {
		flags |= 2
	}
	winoOut23_512(&y0[0], p1, pz0, pz1, &src[0], lds, n, cols, bias, flags, &winoIdx[0])
	return true
}

//go:noescape
func winoIn43_512(dst *float32, ldd int, p0, p1, p2, p3 *float32, lds, n int, consts *float32)

//go:noescape
func winoOut43_512(ys, zs **float32, src *float32, lds, n, cols int, bias float32, flags int, consts *float32, idx *int32)

// winoConsts43 holds the transforms' constants: 2, 4, 5 (input side);
// 2, 4, 8, then the output floors 0 (ReLU) and -Inf (none).
var (
	winoIn43Consts  = [3]float32{2, 4, 5}
	winoOut43Consts = [5]float32{2, 4, 8, 0, float32(math.Inf(-1))}
)

// winoIn43Arch runs WinoIn43 in assembly where the level has it.
func winoIn43Arch(dst []float32, ldd int, planes *[4][]float32, lds, n int) bool {
	if !winoFastArch() {
		return false
	}
	winoIn43_512(&dst[0], ldd, &planes[0][0], &planes[1][0], &planes[2][0], &planes[3][0], lds, n, &winoIn43Consts[0])
	return true
}

// winoOut43Arch runs WinoOut43 in assembly where the level has it.
func winoOut43Arch(y, z *[4][]float32, src []float32, lds, n, cols int, bias float32, relu bool) bool {
	if !winoFastArch() {
		return false
	}
	var ys, zs [4]*float32
	flags := 0
	for r := range 4 {
		ys[r], zs[r] = &y[0][0], &y[0][0] // never touched: the row's flag or K7 is off
		if y[r] != nil {
			ys[r] = &y[r][0]
			flags |= 16 << r
			if z[r] != nil {
				zs[r] = &z[r][0]
				flags |= 1
			}
		}
	}
	if relu {
		flags |= 2
	}
	winoOut43_512(&ys[0], &zs[0], &src[0], lds, n, cols, bias, flags, &winoOut43Consts[0], &winoIdx[0])
	return true
}
