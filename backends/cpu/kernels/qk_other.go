//go:build !amd64 || noasm

package kernels

import "github.com/weftrt/weft/ir"

// qkFunc picks the K-quant row dot product for dt (Q4_K or Q6_K).
func qkFunc(dt ir.DType, _ ISA) qkSpec {
	if dt == ir.Q4_K {
		return qkSpec{dot: dotQ4KGeneric}
	}
	return qkSpec{dot: dotQ6KGeneric}
}
