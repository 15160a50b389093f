//go:build !noasm

package kernels

import (
	"unsafe"

	"github.com/weftrt/weft/ir"
)

// The half-weight micro-kernels (f16_amd64.s). k is a multiple of 16
// (AVX-512) or 8 (AVX2); w holds four weight row pointers, x one (gemv) or
// four (gemm; the AVX2 gemm reads two) activation row pointers.

//go:noescape
func hgemvF16AVX512(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)

//go:noescape
func hgemvBF16AVX512(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)

//go:noescape
func hgemmF16AVX512(k int, w *[4]unsafe.Pointer, x *[4]*float32, out *[16]float32)

//go:noescape
func hgemmBF16AVX512(k int, w *[4]unsafe.Pointer, x *[4]*float32, out *[16]float32)

//go:noescape
func hgemvF16AVX2(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)

//go:noescape
func hgemvBF16AVX2(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)

//go:noescape
func hgemmF16AVX2(k int, w *[4]unsafe.Pointer, x *[4]*float32, out *[16]float32)

//go:noescape
func hgemmBF16AVX2(k int, w *[4]unsafe.Pointer, x *[4]*float32, out *[16]float32)

// halfKernelsFor returns the micro-kernels for the weight type and ISA
// level; the zero value (no gemv) selects the generic Go path.
func halfKernelsFor(dt ir.DType, isa ISA) halfKernels {
	bf := dt == ir.BFloat16
	switch {
	case isa >= AVX512 && bf:
		return halfKernels{gemvN: hgemvNBF16AVX512, gemv: hgemvBF16AVX512, gemm: hgemmBF16AVX512, mr: 4, step: 16}
	case isa >= AVX512:
		return halfKernels{gemvN: hgemvNF16AVX512, gemv: hgemvF16AVX512, gemm: hgemmF16AVX512, mr: 4, step: 16}
	case isa >= AVX2 && bf:
		return halfKernels{gemvN: hgemvNBF16AVX2, gemv: hgemvBF16AVX2, gemm: hgemmBF16AVX2, mr: 2, step: 8}
	case isa >= AVX2:
		return halfKernels{gemvN: hgemvNF16AVX2, gemv: hgemvF16AVX2, gemm: hgemmF16AVX2, mr: 2, step: 8}
	}
	return halfKernels{}
}

//go:noescape
func hpackF16AVX512(kk2 int, w unsafe.Pointer, idx *[32]int32, m0, m1 uint64, dst *float32)

//go:noescape
func hpackBF16AVX512(kk2 int, w unsafe.Pointer, idx *[32]int32, m0, m1 uint64, dst *float32)

// halfPackFor returns the panel packers for the GEMM over f32
// micro-kernels: AVX-512's for panels 32 wide, AVX2's (full panels only)
// for panels 16 wide.
func halfPackFor(dt ir.DType, isa ISA) halfPacking {
	bf := dt == ir.BFloat16
	switch {
	case isa >= AVX512 && bf:
		return halfPacking{pack: hpackBF16AVX512, packT: hpackTBF16AVX512, kb: 16}
	case isa >= AVX512:
		return halfPacking{pack: hpackF16AVX512, packT: hpackTF16AVX512, kb: 16}
	case isa >= AVX2 && bf:
		return halfPacking{packT: hpackTBF16AVX2, kb: 8}
	case isa >= AVX2:
		return halfPacking{packT: hpackTF16AVX2, kb: 8}
	}
	return halfPacking{}
}

//go:noescape
func hpackTF16AVX2(kb8 int, w unsafe.Pointer, ldw int, dst *float32)

//go:noescape
func hpackTBF16AVX2(kb8 int, w unsafe.Pointer, ldw int, dst *float32)

//go:noescape
func hgemvNF16AVX2(k int, w unsafe.Pointer, ldw, groups int, x, y *float32)

//go:noescape
func hgemvNBF16AVX2(k int, w unsafe.Pointer, ldw, groups int, x, y *float32)

//go:noescape
func hgemvNF16AVX512(k int, w unsafe.Pointer, ldw, groups int, x, y *float32)

//go:noescape
func hgemvNBF16AVX512(k int, w unsafe.Pointer, ldw, groups int, x, y *float32)

//go:noescape
func hpackTF16AVX512(kb16 int, w unsafe.Pointer, ldw int, dst *float32)

//go:noescape
func hpackTBF16AVX512(kb16 int, w unsafe.Pointer, ldw int, dst *float32)
