//go:build (!amd64 && !arm64) || noasm

package kernels

import "github.com/weftrt/weft/ir"

// halfKernelsFor selects the generic Go path: no assembly here.
func halfKernelsFor(ir.DType, ISA) halfKernels { return halfKernels{} }

func halfPackFor(ir.DType, ISA) halfPacking { return halfPacking{} }
