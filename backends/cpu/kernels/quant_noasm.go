//go:build (!amd64 && !arm64) || noasm

package kernels

import "github.com/weftrt/weft/ir"

func qDotFunc(dt ir.DType, _ ISA) qDot {
	if dt == ir.Q4_0 {
		return dotQ4Generic
	}
	return dotQ8Generic
}

func qDot4Func(ir.DType, ISA) qDot4 { return nil }

// qDotRowsFunc returns the many-weight-rows form of qDotFunc's kernel:
// none here.
func qDotRowsFunc(ir.DType, ISA) qDotRows { return nil }

// qDotRows4Func returns the four-activation-row form of qDotRowsFunc's
// kernel: none here.
func qDotRows4Func(ir.DType, ISA) qDotRows4 { return nil }
