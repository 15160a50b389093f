//go:build !noasm

package kernels

import (
	"unsafe"

	"github.com/weftrt/weft/ir"
)

// The NEON half-weight GEMV (f16_arm64.s); k is a multiple of 8.

//go:noescape
func hgemvF16NEON(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)

//go:noescape
func hgemvBF16NEON(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)

// halfKernelsFor returns the NEON GEMV (several activation rows run it
// once per row: no gemm) or, below NEON, the generic Go path.
func halfKernelsFor(dt ir.DType, isa ISA) halfKernels {
	switch {
	case isa < NEON:
		return halfKernels{}
	case dt == ir.BFloat16:
		return halfKernels{gemv: hgemvBF16NEON, step: 8}
	}
	return halfKernels{gemv: hgemvF16NEON, step: 8}
}

// halfPackFor: no packed GEMM path on arm64 yet.
func halfPackFor(ir.DType, ISA) halfPacking { return halfPacking{} }
