//go:build !noasm

package kernels

import "github.com/weftrt/weft/ir"

// qDotFunc picks the row dot product for the weight type and ISA level.
func qDotFunc(dt ir.DType, isa ISA) qDot {
	if dt == ir.Q4_0 {
		return dotQ4Generic
	}
	return dotQ8Generic
}
