//go:build !amd64 || noasm

package kernels

import "github.com/weftrt/weft/ir"

// qGroupFunc returns the grouped row dot product for dt at isa, or nil
// where there is none (then QMatMul uses the plain row dot).
func qGroupFunc(ir.DType, ISA) (qGroupDot, qLayout) { return nil, 0 }

// qGroup4Func returns the four-activation-row grouped dot product for dt
// at isa, or nil.
func qGroup4Func(ir.DType, ISA) qGroupDot4 { return nil }

// qGroupRowsFunc returns the many-weight-rows grouped kernel for dt at isa,
// or nil.
func qGroupRowsFunc(ir.DType, ISA) qGroupRows { return nil }

// qGroupRowsMFunc returns the many-weight-rows kernel for several
// activation rows: none without assembly.
func qGroupRowsMFunc(ir.DType, ISA, int) qGroupRowsM { return nil }
