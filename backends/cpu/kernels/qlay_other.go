//go:build !amd64 || noasm

package kernels

import "github.com/weftrt/weft/ir"

// qGroupFunc returns the grouped row dot product for dt at isa, or nil
// where there is none (then QMatMul uses the plain row dot).
func qGroupFunc(ir.DType, ISA) (qGroupDot, qLayout) { return nil, 0 }
